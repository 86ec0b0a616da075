//go:build integration

package sidecar

// What the sidecar does on a real queue with jobs it must not touch the
// way it touches others, asserted from Slurm's own records (scontrol,
// sacct, sprio, slurmctld's log) on every lab:
//
//   - a job blocked by a dependency is ranked but never given a node list
//     while Reason=Dependency, and starts once the dependency is met;
//   - a node list asrpt writes leaves the job's eligible time alone
//     (sacct's Eligible is its submit time, as with Slurm alone), and no
//     hold or release reaches the job;
//   - in factor mode (24.11, 26.05) every component of a heterogeneous job
//     carries the same site factor.
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run TestLiveQueue -v ./sidecar/

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/test/slurmlab"
)

func TestLiveQueue(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		t.Run("dependency_and_eligible", func(t *testing.T) { liveDependencyAndEligible(t, lab) })
		if lab.Version != "22.05" {
			t.Run("het_factor", func(t *testing.T) { liveHetFactor(t, lab) })
		}
	})
}

// show returns scontrol's one-line record of job id ("" when gone).
func (l *live) show(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := l.lab.Run(ctx, "scontrol", "show", "job", "-o", id)
	return out
}

// waitRunning waits up to a minute until every job of ids runs.
func (l *live) waitRunning(what string, ids []string) {
	l.t.Helper()
	l.waitFor(what, time.Minute, func() bool {
		for _, id := range ids {
			if recField(l.show(id), "JobState") != "RUNNING" {
				return false
			}
		}
		return true
	})
}

// recField returns key's value in a scontrol one-line record.
func recField(rec, key string) string {
	m := regexp.MustCompile(`(?:^|\s)` + regexp.QuoteMeta(key) + `=(\S*)`).FindStringSubmatch(rec)
	if m == nil {
		return ""
	}
	return m[1]
}

// memoryBlockers submits one CPU-only job per node holding most of its
// memory for seconds: GPU jobs asking for memory then pend for resources
// that asrpt's model does not see, so that asrpt dispatches them onto the
// idle GPUs (and writes their node lists) while Slurm cannot start them.
func (l *live) memoryBlockers(seconds int) []string {
	var ids []string
	for i := 1; i <= l.lab.Nodes; i++ {
		ids = append(ids, l.sbatch(false, "alice", "asrpt-mem-blocker", 0, seconds, "-w", fmt.Sprintf("node%d", i), "--mem=60000"))
	}
	return ids
}

