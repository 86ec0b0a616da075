package policy

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

func ids(ts []*Task) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// newTasks returns waiting tasks on a full 8-GPU cluster (so that nothing
// starts): sizes in GPUs and predicted seconds.
func newTasks(t *testing.T, env *Env, spec [][2]float64) []*Task {
	t.Helper()
	var out []*Task
	for i, s := range spec {
		j := &job.Job{ID: string(rune('a' + i)), Submit: float64(i), GPUs: int(s[0]), RunTime: s[1]}
		task, err := env.NewTask(j, i, prediction.Estimate{Seconds: s[1], Known: true})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, task)
	}
	return out
}

// TestWithdrawAndRestore checks, for every policy, that a withdrawn job
// leaves the order, and that restoring the waiting jobs in their saved
// order with their saved virtual work gives the same order and the same
// next event.
func TestWithdrawAndRestore(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	spec := [][2]float64{{8, 4000}, {2, 100}, {4, 50}, {1, 10000}, {8, 30}}
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			full := placement.NewFree(env.Cluster)
			busy := &placement.Placement{Slots: []placement.Slot{{Node: 0, GPUs: 0xff}}}
			if err := full.Take(busy); err != nil {
				t.Fatal(err)
			}
			p, _ := New(name, env)
			tasks := newTasks(t, env, spec)
			for i, task := range tasks {
				p.Arrive(float64(i), task)
			}
			p.Schedule(5, full)
			p.Withdraw(5, tasks[2])
			before := p.Pending()
			for _, task := range before {
				if task.ID == "c" {
					t.Fatalf("withdrawn job still pending: %v", ids(before))
				}
			}
			if len(before) != 4 {
				t.Fatalf("pending %v, want 4 jobs", ids(before))
			}
			next := p.NextEvent(5)
			// Restart: a new policy, the same jobs restored in order.
			q, _ := New(name, env)
			fresh := newTasks(t, env, spec)
			byID := map[string]*Task{}
			for _, task := range fresh {
				byID[task.ID] = task
			}
			for _, old := range before {
				q.Restore(5, byID[old.ID], old.VirtualRemaining(), old.released)
			}
			after := q.Pending()
			if !equal(ids(before), ids(after)) {
				t.Errorf("order after restore %v, before %v", ids(after), ids(before))
			}
			if got := q.NextEvent(5); math.Abs(got-next) > 1e-6 && !(math.IsInf(got, 1) && math.IsInf(next, 1)) {
				t.Errorf("next event after restore %v, before %v", got, next)
			}
		})
	}
}
