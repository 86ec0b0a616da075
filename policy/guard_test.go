package policy

import (
	"fmt"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// TestAccountGuard: a wide job kept waiting while its account's later,
// smaller jobs start past it moves to the front, as overdue, once they
// sum to AccountGuard times its own predicted GPU-seconds; another
// account's jobs do not count, and without a guard nothing moves.
func TestAccountGuard(t *testing.T) {
	for _, tc := range []struct {
		guard     float64
		otherAcct bool // the small jobs belong to another account
		overdueAt int  // small starts after which the wide job is overdue; 0: never
	}{
		{guard: 1, overdueAt: 8}, // 8 × (1 GPU × 100 s) = 1 × (8 GPUs × 100 s)
		{guard: 2, overdueAt: 16},
		{guard: 1, otherAcct: true},
		{guard: 0},
	} {
		t.Run(fmt.Sprintf("guard=%g/other=%v", tc.guard, tc.otherAcct), func(t *testing.T) {
			params := DefaultParams()
			params.AccountGuard = tc.guard
			env := NewEnv(cluster.Uniform(2, 4), params)
			pol, err := New("asrpt", env)
			if err != nil {
				t.Fatal(err)
			}
			a := pol.(*asrpt)
			free := placement.NewFree(env.Cluster)
			seq := 0
			task := func(id, account string, submit float64, gpus int, run float64) *Task {
				j := &job.Job{ID: id, User: "u", Account: account, Submit: submit, GPUs: gpus, RunTime: run, TimeLimit: run}
				tk, err := env.NewTask(j, seq, prediction.Estimate{Seconds: run, Known: true})
				if err != nil {
					t.Fatal(err)
				}
				seq++
				return tk
			}
			blocker := task("blocker", "x", 0, 4, 1e6)
			pol.Arrive(0, blocker)
			if ds := pol.Schedule(0, free); len(ds) != 1 {
				t.Fatalf("blocker did not start: %v", ds)
			}
			wide := task("wide", "a", 1, 8, 100)
			pol.Arrive(1, wide)
			pol.Schedule(1, free)
			acct := "a"
			if tc.otherAcct {
				acct = "b"
			}
			for i := 1; i <= 20; i++ {
				now := 1 + float64(i)
				small := task(fmt.Sprint("small", i), acct, now, 1, 100)
				pol.Arrive(now, small)
				ds := pol.Schedule(now, free)
				if len(ds) != 1 || ds[0].Task != small {
					t.Fatalf("start %d: decisions %v, want the small job", i, ds)
				}
				// It ends at once: four GPUs stay free, never eight.
				if err := free.Give(&small.Placement); err != nil {
					t.Fatal(err)
				}
				pol.Finish(now, small)
				if want := tc.overdueAt > 0 && i >= tc.overdueAt; wide.overdue != want {
					t.Fatalf("after %d small starts: wide overdue %v, want %v (overtaken %v GPU-s)", i, wide.overdue, want, wide.overtaken)
				}
			}
			if tc.overdueAt > 0 {
				if p := pol.Pending(); len(p) == 0 || p[0] != wide {
					t.Errorf("overdue wide job not at the front: %v", ids(p))
				}
			}
			if tc.guard > 0 && len(a.guard["a"]) > 1 {
				t.Errorf("the guard's index keeps %d jobs of account a, want the waiting ones only", len(a.guard["a"]))
			}
		})
	}
}

// TestAccountGuardFactor: asrpt-factor's A-SRPT order takes its guard
// from the site (Site.AccountGuard), not from the Params the multifactor
// model runs with.
func TestAccountGuardFactor(t *testing.T) {
	env := NewEnv(cluster.Uniform(2, 4), DefaultParams())
	site := ExampleSite()
	site.AccountGuard = 3
	env.Site = site
	pol, err := New("asrpt-factor", env)
	if err != nil {
		t.Fatal(err)
	}
	if g := pol.(*multifactorPolicy).inner.guardShare; g != 3 {
		t.Errorf("asrpt-factor's guard %v, want the site's 3", g)
	}
	env.Params.AccountGuard = 5
	pol, _ = New("asrpt", env)
	if g := pol.(*asrpt).guardShare; g != 5 {
		t.Errorf("asrpt's guard %v, want the Params' 5", g)
	}
}
