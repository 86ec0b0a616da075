//go:build integration

package slurmclient

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// trapScript is a batch script that, on USR1 to its batch shell, writes
// its marker file and ends (exit 0); otherwise it sleeps two minutes.
const trapScript = `trap 'echo USR1 > /tmp/asrpt-signal-$SLURM_JOB_ID; exit 0' USR1; sleep 120 & wait`

// submitTrap submits trapScript as alice and returns its id and marker.
func (l *lab) submitTrap(t *testing.T, extra ...string) (id, marker string) {
	t.Helper()
	args := append([]string{"sbatch", "--parsable", "-p", l.Partition, "-t", "10", "-o", "/dev/null",
		"-J", "asrpt-it-signal"}, extra...)
	id = l.runAs(t, "alice", append(args, "--wrap", trapScript)...)
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

		// Submitted held: a hold after the submission may come after
		// slurmctld has started it on an idle lab.
		held, heldMarker := l.submitTrap(t, "--hold")
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
