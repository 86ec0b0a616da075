//go:build integration

package sidecar

// Live preemption (policy asrpt-preempt) on every lab: a checkpointing job
// that opted in (its comment's asrpt:preempt word, --requeue) fills one
// node, plain jobs the others; a short job arrives that fits nowhere. The
// sidecar sends the opted-in job its signal (to its steps on 24.11+, the
// whole job on 22.05, as the word says), the job saves its progress and
// requeues itself, the short job runs on its node, and the job starts
// again (about two minutes later: Slurm's begin time after a requeue)
// when the sidecar's policy gives it its turn, resuming from its progress.
// Asserted from Slurm's records: REQUEUED in sacct for that job only, no
// signal to any other, one preemption, the progress never going back.
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run TestLivePreempt -v ./sidecar/
//
// The labs run at once, step by step, so that their two-minute requeue
// delays overlap whatever -parallel says (GOMAXPROCS by default).
//
// The sidecar predicts by the time limits (predictor limit): the checkpointing
// job 20 min, the head 1 min. Whether the policy stops a job for the head
// depends on both predictions (the job's remaining work must exceed
// preempt_margin times the head's), and the mean predictor's come from the
// lab's last hour of accounting, which the tests run before this one fill:
// with the head's group unseen and bob's other jobs some 30 s or longer,
// the head waited past this test's two minutes (twice in CI).

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/test/slurmlab"
)

// ckptJob is a job that checkpoints and requeues itself, as PyTorch
// Lightning's and submitit's do: its step counts seconds of work into a
// progress file, starting from what the file holds; on USR1 the step
// requeues the job and ends. Its batch shell (and srun) ignore USR1, so
// that a signal to the whole job (22.05) stops only the step. Each start
// appends "start N RESTARTS" to the log.
const ckptJob = `#!/bin/sh
trap '' USR1
srun -n1 sh -c '
P=/tmp/asrpt-preempt-$SLURM_JOB_ID
n=$(cat $P 2>/dev/null || echo 0)
echo "start $n ${SLURM_RESTART_COUNT:-0}" >> $P.log
stop=0
trap "stop=1" USR1
while [ $n -lt 100000 ]; do
	if [ $stop = 1 ]; then scontrol requeue $SLURM_JOB_ID; exit 0; fi
	sleep 1; n=$((n+1)); echo $n > $P
done'
`

// preemptRun is one lab's run of TestLivePreempt.
type preemptRun struct {
	l          *live
	ckpt, head string
	plain      []string
	progress   string
	word       string
}

// read returns the lab's file at path ("" when missing).
func (p *preemptRun) read(path string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := p.l.lab.Run(ctx, "cat", path)
	return strings.TrimSpace(out)
}

