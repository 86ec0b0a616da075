package decision

import (
	"fmt"

	"github.com/asrpt/asrpt/reason"

	"github.com/asrpt/asrpt/slurmclient"
)

// AbsentCycles is how many consecutive job lists a tracked job must be
// missing from before the sidecar takes it for finished (unless accounting
// reports its end first, which ends it at once). One list without a job
// proves little: a restarting slurmctld can answer 200 with no jobs, and a
// job forgotten too early loses its sequence number, its virtual progress
// and the record of what asrpt wrote to it (its site factor, which no REST
// call reports). With interval = 30 s a job that really ended is let go
// after about 90 s; meanwhile it keeps its place and gets no writes.
const AbsentCycles = 3

// StartedCycles is how many consecutive job lists must show a queued job
// not pending (running) before it is withdrawn from the policy as
// started by Slurm before its turn. A job that flaps between PENDING and
// RUNNING from one list to the next keeps its place (and everyone else's
// site factor) instead of leaving and re-arriving each cycle, which would
// rewrite the factors of the jobs behind it every cycle. It gets no
// writes while a list shows it not pending.
const StartedCycles = 2

// suspectMinJobs and the half rule decide when a job list is suspect: a
// list that shows fewer than half of the tracked jobs the sidecar expects
// (those not yet absent for AbsentCycles lists and not reported ended by
// accounting), when it expects at least suspectMinJobs. A suspect list
// changes nothing but the absence counts: no arrival, no departure, no
// decision, no write; the incident is logged once and each such list
// counted (asrpt_suspect_job_lists_total). A queue that really shrank that
// much is accepted AbsentCycles lists later (or as soon as accounting
// reports the ends), when the missing jobs no longer count as expected.
const suspectMinJobs = 4

// suspect reports why jobs, this cycle's job list, is suspect (nil when
// it is not: see suspectMinJobs). On a suspect list it counts the
// absences (so that a queue that really emptied is accepted after
// AbsentCycles lists) and changes nothing else.
//
// It stamps the tracked jobs that jobs lists, and those whose records the
// client skipped (Unreadable), with a new list number: e.listed ==
// tr.lists says that e is listed.
func (tr *State) suspect(jobs []slurmclient.Job) error {
	tr.lists++
	present := 0
	mark := func(id string) {
		if e := tr.Entries[id]; e != nil && e.listed != tr.lists {
			e.listed = tr.lists
			present++
		}
	}
	for i := range jobs {
		mark(jobs[i].ID)
	}
	for id := range tr.Unreadable {
		mark(id)
	}
	expected := present
	for id, e := range tr.Entries {
		if e.listed != tr.lists && !tr.ended[id] && e.absent+1 < AbsentCycles {
			expected++
		}
	}
	if expected < suspectMinJobs || 2*present >= expected {
		return nil
	}
	for _, e := range tr.Entries {
		if e.listed == tr.lists {
			e.absent = 0
		} else {
			e.absent++
		}
	}
	return fmt.Errorf("the job list shows %d of the %d tracked jobs expected (%d listed in all)", present, expected, len(jobs))
}

// maxLostAge bounds, in seconds, how long a job that may hold a value of
// asrpt's (a site factor, a priority, a node list) is kept once it has been
// missing from AbsentCycles job lists with no accounting record of its end:
// a week. Until then it stays tracked (out of the policy, parked with its
// virtual work) so that a giveback can still undo what asrpt wrote, and it
// rejoins where it was if it shows up again; accounting reporting its end
// lets it go at once.
const maxLostAge = 7 * 24 * 3600

// holdsWrites reports whether asrpt may have left a value on e that a
// giveback would undo.
func (e *Entry) holdsWrites() bool {
	return e.Prio != 0 || e.Factor != 0 || e.MayFactor || e.MayPrio || (e.WroteNodes && !e.OwnNodes) || len(e.HetFactor) > 0
}

// keepLost reports whether e, missing from AbsentCycles lists, is kept
// (see maxLostAge) rather than taken for finished; a kept job leaves the
// policy once, parked if it was waiting, and gets no writes.
func (tr *State) keepLost(t float64, e *Entry) bool {
	if tr.ended[e.ID] || !e.lastPending || !e.holdsWrites() {
		return false
	}
	if e.lostSince == 0 {
		e.lostSince = t
		switch e.Phase {
		case PhQueued:
			tr.withdraw(t, e, reason.Of(reason.Withdrawn, "missing from the job list"), true)
		case PhDispatched, PhRunning:
			tr.leavePolicy(t, e, reason.Of(reason.Withdrawn, "missing from the job list"))
		}
		tr.Dirty = true
		tr.note(Event{Kind: EvKeptLost, Job: e.ID})
	}
	return t-e.lostSince < maxLostAge
}

// gone reports whether absent tracked job e is to be taken for finished:
// accounting reported its end, or it has been missing from AbsentCycles
// lists in a row (counting this one). A job whose record the client
// skipped is not missing.
func (tr *State) gone(e *Entry) bool {
	if tr.Unreadable[e.ID] {
		e.absent = 0
		return false
	}
	e.absent++
	return tr.ended[e.ID] || e.absent >= AbsentCycles
}
