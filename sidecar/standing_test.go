package sidecar

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestStandingKeepsPlace: a CPU-only job in scope is put just ahead of the
// first managed job (in asrpt's order) that Slurm's own order puts behind
// it: here job 3, submitted after it, which asrpt ranks first, so the
// CPU-only job leads; it is never pinned, and giveback hands it back.
func TestStandingKeepsPlace(t *testing.T) {
	for _, mode := range []WriteMode{WritePriority, WriteFactor} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHarness(t, 2, 4, true, func(c *Config) { c.WriteMode, c.SiteFactorMax = mode, 6400 })
			// asrpt's order: short (C), mid (B), long (A).
			h.fake.Submit(pend("1", "long", 1, t0))
			h.fake.Submit(pend("2", "mid", 1, t0.Add(2*time.Second)))
			h.fake.Submit(pend("3", "short", 1, t0.Add(4*time.Second)))
			h.fake.Submit(pend("9", "long", 0, t0.Add(3*time.Second))) // CPU-only, third in Slurm's order
			h.fake.Submit(pend("8", "long", 0, t0.Add(9*time.Second))) // CPU-only, last in Slurm's order: last here too
			rep := h.cycle(t0.Add(time.Minute))
			if rep.Jobs["standing"] != 2 {
				t.Fatalf("jobs %v, want two standing", rep.Jobs)
			}
			var got []uint32
			if mode == WriteFactor {
				got = h.factors("9", "3", "2", "1", "8")
			} else {
				got = h.priorities("9", "3", "2", "1", "8")
			}
			if !(got[0] > got[1] && got[1] > got[2] && got[2] > got[3] && got[3] > got[4]) {
				t.Errorf("values of jobs 9 (CPU-only), 3, 2, 1, 8 (CPU-only) = %v: want strictly decreasing", got)
			}
			if j, _ := h.fake.Job("9"); len(j.RequiredNodes) != 0 {
				t.Errorf("CPU-only job pinned to %v", j.RequiredNodes)
			}
			plan, err := h.s.Plan(context.Background(), t0.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range plan.Plan {
				if r.JobID == "9" && (r.Stage != "standing" || r.Rank != 1) {
					t.Errorf("plan row of the CPU-only job %+v, want stage standing at rank 1", r)
				}
			}
			// Every job asrpt wrote to (in factor mode the tail's factor is
			// 0: nothing to hand back).
			want := 5
			if mode == WriteFactor {
				want = 4
			}
			if rep, err := h.s.Giveback(context.Background()); err != nil || len(rep.Returned) != want || !slices.Contains(rep.Returned, "9") {
				t.Errorf("giveback returned %v (err %v), want %d jobs with the CPU-only one", rep.Returned, err, want)
			}
		})
	}
}
