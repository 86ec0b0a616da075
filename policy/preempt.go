package policy

import (
	"fmt"
	"math"
	"slices"

	"github.com/asrpt/asrpt/placement"
)

// asrpt-preempt is A-SRPT's revised dispatch with opt-in preemption
// (docs/design.md, "Preempting the jobs that can resume"): the order is
// A-SRPT's, and a pass may stop running jobs that opted in (Task.Preemptible)
// to start the head of the release queue when it cannot start otherwise.
//
// A running job j that opted in is a candidate when it has run at least
// Params.PreemptExempt seconds since its last start, been stopped fewer
// than Params.MaxPreemptions times, and asks for no more GPUs than the job
// it would make way for. Its key is the virtual work it is expected to
// hold the cluster for: (g_j/G)·(left_j + RestartCost), where left_j is
// its predicted remaining run time, or, once it has outrun its prediction,
// the time it has run so far (as the running set's doubling rule expects
// it to run as long again: Tiresias' attained service). A pass finds the
// head h (the first released job that is not held back); when h does not
// fit in the free GPUs, it stops the candidates whose key exceeds
// PreemptMargin times h's virtual size, the largest key first, until h's
// GPUs are free, at most Params.PreemptBudget of them, and only if that
// frees enough GPUs and h then places. A stopped job goes back to the
// release queue keyed by its remaining virtual work (left_j +
// RestartCost), is not started again in the pass that stopped it, and is
// watched by the site's fixed wait bounds (WaitLimit, WaitFactor) counted
// from its stop.
//
// What a job that opted in is promised: it is stopped at most
// MaxPreemptions times, never within PreemptExempt of a start, never while
// the cluster has room for the job it would make way for, never for a job
// narrower than itself (so the GPUs it needs to restart are no harder to
// find than those it gave up), and only for a job with under
// 1/PreemptMargin of its remaining virtual work. Once stopped it ranks as
// a job of its remaining work submitted then, under the wait bounds the
// site set; with none set (the replay's default) it can wait behind a
// stream of smaller work, as any large job under SRPT can.

// maxCandidates bounds how many running jobs one preemption step looks at
// (the first ones of the running set by predicted end, latest first).
const maxCandidates = 1024

// progress returns the work running t has done since its last start, in
// seconds at α_min: none during the restart cost of a restart.
func (a *asrpt) progress(now float64, t *Task) float64 {
	ran := now - t.Start
	if t.Preemptions > 0 {
		ran -= a.env.Params.RestartCost
	}
	if ran <= 0 || t.Alpha <= 0 {
		return 0
	}
	return ran * t.AlphaMin / t.Alpha
}

// leftKey returns the key of a job that has done served seconds of work
// (at α_min): (g/G)·(left + RestartCost), where left is its predicted
// remaining run time, or served once it has outrun its prediction.
func (a *asrpt) leftKey(t *Task, served float64) float64 {
	return float64(t.GPUs) / float64(a.env.G) * (a.leftRun(t, served) + a.env.Params.RestartCost)
}

// leftRun returns the predicted remaining run time, seconds at α_min, of
// a job that has done served seconds of work: its ranked prediction less
// served, or served once it has outrun the prediction.
func (a *asrpt) leftRun(t *Task, served float64) float64 {
	if left := t.Ranked() - served; left > 0 {
		return left
	}
	return served
}

// preemptKey returns running t's key at now: its remaining virtual work in
// seconds, restart cost included.
func (a *asrpt) preemptKey(now float64, t *Task) float64 {
	return a.leftKey(t, t.served+a.progress(now, t))
}

// requeuedSize returns the key of t, waiting after a preemption, for a new
// estimate: its remaining virtual work from the work it has done.
func (a *asrpt) requeuedSize(t *Task) float64 { return a.leftKey(t, t.served) }

// preemptible reports whether running t may be stopped at now.
func (a *asrpt) preemptible(now float64, t *Task) bool {
	p := a.env.Params
	return t.Preemptible && t.Preemptions < p.MaxPreemptions && now-t.Start >= p.PreemptExempt-timeEpsilon
}

