package policy

import (
	"slices"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/placement"
)

// TestBlockedNeverStarts checks, for every non-preemptive policy (las is a
// replay-only reference the sidecar refuses), that a blocked job is
// ranked but never started, that it blocks nobody behind it (not even at
// the head of a blocking policy), and that it starts once unblocked.
func TestBlockedNeverStarts(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	// a is the shortest and would start first everywhere; b and c fill the
	// node once a is passed over.
	spec := [][2]float64{{8, 10}, {4, 100}, {4, 200}}
	for _, name := range Names {
		if name == "las" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			p, err := New(name, env)
			if err != nil {
				t.Fatal(err)
			}
			free := placement.NewFree(env.Cluster)
			tasks := newTasks(t, env, spec)
			tasks[0].Blocked = true
			for i, task := range tasks {
				p.Arrive(float64(i), task)
			}
			var running []*Task
			for now := 3.0; now < 400; now += 5 {
				for _, d := range p.Schedule(now, free) {
					if d.Task == tasks[0] {
						t.Fatalf("t=%v: the blocked job started", now)
					}
					if !d.Preempt {
						running = append(running, d.Task)
					}
				}
				if !slices.Contains(p.Pending(), tasks[0]) {
					t.Fatalf("t=%v: the blocked job left the order: %v", now, ids(p.Pending()))
				}
			}
			if len(running) == 0 {
				t.Fatalf("nothing started behind the blocked job (pending %v)", ids(p.Pending()))
			}
			// Unblocked, with the node empty again: a starts.
			for _, r := range running {
				if err := free.Give(&r.Placement); err != nil {
					t.Fatal(err)
				}
				p.Finish(400, r)
			}
			tasks[0].Blocked = false
			started := false
			for now := 400.0; now < 800 && !started; now += 5 {
				for _, d := range p.Schedule(now, free) {
					started = started || d.Task == tasks[0]
				}
			}
			if !started {
				t.Fatalf("the unblocked job never started (pending %v)", ids(p.Pending()))
			}
		})
	}
}
