package sidecar

import (
	"fmt"
	"github.com/asrpt/asrpt/reason"
	"slices"
	"strconv"

	"github.com/asrpt/asrpt/job/jobstate"
	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// Live preemption (policy asrpt-preempt; docs/design.md, "Preempting the
// jobs that can resume"). The policy decides, in the pass the replay runs
// too, which running jobs to stop for the head of the queue; the sidecar
// sends each the stop signal it declared and follows what the job does:
//
//   - A job is preemptible when the policy is asrpt-preempt, Slurm may
//     requeue it (its record's requeue flag), it is a plain job (not an
//     array task, not part of a heterogeneous job), it declares how it
//     stops (its comment's asrpt:preempt=[B:|F:]SIGNAL@SECONDS word, else
//     the first [[preemption.rule]] matching its family, account or QOS),
//     and the REST API can deliver the signal that way (22.05's v0.0.38
//     signals the whole job only: "F:"). It is decided when the job
//     arrives; only jobs the policy holds as running and Slurm runs are
//     candidates: those it started, and those Slurm started before their
//     turn, which the policy adopts (adopt) rather than forgets.
//   - A victim is marked stopping, with the cycle's time, and saved in the
//     state before the signal goes out; a failed save sends nothing. The
//     signal is sent once, never retried, never in a dry run and never
//     after a giveback. In the policy the victim waits in the release
//     queue, held back (Task.Blocked) while Slurm still runs it.
//   - Outcomes (asrpt_preemptions_total{outcome}): requeued (the job is
//     pending again: it is ranked by its remaining work, and the node list
//     asrpt gave it is cleared), finished (it ended within its grace),
//     ignored (still running stopSlack after its grace: it leaves the
//     policy and is never signalled again), failed (the signal could not
//     be sent: the same).

// stopSlack is how long past its grace a signalled job may still run
// before it counts as having ignored the signal: slurmctld's requeue and
// the next job list take a few seconds to a cycle.
func (c Config) stopSlack() float64 { return max(2*c.Interval.Seconds(), 60) }

// Outcomes of a preemption, the label of asrpt_preemptions_total.
const (
	outcomeRequeued = "requeued"
	outcomeFinished = "finished"
	outcomeIgnored  = "ignored"
	outcomeFailed   = "failed"
)

// preempting reports whether the configured policy preempts.
func (c Config) preempting() bool { return c.Policy == "asrpt-preempt" }

// delivery returns the REST delivery of a stop's target.
func delivery(to jobword.Target) slurmclient.Delivery {
	switch to {
	case jobword.ToBatch:
		return slurmclient.DeliverBatch
	case jobword.ToFull:
		return slurmclient.DeliverAll
	}
	return slurmclient.DeliverSteps
}

// optIn decides, from e's record, whether e may be preempted and how it
// stops (e.stop, from e.stopFrom), or why not (e.stopWhy).
func (tr *tracker) optIn(e *entry) {
	e.stop, e.stopFrom, e.stopWhy = jobword.Stop{}, "", reason.Reason{}
	if !tr.cfg.preempting() {
		e.stopWhy = reason.Of(reason.NotPreempting, "policy.name is not asrpt-preempt")
		return
	}
	sj := e.sj
	w := jobword.Parse(sj.Comment)
	switch {
	case w.HasPreempt && w.PreemptErr != nil:
		e.stopWhy = reason.Of(reason.BadPreemptWord, w.PreemptErr.Error())
		return
	case w.HasPreempt:
		e.stop, e.stopFrom = w.Preempt, "comment"
	default:
		n, st := tr.cfg.Preemption.rule(predictor.Family(sj.Name), sj.Account, sj.QOS)
		if n == 0 {
			e.stopWhy = reason.Of(reason.NotOptedIn, "not opted in: no asrpt:preempt word in its comment, no [[preemption.rule]] matches")
			return
		}
		e.stop, e.stopFrom = st, "preemption.rule["+strconv.Itoa(n)+"]"
	}
	switch {
	case !sj.Requeue:
		e.stopWhy = reason.Of(reason.NoRequeue, "Slurm may not requeue it (--no-requeue, or JobRequeue=0)")
	case sj.Shape() != slurmclient.ShapePlain:
		e.stopWhy = reason.Of(reason.PreemptShape, "array tasks and heterogeneous jobs are not preempted")
	case !tr.supportsDelivery(delivery(e.stop.To)):
		e.stopWhy = reason.Of(reason.SignalUnsupported, fmt.Sprintf("this REST API cannot send a signal to the job's %v alone (\"F:\" sends it to the whole job)", e.stop.To))
	}
	if !e.stopWhy.None() {
		e.stopFrom = ""
	}
}

// canStop reports whether e opted in and the way it stops can be used.
func (e *entry) canStop() bool { return e.stopFrom != "" && e.stopWhy.None() }

// armPreemption sets each task's Preemptible for this cycle's pass: only
// a job that opted in, that the policy started and Slurm runs, and only
// while the sidecar has not handed its jobs back.
func (tr *tracker) armPreemption() {
	on := tr.cfg.preempting() && !tr.givenBack.Load()
	for _, e := range tr.entries {
		if e.task != nil {
			e.task.Preemptible = on && e.canStop() && e.ph == phRunning && e.sj != nil && e.sj.State == jobstate.Running
		}
	}
}

// stopping marks the jobs the policy's pass preempted: stopping, held back
// in the policy, to be signalled by this cycle's apply (cyclePlan.stops).
func (tr *tracker) stopping(t float64, preempted []*policy.Task) {
	tr.stops = tr.stops[:0]
	for _, task := range preempted {
		e := tr.byTask[task]
		if e == nil {
			continue
		}
		e.ph, e.placed, e.signalSent = phStopping, false, false
		e.preemptions = task.Preemptions
		e.signalledAt = t
		task.Blocked = true
		tr.stops = append(tr.stops, e)
		tr.dirty = true
	}
}

// watchStop follows a signalled job that Slurm still does not show
// pending at t: one still running stopSlack after its grace ignored the
// signal; one stopped in a dry run (never signalled) leaves the policy at
// once.
func (tr *tracker) watchStop(t float64, e *entry) {
	switch {
	case !e.signalSent:
		tr.withdraw(t, e, reason.Of(reason.Withdrawn, "preempted in a dry run: no signal was sent"), false)
	case t-e.signalledAt > float64(e.stop.Grace)+tr.cfg.stopSlack():
		tr.note(event{kind: evPreemptOutcome, job: e.id, outcome: outcomeIgnored, signal: e.stop.Signal, grace: e.stop.Grace})
		tr.withdraw(t, e, reason.Of(reason.PreemptFailed, "ignored the preemption signal"), false)
		e.stopWhy, e.stopFrom, e.signalSent = reason.Of(reason.PreemptFailed, "it ignored a preemption signal"), "", false
	}
}

// requeued handles a stopping job Slurm shows pending again: it waits in
// the policy, where it already is, ranked by its remaining work; after a
// restart of the sidecar (the policy does not hold it) it is idle and
// arrives again with its count of preemptions.
func (tr *tracker) requeued(e *entry) {
	if e.signalSent {
		tr.note(event{kind: evPreemptOutcome, job: e.id, outcome: outcomeRequeued, preemptions: e.preemptions})
	}
	e.signalSent = false
	tr.dirty = true
	if e.task == nil {
		e.ph = phIdle
		return
	}
	e.ph = phQueued
}

// unpin reports whether e, waiting again after asrpt preempted it, still
// holds the node list asrpt gave it for its last run: it is cleared, so
// that its next run goes where its next turn places it.
func unpin(e *entry) bool {
	return e.ph == phQueued && e.preemptions > 0 && e.wroteNodes && !e.ownNodes && e.sj != nil &&
		len(e.sj.RequiredNodes) > 0 && slices.Equal(e.sj.RequiredNodes, e.nodes)
}

// adopt takes e, waiting in the policy, which Slurm started before its
// turn, into the policy's running jobs (policy.Adopter), from its start in
// Slurm on the GPUs Slurm gave it, so that it may be preempted like a job
// the policy started; asrpt-preempt only (the other policies forget such
// a job). It reports whether it did.
func (tr *tracker) adopt(t float64, e *entry) bool {
	ad, ok := tr.pol.(policy.Adopter)
	if !ok || !tr.cfg.preempting() || e.task == nil || e.sj == nil || e.sj.State != jobstate.Running {
		return false
	}
	start := t
	if !e.sj.Start.IsZero() {
		start = min(unixSeconds(e.sj.Start), t)
	}
	p := tr.nodes.heldPlacement(e.sj, e.task.GPUs)
	if !ad.Adopt(t, e.task, start, p) {
		return false
	}
	e.ph, e.place, e.placed, e.notPending = phRunning, p, len(p.Slots) > 0, 0
	tr.dirty = true
	tr.note(event{kind: evAdopted, job: e.id})
	return true
}

// heldBy sets the placement of e, which Slurm has just started for the
// policy (seen at t), to the GPUs Slurm gave it when they are known, and
// its start to Slurm's (asrpt-preempt only): a preemption gives back the
// GPUs the job holds, which may not be those the policy chose (a job that
// names its nodes, an array), and the exemption counts from its start in
// Slurm, a cycle or more after its dispatch.
func (tr *tracker) heldBy(t float64, e *entry) {
	if !tr.cfg.preempting() || e.task == nil || e.sj == nil {
		return
	}
	if p := tr.nodes.heldPlacement(e.sj, e.task.GPUs); len(p.Slots) > 0 {
		e.task.Placement, e.place, e.placed = p, p, true
	}
	if !e.sj.Start.IsZero() {
		if st := unixSeconds(e.sj.Start); st > e.task.Start && st <= t {
			e.task.Start = st
		}
	}
}