func liveDependencyAndEligible(t *testing.T, lab *slurmlab.Lab) {
	l := newLive(t, lab, "", func(c *Config) { c.Scope.Partitions = []string{lab.Partition} })
	blockers := l.memoryBlockers(15)
	l.waitRunning("the memory blockers running", blockers)
	// pinned pends for memory: asrpt dispatches it and writes its node
	// list. dep waits for pinned to end.
	pinned := l.submitNow("bob", "asrpt-eligible", 1, 5, "--mem=8000")
	dep := l.submitNow("bob", "asrpt-dependent", 2, 5, "--mem=8000", "--dependency=afterany:"+pinned)
	l.start()
	l.waitFor("the node list of the job pending for memory", 30*time.Second, func() bool {
		return recField(l.show(pinned), "ReqNodeList") != "(null)" || recField(l.show(pinned), "JobState") != "PENDING"
	})
	l.waitFor("Reason=Dependency on the dependent job", 20*time.Second, func() bool {
		return recField(l.show(dep), "Reason") == "Dependency"
	})
	// While the dependency holds: ranked, never pinned, several cycles.
	for range 6 {
		if nl := recField(l.show(dep), "ReqNodeList"); nl != "(null)" && recField(l.show(dep), "Reason") == "Dependency" {
			t.Fatalf("lab %s: job %s pinned to %s while Reason=Dependency", lab.Version, dep, nl)
		}
		time.Sleep(liveInterval)
	}
	p := l.s.lastPlan.Load()
	ranked := false
	for _, r := range p.Rows {
		if r.JobID == dep {
			ranked = r.Rank > 0 && r.Stage != "dispatched" && strings.Contains(r.Note, "Dependency")
		}
	}
	if !ranked {
		t.Errorf("lab %s: the plan does not rank job %s as held back: %+v", lab.Version, dep, p.Rows)
	}
	// Both run once the memory is free and the dependency is met.
	l.waitFor("both jobs finished", 2*time.Minute, func() bool {
		return recField(l.show(pinned), "JobState") == "COMPLETED" && recField(l.show(dep), "JobState") == "COMPLETED"
	})
	l.stop()
	l.probe.mu.Lock()
	held, pins, bad := l.probe.heldPins, l.probe.pins[pinned], l.probe.badWrites
	l.probe.mu.Unlock()
	if len(held) > 0 {
		t.Errorf("lab %s: node lists sent to held-back jobs: %v", lab.Version, held)
	}
	if pins == 0 {
		t.Fatalf("lab %s: no node list was written to job %s: nothing was guarded", lab.Version, pinned)
	}
	if len(bad) > 0 {
		t.Errorf("lab %s: writes to jobs not pending: %v", lab.Version, bad)
	}
	// Accounting: the pinned job's Eligible is its submit time, as Slurm
	// alone sets it; slurmctld never held or released it.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var submit, eligible string
	l.waitFor("the accounting record", 30*time.Second, func() bool {
		out, err := lab.Run(ctx, "sacct", "-X", "-n", "-P", "-j", pinned, "-o", "Submit,Eligible,State")
		f := strings.Split(strings.TrimSpace(out), "|")
		if err != nil || len(f) != 3 || f[2] != "COMPLETED" {
			return false
		}
		submit, eligible = f[0], f[1]
		return true
	})
	if eligible != submit {
		t.Errorf("lab %s: job %s Submit %s but Eligible %s: the node list's write reset the eligible time", lab.Version, pinned, submit, eligible)
	}
	if b, err := os.ReadFile(l.logFile()); err == nil {
		if re := regexp.MustCompile(`(hold|release hold) on JobId=` + pinned + `\b`); re.Match(b) {
			t.Errorf("lab %s: slurmctld's log shows a hold or release of job %s", lab.Version, pinned)
		}
	}
	t.Logf("lab %s: job %s pinned %d times, Submit = Eligible = %s; dependent job %s never pinned while blocked", lab.Version, pinned, pins, submit, dep)
}

// logFile is the lab's slurmctld log.
func (l *live) logFile() string { return l.lab.LogDir + "/slurmctld.log" }

