package policy

import (
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// TestPreemptStep checks asrpt-preempt's step (preempt.go) on one 8-GPU
// node: a long job that opted in runs from 0; a short job arrives at 3000
// and cannot start beside it. Whether the long job is stopped at the pass
// at `at` depends on its opt-in, its exemption, its earlier preemptions,
// the pass budget, whether it is wider than the short job, and whether
// what it has left is more than PreemptMargin times the short job.
func TestPreemptStep(t *testing.T) {
	for _, tc := range []struct {
		name        string
		preemptible bool
		longGPUs    int
		longPred    float64 // the long job's prediction, seconds
		shortGPUs   int
		shortPred   float64
		earlier     int // the long job's earlier preemptions
		budget      int
		at          float64
		want        []string // decisions of the pass at `at`: "-id" preempts, "+id" starts
	}{
		{"stops the long job", true, 8, 100000, 8, 100, 0, 4, 4000, []string{"-long", "+short"}},
		{"not opted in", false, 8, 100000, 8, 100, 0, 4, 4000, nil},
		{"within its exemption", true, 8, 100000, 8, 100, 0, 4, 3500, nil},
		{"preempted enough already", true, 8, 100000, 8, 100, DefaultMaxPreemptions, 4, 4000, nil},
		{"no budget", true, 8, 100000, 8, 100, 0, 0, 4000, nil},
		{"room beside it", true, 4, 100000, 4, 100, 0, 4, 4000, []string{"+short"}},
		{"wider than the job it would make way for", true, 8, 100000, 4, 100, 0, 4, 4000, nil},
		{"nearly done", true, 8, 4100, 8, 1000, 0, 4, 4000, nil},
		{"ahead, but within the margin", true, 8, 4300, 8, 100, 0, 4, 4000, nil},
		{"outran its prediction: its service counts", true, 8, 1000, 8, 100, 0, 4, 4000, []string{"-long", "+short"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			p.PreemptBudget = tc.budget
			env, pol, mk := preemptPolicy(t, p)
			free := placement.NewFree(env.Cluster)
			long := mk("long", 0, tc.longGPUs, tc.longPred, 0)
			long.Preemptible = tc.preemptible
			pol.Arrive(0, long)
			if got := decided(pol.Schedule(0, free)); !equal(got, []string{"+long"}) {
				t.Fatalf("pass at 0: %v, want the long job started", got)
			}
			long.Preemptions = tc.earlier // as if stopped before this run
			short := mk("short", 1, tc.shortGPUs, tc.shortPred, 3000)
			pol.Arrive(3000, short)
			if got := decided(pol.Schedule(3000, free)); tc.name != "room beside it" && len(got) != 0 {
				t.Fatalf("pass at 3000: %v, want nothing (within the exemption)", got)
			}
			if tc.name == "room beside it" {
				return // it started at 3000 already
			}
			got := decided(pol.Schedule(tc.at, free))
			if !equal(got, tc.want) {
				t.Fatalf("pass at %v: %v, want %v", tc.at, got, tc.want)
			}
			if len(tc.want) == 2 {
				if !long.Pending() || long.Preemptions != tc.earlier+1 {
					t.Errorf("long job: pending %v, preemptions %d: want pending, %d", long.Pending(), long.Preemptions, tc.earlier+1)
				}
				if want := 8 - tc.shortGPUs; free.Total() != want {
					t.Errorf("free GPUs %d after the pass, want %d", free.Total(), want)
				}
				// The short job ends: the long one restarts, expected to
				// end after what it had left.
				if err := free.Give(&short.Placement); err != nil {
					t.Fatal(err)
				}
				pol.Finish(tc.at+100, short)
				got := decided(pol.Schedule(tc.at+100, free))
				if !equal(got, []string{"+long"}) {
					t.Fatalf("pass after the short job: %v, want the long job restarted", got)
				}
				ran := tc.at
				wantEnd := tc.at + 100 + max(tc.longPred-ran, minRemaining)
				if long.end != wantEnd {
					t.Errorf("restarted long job's predicted end %v, want %v", long.end, wantEnd)
				}
			}
		})
	}
}

// decided names a pass's decisions: "-id" for a preemption, "+id" for a
// start.
func decided(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		if d.Preempt {
			out = append(out, "-"+d.Task.ID)
		} else {
			out = append(out, "+"+d.Task.ID)
		}
	}
	return out
}

