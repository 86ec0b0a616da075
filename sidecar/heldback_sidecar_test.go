package sidecar

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/slurmclient"
)

// TestHeldBackNeverDispatched: a job Slurm holds back for a dependency is
// ranked (it gets a priority in the order) but is never dispatched, never
// given a node list and holds no GPUs, so the job behind it gets the
// cluster; once the dependency is met it is dispatched like any job.
func TestHeldBackNeverDispatched(t *testing.T) {
	for _, mode := range []WriteMode{WritePriority, WriteFactor} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHarness(t, 1, 4, false, func(c *Config) { c.WriteMode = mode })
			dep := pend("1", "short", 4, t0)
			dep.Reason = "Dependency"
			h.fake.Submit(dep)
			h.fake.Submit(pend("2", "long", 4, t0.Add(time.Second)))
			rep := h.cycle(t0.Add(time.Minute))
			if rep.Dispatched != 1 || h.s.state.Entries["1"].Phase == decision.PhDispatched || h.s.state.Entries["2"].Phase != decision.PhDispatched {
				t.Fatalf("dispatched %d: job 1 %v, job 2 %v; want job 2 only", rep.Dispatched, h.s.state.Entries["1"].Phase, h.s.state.Entries["2"].Phase)
			}
			if j, _ := h.fake.Job("1"); len(j.RequiredNodes) != 0 {
				t.Errorf("held-back job pinned to %v", j.RequiredNodes)
			}
			if j, _ := h.fake.Job("2"); len(j.RequiredNodes) != 1 {
				t.Errorf("job 2 nodes %v, want one", j.RequiredNodes)
			}
			if rep.Jobs["held_back"] != 1 || rep.Jobs["managed"] != 2 {
				t.Errorf("jobs %v: want 1 held back of 2 managed", rep.Jobs)
			}
			plan, err := h.s.Plan(context.Background(), t0.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			var note string
			for _, r := range plan.Plan {
				if r.JobID == "1" {
					note = r.Note
					if r.Rank == 0 {
						t.Errorf("held-back job not ranked: %+v", r)
					}
				}
			}
			if !strings.Contains(note, "Dependency") {
				t.Errorf("plan note %q does not say why", note)
			}
			// Job 2 starts and ends; the dependency is met.
			j2, _ := h.fake.Job("2")
			if err := h.fake.Start("2", j2.RequiredNodes, 0); err != nil {
				t.Fatal(err)
			}
			h.cycle(t0.Add(2 * time.Minute))
			h.fake.Finish("2", 0, time.Minute)
			h.fake.Edit("1", func(j *slurmclient.Job) { j.Reason = "Priority" })
			rep = h.cycle(t0.Add(3 * time.Minute))
			if rep.Dispatched != 1 || h.s.state.Entries["1"].Phase != decision.PhDispatched {
				t.Fatalf("after the dependency: dispatched %d, job 1 %v", rep.Dispatched, h.s.state.Entries["1"].Phase)
			}
			if j, _ := h.fake.Job("1"); len(j.RequiredNodes) != 1 {
				t.Errorf("job 1 nodes %v after its dependency, want one", j.RequiredNodes)
			}
		})
	}
}

// TestHeldBackAfterDispatch: a dispatched job that Slurm then holds back
// (a QOS limit reached) gives its GPUs up and is ranked again.
func TestHeldBackAfterDispatch(t *testing.T) {
	h := newHarness(t, 1, 4, false, nil)
	h.fake.Submit(pend("1", "short", 4, t0))
	h.cycle(t0)
	if h.s.state.Entries["1"].Phase != decision.PhDispatched {
		t.Fatalf("job 1 %v, want dispatched", h.s.state.Entries["1"].Phase)
	}
	h.fake.Edit("1", func(j *slurmclient.Job) { j.Reason = "QOSGrpGRES" })
	h.fake.Submit(pend("2", "long", 4, t0.Add(time.Second)))
	rep := h.cycle(t0.Add(time.Minute))
	if e := h.s.state.Entries["1"]; e.Phase != decision.PhQueued || e.Task == nil || !e.Task.Blocked {
		t.Fatalf("job 1 after being held back: %v blocked %v", e.Phase, e.Task != nil && e.Task.Blocked)
	}
	if rep.Dispatched != 1 || h.s.state.Entries["2"].Phase != decision.PhDispatched {
		t.Errorf("job 2 %v (dispatched %d), want it to get the GPUs job 1 gave up", h.s.state.Entries["2"].Phase, rep.Dispatched)
	}
}
