package policy

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// TestWaitBound checks that a job waiting past the wait bound moves to the
// front of the A-SRPT order, that NextEvent wakes the policy when it is
// due, that overdue jobs keep the order they became overdue in whatever
// their predictions, and that paper mode ignores the bound.
func TestWaitBound(t *testing.T) {
	params := DefaultParams()
	params.WaitLimit = 1000
	env := NewEnv(cluster.Uniform(1, 8), params)
	// a: large and long (size 8·5000/8 = 5000), b and c short. Without the
	// bound a is last.
	spec := [][2]float64{{8, 5000}, {8, 5000}, {1, 10}, {1, 20}}
	pol, _ := New("asrpt", env)
	full := fullFree(t, env)
	ts := newTasks(t, env, spec)
	for _, task := range ts {
		pol.Arrive(task.Submit, task)
	}
	if got := pol.NextEvent(3); got > 1000 {
		t.Fatalf("NextEvent = %v, want ≤ 1000 (a due at 1000)", got)
	}
	pol.Schedule(999, full)
	if got := ids(pol.Pending()); got[0] == "a" {
		t.Fatalf("pending %v before the bound: a should not lead", got)
	}
	pol.Schedule(1001.5, full) // a due at 1000, b at 1001, c at 1002
	if got := ids(pol.Pending()); !equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("pending %v, want [a b c d] (a, b overdue in due order, then by size)", got)
	}
	// A new prediction does not move an overdue job; b stays behind a
	// though it is now predicted shorter.
	pol.(Updater).Update(1001.5, ts[1], prediction.Estimate{Seconds: 1, Known: true})
	pol.(Updater).Update(1001.5, ts[0], prediction.Estimate{Seconds: 99999, Known: true})
	if got := ids(pol.Pending()); !equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("after Update: pending %v, want [a b c d]", got)
	}
	// Withdrawing an overdue job removes it; the rest keep their order.
	pol.Withdraw(1002.5, ts[0])
	if got := ids(pol.Pending()); !equal(got, []string{"b", "c", "d"}) {
		t.Fatalf("after Withdraw: pending %v, want [b c d]", got)
	}
	if got := pol.NextEvent(1002.5); got != 1003 {
		t.Fatalf("NextEvent = %v, want 1003 (d due)", got)
	}
	pol.Schedule(1003, full)
	if got := pol.NextEvent(1003); !math.IsInf(got, 1) && got <= 1003 {
		t.Fatalf("NextEvent after every job is overdue = %v", got)
	}

	// The relative bound: factor 2 of max(prediction, MinWaitBase).
	params = DefaultParams()
	params.WaitFactor = 2
	env = NewEnv(cluster.Uniform(1, 8), params)
	pol, _ = New("asrpt", env)
	ts = newTasks(t, env, [][2]float64{{8, 5000}, {1, 10}})
	for _, task := range ts {
		pol.Arrive(task.Submit, task)
	}
	if got, want := pol.(*asrpt).wait.next(), 2.0*MinWaitBase+1; got != want {
		t.Fatalf("relative bound: next due %v, want %v (b due at 1 + 2·%d)", got, want, MinWaitBase)
	}
	pol.Schedule(2*MinWaitBase+1, fullFree(t, env))
	if got, want := pol.(*asrpt).wait.next(), 2*5000.0; got != want {
		t.Fatalf("relative bound: next due %v, want %v (a due at 2·5000)", got, want)
	}
	if got := ids(pol.Pending()); !equal(got, []string{"b", "a"}) {
		t.Fatalf("relative bound: pending %v, want [b a]", got)
	}

	// Paper mode keeps the paper's rule: no bound.
	params.WaitLimit, params.WaitFactor = 10, 0
	env = NewEnv(cluster.Uniform(1, 8), params)
	pol, _ = New("asrpt-paper", env)
	ts = newTasks(t, env, spec)
	for _, task := range ts {
		pol.Arrive(task.Submit, task)
	}
	pol.Schedule(5000, fullFree(t, env))
	if got := ids(pol.Pending()); got[0] == "a" {
		t.Errorf("asrpt-paper: pending %v: the wait bound applies to the revised dispatch only", got)
	}
}

