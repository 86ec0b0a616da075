//go:build integration

package sidecar

// The state never forgets a write, on a real Slurm: a job list answered
// empty for two cycles in the middle of a run (what a restarting
// slurmctld can answer) neither renumbers nor drops the jobs asrpt wrote
// to, and a giveback afterwards restores every one of them, checked from
// Slurm's own records (sprio's SITE column in factor mode, 24.11 and
// 26.05; the priority outside asrpt's bands in priority mode, 22.05).
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run TestLiveEmptyList -v ./sidecar/

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/test/slurmlab"
)

func TestLiveEmptyList(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		mode := WriteFactor
		if lab.Version == "22.05" {
			mode = WritePriority
		}
		px := newFaultProxy(t, lab.URL)
		l := newLive(t, lab, px.URL, func(c *Config) { c.WriteMode, c.Scope.Partitions = mode, []string{lab.Partition} })
		var blockers []string
		for range lab.Nodes {
			blockers = append(blockers, l.submitNow("alice", "asrpt-empty-blocker", lab.GPUsPerNode, 300))
		}
		l.waitFor("the blockers running", time.Minute, func() bool {
			for _, id := range blockers {
				if recField(l.show(id), "JobState") != "RUNNING" {
					return false
				}
			}
			return true
		})
		var pending []string
		for _, g := range []int{1, 2, 4, 2, 1} {
			pending = append(pending, l.submitNow("bob", "asrpt-empty", g, 60))
		}
		l.start()
		l.waitFor("writes to every pending job but the tail", 30*time.Second, func() bool {
			n := 0
			for _, id := range pending {
				if l.probe.writesTo(id) > 0 {
					n++
				}
			}
			return n >= len(pending)-1 // the tail's factor is 0, Slurm's default
		})
		// The sequence numbers from the state file (the sidecar runs).
		seq := map[string]int{}
		l.waitFor("every pending job in the state file", 10*time.Second, func() bool {
			st, err := readState(l.s.cfg.StateFile)
			if err != nil {
				return false
			}
			for _, j := range st.Jobs {
				seq[j.Job.ID] = j.Seq
			}
			for _, id := range pending {
				if _, ok := seq[id]; !ok {
					return false
				}
			}
			return true
		})
		// Two empty lists, then the real one again.
		px.empties.Store(2)
		px.mode.Store("empty list")
		l.waitFor("the empty lists served", 20*time.Second, func() bool { return px.mode.Load().(string) == "" })
		time.Sleep(3 * liveInterval)
		l.stop()
		if n := testutil.ToFloat64(l.s.m.suspectLists); n < 1 {
			t.Errorf("lab %s: %v suspect job lists counted, want the empty ones; log:\n%s", lab.Version, n, l.log.String())
		}
		for _, id := range pending {
			e := l.s.entries[id]
			if e == nil || e.seq != seq[id] {
				t.Errorf("lab %s: job %s after the empty lists: %+v (sequence number was %d)", lab.Version, id, e, seq[id])
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rep, err := l.s.Giveback(ctx)
		if err != nil {
			t.Fatalf("lab %s: giveback: %v (%+v)", lab.Version, err, rep)
		}
		if mode == WriteFactor {
			out, err := lab.Run(ctx, "sprio", "-h", "-o", "%i %S")
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Fields(line)
				if len(f) != 2 || !slices.Contains(pending, f[0]) {
					continue
				}
				seen++
				if f[1] != "0" {
					t.Errorf("lab %s: job %s keeps SITE %s after giveback", lab.Version, f[0], f[1])
				}
			}
			if seen < len(pending)-1 {
				t.Errorf("lab %s: sprio lists %d of the pending jobs %v:\n%s", lab.Version, seen, pending, out)
			}
		} else {
			for _, id := range pending {
				p, _ := strconv.ParseUint(recField(l.show(id), "Priority"), 10, 32)
				if HighBand.Contains(uint32(p)) || LowBand.Contains(uint32(p)) {
					t.Errorf("lab %s: job %s keeps asrpt's priority %d after giveback", lab.Version, id, p)
				}
			}
		}
		t.Logf("lab %s (%s mode): %d jobs kept through two empty lists, %d handed back: %s", lab.Version, mode,
			len(pending), len(rep.Returned), strings.Join(rep.Returned, " "))
	})
}