func TestLivePreempt(t *testing.T) {
	var runs []*preemptRun
	// The cluster: CPU-only jobs hold each node's memory for a while, so
	// that asrpt's policy (which sees GPUs only) starts the GPU jobs, and
	// Slurm runs them once the memory is free: they are the policy's.
	for _, v := range liveLabs() {
		lab := slurmlab.Require(t, v)
		p := &preemptRun{word: "asrpt:preempt=USR1@30"}
		if v == "22.05" {
			p.word = "asrpt:preempt=F:USR1@30" // v0.0.38 signals the whole job
		}
		p.l = newLive(t, lab, "", func(c *Config) {
			c.Scope.Partitions = []string{lab.Partition}
			c.Policy = "asrpt-preempt"
			c.Params.PreemptExempt = 10
			c.UsePredictor("limit")
		})
		l := p.l
		script := "/tmp/asrpt-preempt-" + v + ".sh"
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if _, err := lab.Run(ctx, "sh", "-c", "cat > "+script+" <<'EOF'\n"+ckptJob+"EOF\nchmod 755 "+script); err != nil {
			t.Fatal(err)
		}
		cancel()
		blockers := l.memoryBlockers(20)
		l.waitRunning("lab "+v+": the memory blockers running", blockers)
		p.ckpt = l.sbatchScript("alice", "asrpt-preempt-ckpt", lab.GPUsPerNode, script, "--requeue", "--mem=8000", "--comment", p.word)
		p.progress = "/tmp/asrpt-preempt-" + p.ckpt
		for range lab.Nodes - 1 {
			p.plain = append(p.plain, l.submitNow("bob", "asrpt-preempt-plain", lab.GPUsPerNode, 600, "--mem=8000", "--requeue"))
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			lab.Run(ctx, "rm", "-f", p.progress, p.progress+".log", script)
		})
		l.start()
		runs = append(runs, p)
	}
	for _, p := range runs {
		p.l.waitRunning("lab "+p.l.lab.Version+": the GPU jobs running", append([]string{p.ckpt}, p.plain...))
	}
	// Past the exemption (10 s from Slurm's start, seen by the next
	// cycle's plan), a job that fits nowhere arrives.
	for _, p := range runs {
		standing := func() map[string]string {
			m := map[string]string{}
			if e := p.l.s.lastPlan.Load(); e != nil {
				for _, r := range e.Rows {
					if r.Preemptible != nil {
						m[r.JobID] = fmt.Sprintf("%v %s", *r.Preemptible, r.Note)
					}
				}
			}
			return m
		}
		p.l.waitFor("plan with the checkpointing job preemptible", time.Minute, func() bool {
			return strings.HasPrefix(standing()[p.ckpt], "true")
		})
		if s := standing(); !strings.Contains(s[p.plain[0]], "not opted in") {
			t.Errorf("lab %s: the plan's running jobs: %q", p.l.lab.Version, s)
		}
		p.head = p.l.submitNow("bob", "asrpt-preempt-head", p.l.lab.GPUsPerNode, 10, "-t", "1", "--mem=8000")
		// On a failure, the last plan's rows say what the sidecar thought
		// of the running jobs and of the head.
		t.Cleanup(func() {
			if !t.Failed() {
				return
			}
			if e := p.l.s.lastPlan.Load(); e != nil {
				for _, r := range e.Rows {
					b, _ := json.Marshal(r)
					t.Logf("lab %s: last plan row: %s", p.l.lab.Version, b)
				}
			}
		})
	}
	// The opted-in job is signalled, requeues itself, and the head runs.
	var at []int
	for _, p := range runs {
		v := p.l.lab.Version
		p.l.waitFor("the checkpointing job requeued", 2*time.Minute, func() bool {
			return recField(p.l.show(p.ckpt), "JobState") == "PENDING"
		})
		n, _ := strconv.Atoi(p.read(p.progress))
		at = append(at, n)
		if n == 0 {
			t.Errorf("lab %s: no progress saved before the requeue", v)
		}
		p.l.waitFor("the head running", time.Minute, func() bool {
			st := recField(p.l.show(p.head), "JobState")
			return st == "RUNNING" || st == "COMPLETED" || st == ""
		})
	}
	// About two minutes later it starts again and resumes.
	for i, p := range runs {
		v := p.l.lab.Version
		p.l.waitFor("the checkpointing job restarted", 4*time.Minute, func() bool {
			return strings.Count(p.read(p.progress+".log"), "start") >= 2
		})
		log := strings.Split(p.read(p.progress+".log"), "\n")
		var from, restarts int
		if _, err := fmt.Sscanf(log[len(log)-1], "start %d %d", &from, &restarts); err != nil || from < at[i] || restarts != 1 {
			t.Errorf("lab %s: restart log %q: resumed from %d (progress %d at the requeue), restarts %d", v, log, from, at[i], restarts)
		}
		t.Logf("lab %s: job %s (%s) requeued at %d s of work, started again from %d (restart %d); head %s: %s",
			v, p.ckpt, p.word, at[i], from, restarts, p.head, recField(p.l.show(p.head), "JobState"))
	}
	for _, p := range runs {
		v := p.l.lab.Version
		p.l.stop()
		p.l.probe.mu.Lock()
		signals, bad := p.l.probe.signals, p.l.probe.badSignals
		p.l.probe.mu.Unlock()
		want := fmt.Sprintf("%s USR1 steps", p.ckpt)
		if v == "22.05" {
			want = fmt.Sprintf("%s USR1 all", p.ckpt)
		}
		if len(signals) != 1 || signals[0] != want || len(bad) > 0 {
			t.Errorf("lab %s: signals %q (to jobs not running: %q), want %q once", v, signals, bad, want)
		}
		if got := testutil.ToFloat64(p.l.s.m.preemptions.WithLabelValues(decision.OutcomeRequeued)); got != 1 {
			t.Errorf("lab %s: requeued outcomes %v, want 1", v, got)
		}
		// Accounting: REQUEUED for the job that opted in, for no other.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, id := range append([]string{p.ckpt, p.head}, p.plain...) {
			out, err := p.l.lab.Run(ctx, "sacct", "-D", "-X", "-n", "-P", "-j", id, "-o", "State")
			if err != nil {
				t.Fatalf("lab %s: sacct: %v", v, err)
			}
			if requeued := strings.Contains(out, "REQUEUED"); requeued != (id == p.ckpt) {
				t.Errorf("lab %s: job %s's accounting states %q", v, id, strings.Fields(out))
			}
		}
		cancel()
	}
}

// sbatchScript submits the batch script at path (on the lab) as user with
// gpus GPUs on one node, and remembers the job for the cleanup.
func (l *live) sbatchScript(user, name string, gpus int, path string, extra ...string) string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"sbatch", "--parsable", "-D", "/tmp", "-o", "/dev/null", "-t", "20", "-J", name,
		"-p", l.lab.Partition, fmt.Sprintf("--gres=gpu:%d", gpus)}, extra...)
	out, err := l.lab.RunAs(ctx, user, append(args, path)...)
	if err != nil {
		l.t.Fatal(err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	l.jobs = append(l.jobs, id)
	return id
}