// TestWaitScale checks the relative bound: after starts that waited 1000
// s on average, a job that has waited WaitScale·1000 s is overdue, and not
// before; the bound follows the recent waits.
func TestWaitScale(t *testing.T) {
	params := DefaultParams()
	params.WaitScale = 3
	env := NewEnv(cluster.Uniform(1, 8), params)
	pol, _ := New("asrpt", env)
	a := pol.(*asrpt)
	// Two 8-GPU jobs that start after waiting 1000 s each, one at a time.
	warm := newTasks(t, env, [][2]float64{{8, 10}, {8, 10}})
	free := placement.NewFree(env.Cluster)
	for i, w := range warm {
		w.Submit = float64(i) * 2000
		pol.Arrive(w.Submit, w)
		full := fullFree(t, env)
		pol.Schedule(w.Submit+999, full)
		ds := pol.Schedule(w.Submit+1000, free)
		if len(ds) != 1 {
			t.Fatalf("warm-up %d: %d starts", i, len(ds))
		}
		if err := free.Give(&w.Placement); err != nil {
			t.Fatal(err)
		}
		pol.Finish(w.Submit+1010, w)
	}
	if got := a.wait.relative(); got != 3000 {
		t.Fatalf("relative bound %v, want 3·1000", got)
	}
	// A large job and a small one arrive; the large one is last by size
	// until it has waited 3000 s.
	ts := newTasks(t, env, [][2]float64{{8, 5000}, {1, 10}, {1, 20}})
	for i, task := range ts {
		task.Submit = 10000 + float64(i)
		pol.Arrive(task.Submit, task)
	}
	if got := a.wait.next(); got != 13000 {
		t.Fatalf("next due %v, want 13000", got)
	}
	full := fullFree(t, env)
	pol.Schedule(12999, full)
	if got := ids(pol.Pending()); got[0] == "a" {
		t.Fatalf("pending %v before the bound", got)
	}
	pol.Schedule(13000, full)
	if got := ids(pol.Pending()); got[0] != "a" {
		t.Fatalf("pending %v at the bound, want a first", got)
	}
}

// TestOverdueShare checks the cap on the front: overdue jobs move to the
// front while they ask for at most OverdueShare·G GPUs together, the
// others keep their SRPT place until a job at the front starts or leaves,
// then move in the order they became overdue; a job larger than the cap
// moves when the front is empty, and starts leave nothing counted.
func TestOverdueShare(t *testing.T) {
	params := DefaultParams()
	params.WaitLimit = 1000
	params.OverdueShare = 0.5 // 4 of 8 GPUs
	env := NewEnv(cluster.Uniform(1, 8), params)
	pol, _ := New("asrpt", env)
	a := pol.(*asrpt)
	// Sizes (g/G)·d: a 2500, b 2000, c 1.25, d 2.5; due at 1000..1003.
	ts := newTasks(t, env, [][2]float64{{4, 5000}, {4, 4000}, {1, 10}, {1, 20}})
	for _, task := range ts {
		pol.Arrive(task.Submit, task)
	}
	full := fullFree(t, env)
	pol.Schedule(1001.5, full)
	if got := ids(pol.Pending()); !equal(got, []string{"a", "c", "d", "b"}) {
		t.Fatalf("pending %v, want [a c d b] (a at the front, b overdue past the cap keeps its place)", got)
	}
	pol.Schedule(1003.5, full) // c and d overdue too: late behind b
	if got := ids(pol.Pending()); !equal(got, []string{"a", "c", "d", "b"}) {
		t.Fatalf("pending %v, want [a c d b]", got)
	}
	if a.frontGPUs != 4 || a.late.Len() != 3 {
		t.Fatalf("front %d GPUs, %d late; want 4 and 3", a.frontGPUs, a.late.Len())
	}
	// a leaves: b, the earliest overdue, fills the front; c would exceed it.
	pol.Withdraw(1004, ts[0])
	if got := ids(pol.Pending()); !equal(got, []string{"b", "c", "d"}) {
		t.Fatalf("after Withdraw: pending %v, want [b c d]", got)
	}
	if a.frontGPUs != 4 || a.late.Len() != 2 {
		t.Fatalf("after Withdraw: front %d GPUs, %d late; want 4 and 2", a.frontGPUs, a.late.Len())
	}
	// Everything starts on an empty node; nothing stays counted.
	if ds := pol.Schedule(1005, placement.NewFree(env.Cluster)); len(ds) != 3 {
		t.Fatalf("%d starts, want 3", len(ds))
	}
	if a.frontGPUs != 0 || a.late.Len() != 0 || len(pol.Pending()) != 0 {
		t.Fatalf("after the starts: front %d GPUs, %d late, %d pending; want none", a.frontGPUs, a.late.Len(), len(pol.Pending()))
	}
	for _, task := range ts[1:] {
		if task.overdue || task.late {
			t.Errorf("%s started still marked overdue %v, late %v", task.Job.ID, task.overdue, task.late)
		}
	}

	// A job larger than the cap moves to the front when the front is empty.
	params.OverdueShare = 0.25 // 2 of 8 GPUs
	env = NewEnv(cluster.Uniform(1, 8), params)
	pol, _ = New("asrpt", env)
	ts = newTasks(t, env, [][2]float64{{8, 5000}, {1, 10}})
	for _, task := range ts {
		pol.Arrive(task.Submit, task)
	}
	pol.Schedule(1000, fullFree(t, env))
	if got := ids(pol.Pending()); !equal(got, []string{"a", "b"}) {
		t.Fatalf("cap 2 GPUs: pending %v, want [a b] (an 8-GPU job alone at the front)", got)
	}
}