// TestAdopt: a waiting job someone else started joins the running jobs
// (off the waiting order, at its start and placement) and can then be
// preempted; a job the policy does not hold as waiting is refused.
func TestAdopt(t *testing.T) {
	p := DefaultParams()
	env, pol, mk := preemptPolicy(t, p)
	long := mk("long", 0, 8, 100000, 0)
	long.Preemptible = true
	pol.Arrive(0, long)
	free := placement.NewFree(env.Cluster)
	all := placement.Placement{Slots: []placement.Slot{{Node: 0, GPUs: 0xff}}}
	if err := free.Take(&all); err != nil {
		t.Fatal(err)
	}
	ad := pol.(Adopter)
	if !ad.Adopt(10, long, 5, all) || !long.running || long.Start != 5 || len(pol.Pending()) != 0 {
		t.Fatalf("adopted: running %v start %v pending %d", long.running, long.Start, len(pol.Pending()))
	}
	if ad.Adopt(11, long, 11, all) {
		t.Error("adopted twice")
	}
	gone := mk("gone", 1, 1, 10, 10)
	pol.Arrive(10, gone)
	pol.Withdraw(10, gone)
	if ad.Adopt(12, gone, 12, placement.Placement{}) {
		t.Error("adopted a withdrawn job")
	}
	short := mk("short", 2, 8, 100, 3000)
	pol.Arrive(3000, short)
	var got []string
	for _, d := range pol.Schedule(4000, free) {
		if d.Preempt {
			got = append(got, "-"+d.Task.ID)
		} else {
			got = append(got, "+"+d.Task.ID)
		}
	}
	if len(got) != 2 || got[0] != "-long" || got[1] != "+short" {
		t.Errorf("decisions %v, want [-long +short]", got)
	}
}

// TestRequeueDelay: a stopped job cannot start again for RequeueDelay
// seconds, even on free GPUs, and the policy's next event is the end of
// that hold.
func TestRequeueDelay(t *testing.T) {
	p := DefaultParams()
	p.RequeueDelay = 121
	env, pol, mk := preemptPolicy(t, p)
	free := placement.NewFree(env.Cluster)
	long := mk("long", 0, 8, 100000, 0)
	long.Preemptible = true
	pol.Arrive(0, long)
	pol.Schedule(1, free)
	if !long.running {
		t.Fatal("long job not started")
	}
	short := mk("short", 1, 8, 100, 3000)
	pol.Arrive(3000, short)
	if ds := pol.Schedule(4000, free); len(ds) != 2 || !ds[0].Preempt {
		t.Fatalf("decisions %+v", ds)
	}
	// The short job ends at once; its GPUs are free, the long job held.
	if err := free.Give(&short.Placement); err != nil {
		t.Fatal(err)
	}
	pol.Finish(4001, short)
	if ds := pol.Schedule(4001, free); len(ds) != 0 {
		t.Errorf("restarted within the hold: %+v", ds)
	}
	if next := pol.NextEvent(4001); next < 4121 || next > 4122 {
		t.Errorf("next event %v, want the hold's end 4121", next)
	}
	if ds := pol.Schedule(4122, free); len(ds) != 1 || ds[0].Task != long {
		t.Errorf("after the hold: %+v", ds)
	}
}

// preemptPolicy returns asrpt-preempt with params p on one 8-GPU node, its
// Env, and a maker of tasks (id, sequence, GPUs, run time predicted
// exactly, submit time).
func preemptPolicy(t *testing.T, p Params) (*Env, Policy, func(id string, seq, gpus int, d, submit float64) *Task) {
	t.Helper()
	env := NewEnv(cluster.Uniform(1, 8), p)
	pol, err := New("asrpt-preempt", env)
	if err != nil {
		t.Fatal(err)
	}
	return env, pol, func(id string, seq, gpus int, d, submit float64) *Task {
		task, err := env.NewTask(&job.Job{ID: id, GPUs: gpus, RunTime: d, Submit: submit}, seq, prediction.Estimate{Seconds: d, Known: true})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
}