// liveHetFactor: factor mode gives both components of a heterogeneous job
// the same site factor (sprio's SITE), where Slurm applies a factor written
// to the leader to the leader only.
func liveHetFactor(t *testing.T, lab *slurmlab.Lab) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := newLive(t, lab, "", func(c *Config) {
		c.WriteMode = WriteFactor
		c.Scope.Partitions = []string{lab.Partition}
	})
	// One blocker per node, running before anything else is queued: Slurm
	// may take a scheduling pass to start them, and a blocker still pending
	// when the sidecar starts would be ordered with the jobs below.
	var blockers []string
	for range lab.Nodes {
		blockers = append(blockers, l.submitNow("alice", "asrpt-het-blocker", lab.GPUsPerNode, 60))
	}
	l.waitRunning("the blockers running", blockers)
	lead := l.sbatch(false, "bob", "asrpt-het", 1, 5, ":", "-p", lab.Partition, "--gres=gpu:2")
	// Two larger jobs behind it: the het job (3 GPUs) is not the tail of
	// the order, whose factor is 0.
	other := l.submitNow("bob", "asrpt-het-other", lab.GPUsPerNode, 5)
	l.submitNow("bob", "asrpt-het-other", lab.GPUsPerNode, 5)
	l.start()
	var comp string
	l.waitFor("site factors on the heterogeneous job", 40*time.Second, func() bool {
		out, err := lab.Run(ctx, "squeue", "-h", "-j", lead, "-o", "%i %A")
		if err != nil {
			return false
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[1] != lead {
				comp = f[1]
			}
		}
		if comp == "" {
			return false
		}
		rows := sprio(ctx, t, lab, lead, comp, other)
		return rows[lead].site > 0 && rows[comp].site > 0
	})
	rows := sprio(ctx, t, lab, lead, comp, other)
	if rows[lead].site != rows[comp].site || rows[lead].prio != rows[comp].prio {
		t.Errorf("lab %s: heterogeneous job %s: leader SITE %d priority %d, component %s SITE %d priority %d",
			lab.Version, lead, rows[lead].site, rows[lead].prio, comp, rows[comp].site, rows[comp].prio)
	}
	// With the cluster free, the heterogeneous job starts whole at once
	// (the head of the order: its components planned together).
	for _, id := range blockers {
		if st := recField(l.show(id), "JobState"); st != "RUNNING" {
			t.Fatalf("lab %s: blocker %s is %s before the het job started: the test's premise does not hold", lab.Version, id, st)
		}
	}
	freed := time.Now()
	l.scancel(blockers...)
	l.waitFor("both components running", 30*time.Second, func() bool {
		return recField(l.show(lead), "JobState") == "RUNNING" && recField(l.show(comp), "JobState") == "RUNNING"
	})
	l.stop()
	t.Logf("lab %s: het job %s+%s SITE %d / %d (other job %d); running %v after the nodes were freed",
		lab.Version, lead, comp, rows[lead].site, rows[comp].site, rows[other].site, time.Since(freed).Round(100*time.Millisecond))
}

func TestLiveTiers(t *testing.T) {
	forLabsParallel(t, liveTiers)
}

// liveTiers: with a job of the urgent partition (PriorityTier 2, node3 and
// node4) waiting for both its nodes, and node3 the only idle node, a job
// of the gpu partition (tier 1) is not pinned to node3, where Slurm would
// not start it before the urgent job; once the urgent job no longer waits,
// it gets a node list as before.
func liveTiers(t *testing.T, lab *slurmlab.Lab) {
	l := newLive(t, lab, "", func(c *Config) { c.Scope.Partitions = []string{lab.Partition} })
	g := lab.GPUsPerNode
	var blockers []string
	for _, n := range []string{"node1", "node2", "node4"} {
		blockers = append(blockers, l.submitNow("alice", "asrpt-tier-blocker", g, 600, "-w", n))
	}
	l.waitRunning("the blockers running", blockers)
	urgent := l.sbatch(false, "bob", "asrpt-tier-urgent", g, 5, "-p", lab.Partition2, "-N", "2")
	job := l.submitNow("bob", "asrpt-tier-gpu", g, 5)
	l.start()
	for range 8 {
		if s := l.show(urgent); recField(s, "JobState") != "PENDING" {
			t.Fatalf("lab %s: the urgent job is %s, want it waiting: %s", lab.Version, recField(s, "JobState"), s)
		}
		if nl := recField(l.show(job), "ReqNodeList"); nl != "(null)" {
			t.Fatalf("lab %s: gpu job %s pinned to %s while urgent job %s waits for node3 and node4", lab.Version, job, nl, urgent)
		}
		time.Sleep(liveInterval)
	}
	// The urgent job gone, node3 is the gpu job's.
	l.scancel(urgent)
	l.waitFor("the gpu job placed on node3", 30*time.Second, func() bool {
		s := l.show(job)
		return recField(s, "ReqNodeList") == "node3" || recField(s, "NodeList") == "node3"
	})
	l.stop()
	t.Logf("lab %s: gpu job %s kept off node3 while urgent job %s waited; on node3 after", lab.Version, job, urgent)
}
