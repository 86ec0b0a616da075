//go:build integration

package slurmclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/test/slurmlab"
)

// trapScript is a batch script that, on USR1 to its batch shell, writes
// its marker file and ends (exit 0); otherwise it sleeps two minutes.
const trapScript = `trap 'echo USR1 > /tmp/asrpt-signal-$SLURM_JOB_ID; exit 0' USR1; sleep 120 & wait`

// submitTrap submits trapScript as alice and returns its id and marker.
func (l *lab) submitTrap(t *testing.T) (id, marker string) {
	t.Helper()
	id = l.runAs(t, "alice", "sbatch", "--parsable", "-p", l.Partition, "-t", "10", "-o", "/dev/null",
		"-J", "asrpt-it-signal", "--wrap", trapScript)
	id, _, _ = strings.Cut(id, ";")
	t.Cleanup(func() { l.Run(liveCtx(t), "scancel", id) })
	marker = "/tmp/asrpt-signal-" + id
	t.Cleanup(func() { l.Run(liveCtx(t), "rm", "-f", marker) })
	return id, marker
}

// marked reports whether the job's marker file holds USR1.
func (l *lab) marked(t *testing.T, marker string) bool {
	out, err := l.Run(liveCtx(t), "cat", marker)
	return err == nil && strings.TrimSpace(out) == "USR1"
}

// TestLiveSignal: SignalJob reaches a running job's batch shell on every
// release (the whole job on 22.05, the batch shell alone on 24.11+), and
// sends nothing to a pending job or off the list: such a job is neither
// signalled nor cancelled (a bad signal would be read as SIGKILL).
func TestLiveSignal(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		ctx := liveCtx(t)
		d := DeliverBatch
		if !c.SupportsDelivery(DeliverBatch) {
			d = DeliverAll
			if err := c.SignalJob(ctx, "1", "USR1", DeliverBatch); !errors.Is(err, ErrUnsupported) {
				t.Errorf("batch-only delivery on %s: %v, want ErrUnsupported", c.APIVersion(), err)
			}
		}

		id, marker := l.submitTrap(t)
		l.waitState(t, id, "RUNNING", 90*time.Second)
		time.Sleep(2 * time.Second) // the batch shell has set its trap
		if err := c.SignalJob(ctx, id, "KILL", DeliverAll); !errors.Is(err, ErrInvalid) {
			t.Errorf("KILL: %v, want ErrInvalid", err)
		}
		if s := l.show(t, id); s["JobState"] != "RUNNING" {
			t.Fatalf("after a refused KILL the job is %s", s["JobState"])
		}
		if err := c.SignalJob(ctx, id, "USR1", d); err != nil {
			t.Fatalf("USR1 (%v): %v", d, err)
		}
		s := l.waitState(t, id, "COMPLETED", 60*time.Second)
		if !l.marked(t, marker) {
			t.Errorf("job %s completed (%s) without its trap writing %s", id, s["ExitCode"], marker)
		}
		if err := c.SignalJob(ctx, id, "USR1", d); !errors.Is(err, ErrNotPending) {
			t.Errorf("USR1 to a completed job: %v, want ErrNotPending", err)
		}

		if c.SupportsDelivery(DeliverSteps) {
			l.signalSteps(t, c)
		}

		held, heldMarker := l.submitTrap(t)
		l.run(t, "scontrol", "hold", held)
		if err := c.SignalJob(ctx, held, "USR1", d); !errors.Is(err, ErrNotPending) {
			t.Errorf("USR1 to a pending job: %v, want ErrNotPending", err)
		}
		time.Sleep(2 * time.Second)
		if s := l.show(t, held); s["JobState"] != "PENDING" || l.marked(t, heldMarker) {
			t.Errorf("pending job after a refused signal: %s, marker %v", s["JobState"], l.marked(t, heldMarker))
		}
	})
}

// stepsScript is a Lightning-style job: its step traps USR1 (writing the
// s marker, then ending), its batch shell traps it too (writing the b
// marker, which a signal to the steps alone must not reach), and once the
// step has ended the batch shell writes the d marker.
const stepsScript = `#!/bin/sh
trap "echo batch > /tmp/asrpt-signal-b-$SLURM_JOB_ID" USR1
srun -n1 sh -c 'trap "echo step > /tmp/asrpt-signal-s-$SLURM_JOB_ID; exit 0" USR1; sleep 120 & wait'
echo done > /tmp/asrpt-signal-d-$SLURM_JOB_ID
`

