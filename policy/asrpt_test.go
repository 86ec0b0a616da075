package policy

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// fullFree returns the free pool of env's one 8-GPU node with every GPU
// busy, so that nothing starts.
func fullFree(t *testing.T, env *Env) *placement.Free {
	t.Helper()
	free := placement.NewFree(env.Cluster)
	if err := free.Take(&placement.Placement{Slots: []placement.Slot{{Node: 0, GPUs: 0xff}}}); err != nil {
		t.Fatal(err)
	}
	return free
}

// TestRevisedReleaseQueueBySize checks design §5.1: released jobs wait in
// order of predicted virtual size, not release order; paper mode keeps
// release order.
func TestRevisedReleaseQueueBySize(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	// Sizes (g/G)·d: a 8·100/8 = 100, b 1·400/8 = 50, c 4·40/8 = 20. All are
	// released by t = 1000; release order is c, b, a (SRPT on A1).
	spec := [][2]float64{{8, 100}, {1, 400}, {4, 40}}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"asrpt", []string{"c", "b", "a"}},
		{"asrpt-paper", []string{"c", "b", "a"}},
	} {
		pol, _ := New(tc.name, env)
		full := fullFree(t, env)
		for _, task := range newTasks(t, env, spec) {
			pol.Arrive(0, task)
		}
		pol.Schedule(1000, full)
		if got := ids(pol.Pending()); !equal(got, tc.want) {
			t.Errorf("%s: pending %v, want %v", tc.name, got, tc.want)
		}
	}
	// A job released early but large goes behind a later, smaller one.
	pol, _ := New("asrpt", env)
	full := fullFree(t, env)
	ts := newTasks(t, env, [][2]float64{{8, 80}, {1, 8}})
	pol.Arrive(0, ts[0])
	pol.Schedule(200, full) // a released at 80
	ts[1].Submit = 200
	pol.Arrive(200, ts[1])
	pol.Schedule(300, full) // b released at 201
	if got := ids(pol.Pending()); !equal(got, []string{"b", "a"}) {
		t.Errorf("asrpt: pending %v, want [b a] (smaller released job first)", got)
	}
}

// TestUpdate checks design §5.3: a released job is re-keyed by its new
// size; an unreleased job's remaining virtual work moves by the change;
// paper mode keeps the prediction made at submit.
func TestUpdate(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	pol, _ := New("asrpt", env)
	full := fullFree(t, env)
	ts := newTasks(t, env, [][2]float64{{8, 10}, {8, 20}, {8, 1000}})
	for _, task := range ts {
		task.Submit = 0
		pol.Arrive(0, task)
	}
	pol.Schedule(30, full) // a and b released (at 10 and 30); c not begun
	if got := ids(pol.Pending()); !equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("pending %v, want [a b c]", got)
	}
	upd := pol.(Updater)
	upd.Update(30, ts[0], prediction.Estimate{Seconds: 50, Known: true}) // a: size 10 → 50
	if got := ids(pol.Pending()); !equal(got, []string{"b", "a", "c"}) {
		t.Errorf("after re-keying a: pending %v, want [b a c]", got)
	}
	// c: size 1000 → 100, remaining 1000 + 100 − 1000 = 100: released at 130.
	upd.Update(30, ts[2], prediction.Estimate{Seconds: 100, Known: true})
	if got, want := ts[2].VirtualRemaining(), 100.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("c's remaining virtual work %v, want %v", got, want)
	}
	if next := pol.NextEvent(30); math.Abs(next-130) > 1e-9 {
		t.Errorf("next release at %v, want 130", next)
	}
	// A shrink below the work done (10 s by t = 40) releases at once.
	upd.Update(40, ts[2], prediction.Estimate{Seconds: 1, Known: true})
	if !ts[2].released {
		t.Errorf("c not released after its size fell below the work done")
	}

	// A withdrawn job is not put back.
	pol.Withdraw(40, ts[1])
	upd.Update(40, ts[1], prediction.Estimate{Seconds: 5, Known: true})
	for _, p := range pol.Pending() {
		if p == ts[1] {
			t.Errorf("Update put a withdrawn job back")
		}
	}

	paper, _ := New("asrpt-paper", env)
	ps := newTasks(t, env, [][2]float64{{8, 1000}})
	paper.Arrive(0, ps[0])
	paper.(Updater).Update(10, ps[0], prediction.Estimate{Seconds: 1, Known: true})
	if got := ps[0].Est.Seconds; got != 1000 {
		t.Errorf("paper mode changed the prediction to %v", got)
	}
}