// head returns the first released job of the order that is not held back
// (by Slurm, or after a stop for Params.RequeueDelay).
func (a *asrpt) head(now float64) (*Task, bool) {
	var h *Task
	a.queue.Ascend(func(t *Task) bool {
		if t.Blocked || (a.env.Params.RequeueDelay > 0 && a.stoppedNow(now, t)) {
			return true
		}
		h = t
		return false
	})
	return h, h != nil
}

// preempt is the preemption step of a pass: it stops the running jobs that
// make way for the head (giving their GPUs back to free) and returns them.
func (a *asrpt) preempt(now float64, free *placement.Free) []*Task {
	p := a.env.Params
	a.requeued(now) // drops the holds that ended
	if p.PreemptBudget <= 0 || p.MaxPreemptions <= 0 {
		return nil
	}
	h, ok := a.head(now)
	if !ok || h.GPUs <= free.Total() {
		return nil
	}
	need := h.GPUs - free.Total()
	type cand struct {
		t   *Task
		key float64
	}
	var cands []cand
	n := 0
	a.run.tree.ascend(func(t *Task) bool {
		if n++; n > maxCandidates {
			return false
		}
		if a.preemptible(now, t) && t.GPUs <= h.GPUs {
			if k := a.preemptKey(now, t); k > p.PreemptMargin*h.virtual {
				cands = append(cands, cand{t, k})
			}
		}
		return true
	})
	slices.SortFunc(cands, func(x, y cand) int {
		switch {
		case x.key > y.key:
			return -1
		case x.key < y.key:
			return 1
		}
		return x.t.Seq - y.t.Seq
	})
	freed, k := 0, 0
	for k < len(cands) && k < p.PreemptBudget && freed < need {
		freed += cands[k].t.GPUs
		k++
	}
	if freed < need {
		return nil
	}
	victims := a.victims[:0]
	for _, c := range cands[:k] {
		if err := free.Give(&c.t.Placement); err != nil {
			a.env.fail(c.t, fmt.Errorf("preemption: %w", err))
			a.giveBack(victims, free)
			return nil
		}
		victims = append(victims, c.t)
	}
	if _, _, ok := a.place(h, free); !ok {
		// The freed GPUs do not make a placement for h (its nodes or
		// GPU kinds): nobody is stopped.
		a.giveBack(victims, free)
		return nil
	}
	for i, t := range victims {
		a.run.remove(t)
		t.running = false
		t.served += a.progress(now, t)
		t.Preemptions++
		t.stopped = now
		a.holds = append(a.holds, now)
		// Back to the release queue, keyed by its remaining virtual work.
		t.virtual = cands[i].key
		a.release(t, now)
		// The site's wait bounds hold from the stop, as for a job of its
		// remaining run time submitted then.
		a.wait.addFrom(t, now, a.leftRun(t, t.served))
	}
	a.victims = victims
	return victims
}

// giveBack takes the placements of the jobs a preemption step gave back
// to free again: the step stops nobody.
func (a *asrpt) giveBack(victims []*Task, free *placement.Free) {
	for _, t := range victims {
		if err := free.Take(&t.Placement); err != nil {
			a.env.fail(t, fmt.Errorf("preemption undone: %w", err))
		}
	}
	a.victims = victims[:0]
}

// stoppedNow reports a job preempted at now, or less than
// Params.RequeueDelay before: it is not started again in the pass that
// stopped it, nor while Slurm holds it after its requeue.
func (a *asrpt) stoppedNow(now float64, t *Task) bool {
	return t.Preemptions > 0 && now-t.stopped <= a.env.Params.RequeueDelay+timeEpsilon
}

// requeued returns the end of the hold after the last stop, or +Inf when
// no stopped job waits for it (Params.RequeueDelay): the next time a pass
// may start one. Stops are kept in the order made; those past are
// dropped.
func (a *asrpt) requeued(now float64) float64 {
	d := a.env.Params.RequeueDelay
	for len(a.holds) > 0 && a.holds[0]+d+timeEpsilon < now {
		a.holds = a.holds[1:]
	}
	if len(a.holds) == 0 || d <= 0 {
		return math.Inf(1)
	}
	return a.holds[0] + d + 2*timeEpsilon
}
