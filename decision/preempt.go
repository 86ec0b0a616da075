package decision

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/asrpt/asrpt/reason"

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
func (c Settings) stopSlack() float64 { return max(2*c.Interval.Seconds(), 60) }

// Outcomes of a preemption, the label of asrpt_preemptions_total.
const (
	OutcomeRequeued = "requeued"
	OutcomeFinished = "finished"
	OutcomeIgnored  = "ignored"
	OutcomeFailed   = "failed"
)

// preempting reports whether the configured policy preempts.
func (c Settings) preempting() bool { return c.Policy == "asrpt-preempt" }

// Delivery returns the REST Delivery of a stop's target.
func Delivery(to jobword.Target) slurmclient.Delivery {
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
func (tr *State) optIn(e *Entry) {
	e.Stop, e.StopFrom, e.StopWhy = jobword.Stop{}, "", reason.Reason{}
	if !tr.cfg.preempting() {
		e.StopWhy = reason.Of(reason.NotPreempting, "policy.name is not asrpt-preempt")
		return
	}
	sj := e.Record
	w := jobword.Parse(sj.Comment)
	switch {
	case w.HasPreempt && w.PreemptErr != nil:
		e.StopWhy = reason.Of(reason.BadPreemptWord, w.PreemptErr.Error())
		return
	case w.HasPreempt:
		e.Stop, e.StopFrom = w.Preempt, "comment"
	default:
		n, st := tr.cfg.Preemption.rule(predictor.Family(sj.Name), sj.Account, sj.QOS)
		if n == 0 {
			e.StopWhy = reason.Of(reason.NotOptedIn, "not opted in: no asrpt:preempt word in its comment, no [[preemption.rule]] matches")
			return
		}
		e.Stop, e.StopFrom = st, "preemption.rule["+strconv.Itoa(n)+"]"
	}
	switch {
	case !sj.Requeue:
		e.StopWhy = reason.Of(reason.NoRequeue, "Slurm may not requeue it (--no-requeue, or JobRequeue=0)")
	case e.shape != slurmclient.ShapePlain:
		e.StopWhy = reason.Of(reason.PreemptShape, "array tasks and heterogeneous jobs are not preempted")
	case !tr.supportsDelivery(Delivery(e.Stop.To)):
		e.StopWhy = reason.Of(reason.SignalUnsupported, fmt.Sprintf("this REST API cannot send a signal to the job's %v alone (\"F:\" sends it to the whole job)", e.Stop.To))
	}
	if !e.StopWhy.None() {
		e.StopFrom = ""
	}
}

// CanStop reports whether e opted in and the way it stops can be used.
func (e *Entry) CanStop() bool { return e.StopFrom != "" && e.StopWhy.None() }

// armPreemption sets each task's Preemptible for this cycle's pass: only
// a job that opted in, that the policy started and Slurm runs, and only
// while the sidecar has not handed its jobs back.
func (tr *State) armPreemption() {
	on := tr.cfg.preempting() && !tr.givenBack.Load()
	for _, e := range tr.Entries {
		if e.Task != nil {
			e.Task.Preemptible = on && e.CanStop() && e.Phase == PhRunning && e.Record != nil && e.Record.State == jobstate.Running
		}
	}
}

// stopping marks the jobs the policy's pass preempted: stopping, held back
// in the policy, to be signalled by this cycle's apply (Plan.Stops).
func (tr *State) stopping(t float64, preempted []*policy.Task) {
	tr.stops = tr.stops[:0]
	for _, task := range preempted {
		e := tr.byTask[task]
		if e == nil {
			continue
		}
		e.Phase, e.placed, e.SignalSent = PhStopping, false, false
		e.Preemptions = task.Preemptions
		e.signalledAt = t
		task.Blocked = true
		tr.stops = append(tr.stops, e)
		tr.Dirty = true
	}
}

// watchStop follows a signalled job that Slurm still does not show
// pending at t: one still running stopSlack after its grace ignored the
// signal; one stopped in a dry run (never signalled) leaves the policy at
// once.
func (tr *State) watchStop(t float64, e *Entry) {
	switch {
	case !e.SignalSent:
		tr.withdraw(t, e, reason.Of(reason.Withdrawn, "preempted in a dry run: no signal was sent"), false)
	case t-e.signalledAt > float64(e.Stop.Grace)+tr.cfg.stopSlack():
		tr.note(Event{Kind: EvPreemptOutcome, Job: e.ID, Outcome: OutcomeIgnored, Signal: e.Stop.Signal, Grace: e.Stop.Grace})
		tr.withdraw(t, e, reason.Of(reason.PreemptFailed, "ignored the preemption signal"), false)
		e.StopWhy, e.StopFrom, e.SignalSent = reason.Of(reason.PreemptFailed, "it ignored a preemption signal"), "", false
	}
}

// requeued handles a stopping job Slurm shows pending again: it waits in
// the policy, where it already is, ranked by its remaining work; after a
// restart of the sidecar (the policy does not hold it) it is idle and
// arrives again with its count of preemptions.
func (tr *State) requeued(e *Entry) {
	if e.SignalSent {
		tr.note(Event{Kind: EvPreemptOutcome, Job: e.ID, Outcome: OutcomeRequeued, Preemptions: e.Preemptions})
	}
	e.SignalSent = false
	tr.Dirty = true
	if e.Task == nil {
		e.Phase = PhIdle
		return
	}
	e.Phase = PhQueued
}

// unpin reports whether e, waiting again after asrpt preempted it, still
// holds the node list asrpt gave it for its last run: it is cleared, so
// that its next run goes where its next turn places it.
func unpin(e *Entry) bool {
	return e.Phase == PhQueued && e.Preemptions > 0 && e.WroteNodes && !e.OwnNodes && e.Record != nil &&
		len(e.Record.RequiredNodes) > 0 && slices.Equal(e.Record.RequiredNodes, e.Nodes)
}

// adopt takes e, waiting in the policy, which Slurm started before its
// turn, into the policy's running jobs (policy.Adopter), from its start in
// Slurm on the GPUs Slurm gave it, so that it may be preempted like a job
// the policy started; asrpt-preempt only (the other policies forget such
// a job). It reports whether it did.
func (tr *State) adopt(t float64, e *Entry) bool {
	ad, ok := tr.pol.(policy.Adopter)
	if !ok || !tr.cfg.preempting() || e.Task == nil || e.Record == nil || e.Record.State != jobstate.Running {
		return false
	}
	start := t
	if !e.Record.Start.IsZero() {
		start = min(unixSeconds(e.Record.Start), t)
	}
	p := tr.nodes.heldPlacement(e.Record, e.Task.GPUs)
	if !ad.Adopt(t, e.Task, start, p) {
		return false
	}
	e.Phase, e.place, e.placed, e.notPending = PhRunning, p, len(p.Slots) > 0, 0
	tr.Dirty = true
	tr.note(Event{Kind: EvAdopted, Job: e.ID})
	return true
}

// heldBy sets the placement of e, which Slurm has just started for the
// policy (seen at t), to the GPUs Slurm gave it when they are known, and
// its start to Slurm's (asrpt-preempt only): a preemption gives back the
// GPUs the job holds, which may not be those the policy chose (a job that
// names its nodes, an array), and the exemption counts from its start in
// Slurm, a cycle or more after its dispatch.
func (tr *State) heldBy(t float64, e *Entry) {
	if !tr.cfg.preempting() || e.Task == nil || e.Record == nil {
		return
	}
	if p := tr.nodes.heldPlacement(e.Record, e.Task.GPUs); len(p.Slots) > 0 {
		e.Task.Placement, e.place, e.placed = p, p, true
	}
	if !e.Record.Start.IsZero() {
		if st := unixSeconds(e.Record.Start); st > e.Task.Start && st <= t {
			e.Task.Start = st
		}
	}
}