// TestReservationsProtectTheFirstK checks design §5.2 on one 8-GPU node
// where a running 4-GPU job is predicted to end at 100: the wide 8-GPU job
// at the head of the release queue gets the window [100, 110); a 2-GPU job
// that ends by 100 backfills, one that would run into the window waits —
// unless K = 0, where nothing holds a window.
func TestReservationsProtectTheFirstK(t *testing.T) {
	for _, tc := range []struct {
		k       int
		started []string
	}{
		{1, []string{"short"}},
		{0, []string{"short", "long"}},
	} {
		p := DefaultParams()
		p.Reservations = tc.k
		env := NewEnv(cluster.Uniform(1, 8), p)
		pol, _ := New("asrpt", env)
		free := placement.NewFree(env.Cluster)
		run, err := env.NewTask(&job.Job{ID: "run", GPUs: 4, RunTime: 100}, 99, prediction.Estimate{Seconds: 100, Known: true})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := env.Placer.Place(free, 4, nil)
		if err != nil {
			t.Fatal(err)
		}
		pol.(*asrpt).start(0, run, pl, 1, free)
		pol.(*asrpt).run.add(run)
		mk := func(id string, seq, gpus int, d float64) *Task {
			task, err := env.NewTask(&job.Job{ID: id, GPUs: gpus, RunTime: d}, seq, prediction.Estimate{Seconds: d, Known: true})
			if err != nil {
				t.Fatal(err)
			}
			return task
		}
		// Virtual sizes 10, 12.5 and 125 s: wide and short are released
		// by 50, long is not (it only backfills).
		for _, task := range []*Task{mk("wide", 0, 8, 10), mk("short", 1, 2, 50), mk("long", 2, 2, 500)} {
			pol.Arrive(0, task)
		}
		var got []string
		for _, d := range pol.Schedule(50, free) {
			got = append(got, d.Task.ID)
		}
		if !equal(got, tc.started) {
			t.Errorf("K=%d: started %v, want %v", tc.k, got, tc.started)
		}
	}
}

// TestUnseenSizedByClass checks design §5.5: once unseenMinSamples jobs
// of a GPU-count class that were unseen at submit have finished, a new
// unseen job of that class is sized by their mean run time (capped by its
// time limit); another class still follows the unseen setting (first: 0).
func TestUnseenSizedByClass(t *testing.T) {
	p := DefaultParams()
	p.Unseen = UnseenFirst
	env := NewEnv(cluster.Uniform(1, 8), p)
	pol, _ := New("asrpt", env)
	a := pol.(*asrpt)
	for i := range unseenMinSamples {
		task, err := env.NewTask(&job.Job{ID: "u", GPUs: 1, RunTime: 100}, i, prediction.Estimate{Seconds: 3600})
		if err != nil {
			t.Fatal(err)
		}
		task.Start, task.Alpha = 0, 1
		a.Finish(float64(50+100*(i%2)), task) // runs of 50 and 150 s: mean 100
	}
	one, _ := env.NewTask(&job.Job{ID: "one", GPUs: 1, RunTime: 7, TimeLimit: 80}, 100, prediction.Estimate{Seconds: 3600})
	wide, _ := env.NewTask(&job.Job{ID: "wide", GPUs: 4, RunTime: 7}, 101, prediction.Estimate{Seconds: 3600})
	pol.Arrive(0, one)
	pol.Arrive(0, wide)
	if one.Est.Seconds != 80 || !one.Est.Known {
		t.Errorf("1-GPU unseen job: estimate %+v, want the class mean 100 capped by its 80 s limit", one.Est)
	}
	if wide.Est.Known || wide.VirtualRemaining() != 0 && !wide.released {
		t.Errorf("4-GPU unseen job: estimate %+v, remaining %v: want unseen, size 0", wide.Est, wide.VirtualRemaining())
	}
}
