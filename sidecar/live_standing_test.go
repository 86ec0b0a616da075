//go:build integration

package sidecar

// CPU-only jobs beside GPU jobs in one partition wait no longer with the
// sidecar than with Slurm alone (within two cycles): the same workload is
// run twice on each lab, once without the sidecar and once with it
// (priority mode on 22.05, factor mode on 24.11 and 26.05), and the CPU-only
// job's wait is read from sacct. Without standing (stage "standing") the
// same run measured 30–32 s against 15–17 s with Slurm alone on 22.05
// (priority mode) and 24.11 (factor mode); with it, 15–17 s on each lab.
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run TestLiveStanding -v ./sidecar/

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/test/slurmlab"
)

func TestLiveStanding(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		mode := WriteFactor
		if lab.Version == "22.05" {
			mode = WritePriority
		}
		alone := standingRun(t, lab, "")
		with := standingRun(t, lab, mode)
		t.Logf("lab %s: CPU-only job waited %v with Slurm alone, %v with asrpt (%s mode)", lab.Version, alone, with, mode)
		if with > alone+2*liveInterval+time.Second {
			t.Errorf("lab %s: the CPU-only job waited %v with asrpt, %v with Slurm alone", lab.Version, with, alone)
		}
	})
}

// standingRun fills every node's GPUs and most of its CPUs for 15 s, then
// queues a GPU job, a CPU-only job needing 8 CPUs and nodes+1 more GPU jobs,
// each GPU job wanting a whole node's GPUs and 12 CPUs; with mode "" no
// sidecar runs. It returns the CPU-only job's wait (sacct Start − Submit).
func standingRun(t *testing.T, lab *slurmlab.Lab, mode WriteMode) time.Duration {
	t.Helper()
	l := newLive(t, lab, "", func(c *Config) {
		c.Scope.Partitions = []string{lab.Partition}
		if mode != "" {
			c.WriteMode = mode
		}
	})
	l.waitFor("an empty queue", time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := lab.Run(ctx, "squeue", "-h", "-o", "%i")
		time.Sleep(200 * time.Millisecond)
		return err == nil && strings.TrimSpace(out) == ""
	})
	g := lab.GPUsPerNode
	var blockers []string
	for range lab.Nodes {
		blockers = append(blockers, l.submitNow("alice", "asrpt-standing-blocker", g, 15, "-c", "12"))
	}
	l.waitRunning("the blockers running", blockers)
	if mode != "" {
		l.start()
	}
	l.submitNow("bob", "asrpt-standing-gpu", g, 15, "-c", "12")
	cpu := l.sbatch(false, "alice", "asrpt-standing-cpu", 0, 5, "-c", "8")
	// More GPU jobs behind it than nodes: in factor mode a job without a
	// site factor would sit behind all of them (the last one's factor is
	// 0).
	for i := range lab.Nodes + 1 {
		l.submitNow("bob", fmt.Sprintf("asrpt-standing-gpu-%d", i), g, 15, "-c", "12")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var wait time.Duration
	l.waitFor("the CPU-only job's accounting", 2*time.Minute, func() bool {
		time.Sleep(500 * time.Millisecond)
		out, err := lab.Run(ctx, "sacct", "-X", "-n", "-P", "-j", cpu, "-o", "Submit,Start,State")
		f := strings.Split(strings.TrimSpace(out), "|")
		if err != nil || len(f) != 3 || f[2] != "COMPLETED" {
			return false
		}
		sub, err1 := time.ParseInLocation("2006-01-02T15:04:05", f[0], time.Local)
		st, err2 := time.ParseInLocation("2006-01-02T15:04:05", f[1], time.Local)
		if err1 != nil || err2 != nil {
			t.Fatalf("sacct times %q: %v %v", out, err1, err2)
		}
		wait = st.Sub(sub)
		return true
	})
	if mode != "" {
		l.stop()
		p := l.s.lastPlan.Load()
		standing := false
		for _, r := range p.Rows {
			standing = standing || r.Stage == "standing"
		}
		if !standing && p != nil {
			t.Logf("lab %s: no standing row in the last plan (the CPU-only job may have started): %d rows", lab.Version, len(p.Rows))
		}
	}
	l.cleanupJobs()
	l.jobs = nil
	return wait
}