// signalSteps checks DeliverSteps (v0.0.42+): the step gets the signal,
// the batch shell does not, and the job goes on to complete.
func (l *lab) signalSteps(t *testing.T, c Client) {
	t.Helper()
	ctx := liveCtx(t)
	script := "/tmp/asrpt-signal-steps-" + l.Version + ".sh" // the labs run at once
	l.run(t, "sh", "-c", "cat > "+script+" <<'EOF'\n"+stepsScript+"EOF\nchmod 755 "+script)
	id := l.runAs(t, "alice", "sbatch", "--parsable", "-p", l.Partition, "-t", "10", "-o", "/dev/null",
		"-J", "asrpt-it-signal-steps", script)
	id, _, _ = strings.Cut(id, ";")
	t.Cleanup(func() {
		l.Run(liveCtx(t), "scancel", id)
		l.Run(liveCtx(t), "sh", "-c", "rm -f /tmp/asrpt-signal-[bsd]-"+id)
	})
	l.waitState(t, id, "RUNNING", 90*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(l.run(t, "squeue", "-h", "-s", "-j", id, "-o", "%i"), id+".0") {
		if time.Now().After(deadline) {
			t.Fatalf("job %s: its step never started", id)
		}
		time.Sleep(time.Second)
	}
	time.Sleep(2 * time.Second) // the step's shell has set its trap
	if err := c.SignalJob(ctx, id, "USR1", DeliverSteps); err != nil {
		t.Fatalf("USR1 to the steps: %v", err)
	}
	s := l.waitState(t, id, "COMPLETED", 60*time.Second)
	read := func(m string) string {
		out, _ := l.Run(liveCtx(t), "cat", "/tmp/asrpt-signal-"+m+"-"+id)
		return strings.TrimSpace(out)
	}
	if read("s") != "step" || read("b") != "" || read("d") != "done" {
		t.Errorf("job %s (%s): step marker %q, batch marker %q, done marker %q; want step, none, done",
			id, s["ExitCode"], read("s"), read("b"), read("d"))
	}
}

// ckptScript is a job that checkpoints and requeues itself, as PyTorch
// Lightning's and submitit's do: its step counts seconds of work into a
// progress file, starting from what the file holds; on USR1 the step
// requeues the job and ends, and the job resumes from the file when Slurm
// starts it again. Its batch shell (and srun) ignore USR1, so that a
// signal to the whole job (22.05) stops only the step. Each start appends
// "start N RESTARTS" to the log.
const ckptScript = `#!/bin/sh
trap '' USR1
srun -n1 sh -c '
P=/tmp/asrpt-ckpt-$SLURM_JOB_ID
n=$(cat $P 2>/dev/null || echo 0)
echo "start $n ${SLURM_RESTART_COUNT:-0}" >> $P.log
stop=0
trap "stop=1" USR1
while [ $n -lt 100000 ]; do
	if [ $stop = 1 ]; then scontrol requeue $SLURM_JOB_ID; exit 0; fi
	sleep 1; n=$((n+1)); echo $n > $P
done'
`

// TestLiveSignalRequeue: a checkpointing job signalled through SignalJob
// (to its steps on 24.11+, to the whole job on 22.05) is requeued, starts
// again, and resumes from its progress: the progress never goes back.
// Slurm starts a requeued job about two minutes later (BeginTime), so the
// labs are signalled one after the other first, and their restarts
// awaited afterwards, the two minutes overlapping.
func TestLiveSignalRequeue(t *testing.T) {
	type requeued struct {
		l            *lab
		id, progress string
		at           int // progress at the signal, seconds of work
	}
	var runs []*requeued
	read := func(st *testing.T, l *lab, progress string) int {
		out, err := l.Run(liveCtx(st), "cat", progress)
		if err != nil {
			return 0
		}
		n, _ := strconv.Atoi(strings.TrimSpace(out))
		return n
	}
	for _, v := range slurmlab.Versions {
		t.Run("signal/"+v, func(st *testing.T) {
			l := &lab{slurmlab.Require(st, v)}
			c := l.client(st, "slurmrest")
			d := DeliverSteps
			if !c.SupportsDelivery(d) {
				d = DeliverAll
			}
			script := "/tmp/asrpt-ckpt-" + l.Version + ".sh"
			l.run(st, "sh", "-c", "cat > "+script+" <<'EOF'\n"+ckptScript+"EOF\nchmod 755 "+script)
			id := l.runAs(st, "alice", "sbatch", "--parsable", "--requeue", "-p", l.Partition, "-t", "10", "-o", "/dev/null",
				"-J", "asrpt-it-ckpt", script)
			id, _, _ = strings.Cut(id, ";")
			progress := "/tmp/asrpt-ckpt-" + id
			t.Cleanup(func() { // when the whole test ends, after the resume
				ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
				defer cancel()
				l.Run(ctx, "scancel", id)
				l.Run(ctx, "rm", "-f", progress, progress+".log")
			})
			l.waitState(st, id, "RUNNING", 90*time.Second)
			deadline := time.Now().Add(60 * time.Second)
			for read(st, l, progress) < 5 {
				if time.Now().After(deadline) {
					st.Fatalf("job %s made no progress", id)
				}
				time.Sleep(time.Second)
			}
			if err := c.SignalJob(liveCtx(st), id, "USR1", d); err != nil {
				st.Fatalf("USR1 (%v): %v", d, err)
			}
			at := read(st, l, progress)
			deadline = time.Now().Add(60 * time.Second)
			for l.show(st, id)["Restarts"] != "1" {
				if time.Now().After(deadline) {
					st.Fatalf("job %s not requeued: %v", id, l.show(st, id))
				}
				time.Sleep(time.Second)
			}
			runs = append(runs, &requeued{l, id, progress, at})
		})
	}
	for _, r := range runs {
		t.Run("resume/"+r.l.Version, func(st *testing.T) {
			l, id := r.l, r.id
			l.waitState(st, id, "RUNNING", 240*time.Second)
			deadline := time.Now().Add(60 * time.Second)
			for read(st, l, r.progress) < r.at+3 {
				if time.Now().After(deadline) {
					st.Fatalf("job %s: progress %d after its restart, %d at the signal", id, read(st, l, r.progress), r.at)
				}
				time.Sleep(time.Second)
			}
			starts := strings.Split(l.run(st, "cat", r.progress+".log"), "\n")
			if len(starts) != 2 || starts[0] != "start 0 0" || !strings.HasPrefix(starts[1], "start ") {
				st.Fatalf("starts %q, want two, the first from 0", starts)
			}
			var resumed, restarts int
			if _, err := fmt.Sscanf(starts[1], "start %d %d", &resumed, &restarts); err != nil || resumed < r.at-1 || restarts != 1 {
				st.Errorf("second start %q: resumed at %d with %d restarts, want ≥ %d (progress at the signal, less the second in flight) and 1", starts[1], resumed, restarts, r.at-1)
			}
		})
	}
}
