package policy

import (
	"math"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// freeWith returns the free GPUs of c with used[i] GPUs taken on node i.
func freeWith(t *testing.T, c *cluster.Cluster, used []int) *placement.Free {
	t.Helper()
	f := placement.NewFree(c)
	for i, u := range used {
		if u > 0 {
			if err := f.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: 1<<uint(u) - 1}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// TestDispatchPlacesAgainOnAllowedNodes: a policy placing without the
// filter (Env.Allow unset) gets the job placed again on the nodes allow
// permits, its placement and α updated and free kept exact; with no node
// allowed the job's turn has come but it stays unplaced, its GPUs given
// back.
func TestDispatchPlacesAgainOnAllowedNodes(t *testing.T) {
	c := cluster.Uniform(3, 4)
	for _, tc := range []struct {
		name     string
		allow    NodeFilter
		placed   bool
		wantNode int
	}{
		{"best fit refused", func(_ *Task, n int) bool { return n != 0 }, true, 2},
		{"nothing allowed", func(*Task, int) bool { return false }, false, -1},
		{"everything allowed", func(*Task, int) bool { return true }, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := NewEnv(c, DefaultParams())
			pol, _ := New("wcs-workload", env)
			j := &job.Job{ID: "1", User: "u", GPUs: 2, RunTime: 100, TimeLimit: 200}
			task, err := env.NewTask(j, 0, prediction.Estimate{Seconds: 100, Known: true})
			if err != nil {
				t.Fatal(err)
			}
			pol.Arrive(0, task)
			// node 0 has 2 free (the best fit), node 1 none, node 2 four.
			free := freeWith(t, c, []int{2, 4, 0})
			started, preempted := env.Dispatch(pol, 0, free, tc.allow)
			if len(started) != 1 || len(preempted) != 0 || started[0].Placed != tc.placed {
				t.Fatalf("started %+v preempted %v", started, preempted)
			}
			wantFree := 6 - 2
			if !tc.placed {
				wantFree = 6
			} else if got := task.Placement.Slots[0].Node; len(task.Placement.Slots) != 1 || got != tc.wantNode {
				t.Errorf("placed on %+v, want node %d", task.Placement.Slots, tc.wantNode)
			}
			if free.Total() != wantFree {
				t.Errorf("free GPUs %d, want %d", free.Total(), wantFree)
			}
			if errs, n := env.TakeErrors(); n != 0 {
				t.Errorf("failures %v", errs)
			}
		})
	}
}

// TestEnvAllowPlacesFirstTime: with Env.Allow set, the policy itself
// places on the allowed nodes; Fork keeps it and starts without failures.
func TestEnvAllowPlacesFirstTime(t *testing.T) {
	c := cluster.Uniform(3, 4)
	env := NewEnv(c, DefaultParams())
	env.Allow = func(_ *Task, n int) bool { return n == 2 }
	env.fail(&Task{Job: &job.Job{ID: "x"}}, placement.ErrBusy)
	run := env.Fork()
	if _, n := run.TakeErrors(); n != 0 || run.Allow == nil {
		t.Fatalf("fork: %d failures, allow %v", n, run.Allow != nil)
	}
	if _, n := env.TakeErrors(); n != 1 {
		t.Fatalf("the forked-from Env lost its failure")
	}
	pol, _ := New("asrpt", run)
	task, _ := run.NewTask(&job.Job{ID: "1", User: "u", GPUs: 2, RunTime: 100}, 0, prediction.Estimate{Seconds: 100, Known: true})
	pol.Arrive(0, task)
	started, _ := run.Dispatch(pol, 200, freeWith(t, c, []int{2, 0, 0}), nil)
	if len(started) != 1 || !started[0].Placed || task.Placement.Slots[0].Node != 2 {
		t.Errorf("started %+v on %+v", started, task.Placement.Slots)
	}
}

func TestNewLiveTask(t *testing.T) {
	env := NewEnv(cluster.Uniform(2, 8), DefaultParams())
	est := prediction.Estimate{Seconds: 600, Median: 500, Known: true}
	prof := placement.DataParallel(8, placement.DefaultGradientBytes)
	task, err := env.NewLiveTask(&job.Job{ID: "1", GPUs: 8}, 0, est, prof)
	if err != nil {
		t.Fatal(err)
	}
	if task.Prof == nil || !(task.AlphaMin > 0) || task.AlphaMax < task.AlphaMin || task.Reference != 0 || task.Heavy {
		t.Errorf("live task %+v", task)
	}
	if got := task.PredictedOn(2 * task.AlphaMin); math.Abs(got-1200) > 1e-9 {
		t.Errorf("PredictedOn(2 α_min) = %v, want 1200", got)
	}
	if task.Predicted() != 600 || math.Abs(task.FitOn(task.AlphaMin)-500) > 1e-9 {
		t.Errorf("Predicted %v FitOn %v", task.Predicted(), task.FitOn(task.AlphaMin))
	}
	plain, err := env.NewLiveTask(&job.Job{ID: "2", GPUs: 1}, 1, est, nil)
	if err != nil || plain.Prof != nil || plain.AlphaMin != 1 {
		t.Errorf("plain live task %+v %v", plain, err)
	}
	for _, tc := range []struct {
		prof *placement.Profile
		want string
	}{
		{placement.DataParallel(4, placement.DefaultGradientBytes), "has 4 GPUs, the job 8"},
		{&placement.Profile{Model: "broken"}, "no stages"},
	} {
		if _, err := env.NewLiveTask(&job.Job{ID: "3", GPUs: 8}, 2, est, tc.prof); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("profile %+v: %v, want %q", tc.prof, err, tc.want)
		}
	}
}

func TestCodeString(t *testing.T) {
	for c, want := range map[Code]string{Fits: "fits", DoesNotFit: "does_not_fit", Failed: "failed"} {
		if c.String() != want {
			t.Errorf("%d: %q", c, c.String())
		}
	}
}

// TestDispatcherUpdate: spjf re-orders a job whose ranked run time (the
// median) moved; an estimate that moves only the expected run time, or a
// fifo job's, changes the estimate and leaves the queue as it was, and a
// later move still finds the job where it is.
func TestDispatcherUpdate(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	for _, tc := range []struct {
		policy    string
		est       prediction.Estimate // given to job a (first, 300 s)
		wantOrder []string
	}{
		{"spjf", prediction.Estimate{Seconds: 50, Median: 300, Known: true}, []string{"b", "a", "c"}},
		{"spjf", prediction.Estimate{Seconds: 9000, Median: 10, Known: true}, []string{"a", "b", "c"}},
		{"fifo", prediction.Estimate{Seconds: 9000, Median: 1, Known: true}, []string{"a", "b", "c"}},
	} {
		pol, err := New(tc.policy, env)
		if err != nil {
			t.Fatal(err)
		}
		ts := newTasks(t, env, [][2]float64{{8, 300}, {8, 200}, {8, 400}})
		ts[0].Est.Median = 300
		for _, task := range ts {
			pol.Arrive(0, task)
		}
		upd := pol.(Updater)
		upd.Update(1, ts[0], tc.est)
		if got := ids(pol.Pending()); !equal(got, tc.wantOrder) || ts[0].Est != tc.est {
			t.Errorf("%s, a updated to %+v: pending %v (a's estimate %+v), want %v", tc.policy, tc.est, got, ts[0].Est, tc.wantOrder)
		}
		// A second update re-orders from the first one's place (spjf) or
		// keeps the order (fifo): the queue still holds a where it is.
		upd.Update(2, ts[0], prediction.Estimate{Seconds: 500, Median: 500, Known: true})
		want := []string{"b", "c", "a"}
		if tc.policy == "fifo" {
			want = []string{"a", "b", "c"}
		}
		if got := ids(pol.Pending()); !equal(got, want) {
			t.Errorf("%s, then a at 500 s: pending %v, want %v", tc.policy, got, want)
		}
		pol.Withdraw(3, ts[0])
		if got := ids(pol.Pending()); !equal(got, []string{"b", "c"}) {
			t.Errorf("%s: a withdrawn, pending %v, want [b c]", tc.policy, got)
		}
	}
}
