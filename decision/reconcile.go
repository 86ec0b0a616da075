package decision

import (
	"cmp"
	"math"
	"slices"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// admitted reports whether a record of class c, tracked as e (nil when
// not tracked), may be managed, and why not: as c says, unless an admin
// set the job's priority.
func admitted(c class, e *Entry) (bool, reason.Reason) {
	switch {
	case !c.ok:
		return false, c.why
	case e != nil && e.HandsOff:
		return false, reason.Of(reason.AdminPriority, "priority set by an admin")
	}
	return true, reason.Reason{}
}

// reconcile brings the tracked jobs and the policy up to date with Slurm's
// queue, counts the jobs it shows by state in seen (CycleReport.Jobs) and
// returns the number of arrivals. The view of the jobs must be built
// (newQueueView).
func (tr *State) reconcile(t float64, jobs []slurmclient.Job, seen map[string]int) int {
	for _, e := range tr.Entries {
		e.Record = nil
	}
	var arrivals []*Entry
	for i := range jobs {
		sj := &jobs[i]
		if i > 0 && jobs[i-1].ID == sj.ID {
			continue // listed twice (the client orders jobs by id): counted once
		}
		e := tr.Entries[sj.ID]
		switch {
		case sj.Pending() && sj.Held:
			seen["held"]++
		case sj.Pending():
			seen["pending"]++
		default:
			seen["running"]++
		}
		c := tr.view.classify(sj)
		if e == nil {
			switch {
			case c.ok:
				e = &Entry{ID: sj.ID, Record: sj, OwnNodes: len(sj.RequiredNodes) > 0, heldBack: c.heldBack, gpus: c.gpus, shape: c.shape, base: sj.Priority, lastPending: true}
				tr.Entries[sj.ID] = e
				arrivals = append(arrivals, e)
			case c.standable:
				e = &Entry{ID: sj.ID, Record: sj, Phase: PhIdle, Why: c.why, standing: true, heldBack: c.heldBack, gpus: c.gpus, shape: c.shape,
					base: sj.Priority, OwnNodes: len(sj.RequiredNodes) > 0, lastPending: true}
				tr.Entries[sj.ID] = e
				tr.Dirty = true
			case c.why.Code == reason.OutOfScope:
				seen["out_of_scope"]++
			}
			continue
		}
		e.Record, e.absent, e.lostSince, e.lastPending = sj, 0, 0, sj.Pending()
		delete(tr.ended, sj.ID)
		e.heldBack, e.gpus, e.shape = c.heldBack, c.gpus, c.shape
		if !sj.Pending() {
			switch e.Phase {
			case PhDispatched:
				e.Phase = PhRunning
				tr.Dirty = true
				tr.heldBy(t, e) // where and since when Slurm runs it
			case PhQueued:
				// Withdrawn only when StartedCycles lists in a row show it
				// not pending: a flapping job keeps its place.
				if e.notPending++; e.notPending >= StartedCycles && !tr.adopt(t, e) {
					tr.withdraw(t, e, reason.Of(reason.Withdrawn, "started by Slurm before its turn"), false)
				}
			case PhStopping:
				tr.watchStop(t, e)
			}
			continue
		}
		e.notPending = 0
		// A priority of 0 on a job that is not held is no value at all (a
		// response without one, or out of range): it proves nothing.
		if e.Prio != 0 && !sj.Held && !e.HandsOff && sj.Priority != 0 && sj.Priority != e.Prio {
			e.HandsOff = true
			tr.Dirty = true
			tr.note(Event{Kind: EvHandsOff, Job: e.ID, Wrote: e.Prio, Now: sj.Priority})
		}
		ok, why := admitted(c, e)
		if c.shape == slurmclient.ShapeArrayRemainder {
			if e.Phase == PhDispatched && e.tasks != "" && sj.Array.Tasks != e.tasks {
				// A task of the array whose turn had come has started: the
				// rest of the array arrives again as its next task.
				tr.leavePolicy(t, e, reason.Of(reason.Withdrawn, "array task started"))
			}
			e.tasks = sj.Array.Tasks
		}
		if e.Phase == PhStopping {
			tr.requeued(e)
		}
		switch e.Phase {
		case PhQueued:
			if !ok {
				tr.withdraw(t, e, why, true)
			}
		case PhDispatched:
			switch {
			case !ok:
				tr.leavePolicy(t, e, why)
			case e.heldBack != "":
				// Its turn came, then Slurm held it back (a limit reached
				// by the jobs that started meanwhile): it gives its GPUs
				// up and is ranked again.
				tr.leavePolicy(t, e, reason.Of(reason.HeldBack, "held back by Slurm after its turn came: "+e.heldBack))
				arrivals = append(arrivals, e)
			}
		case PhRunning: // requeued
			tr.leavePolicy(t, e, reason.Of(reason.Withdrawn, "requeued"))
			if ok {
				arrivals = append(arrivals, e)
			}
		case PhIdle:
			if ok {
				arrivals = append(arrivals, e)
			}
		}
	}
	for _, e := range tr.Entries {
		if e.Record == nil && tr.gone(e) {
			if tr.keepLost(t, e) {
				continue
			}
			tr.vanish(t, e)
		}
	}
	slices.SortFunc(arrivals, func(a, b *Entry) int {
		if c := a.Record.Submit.Compare(b.Record.Submit); c != 0 {
			return c
		}
		return CompareID(a.ID, b.ID)
	})
	n := 0
	for _, e := range arrivals {
		if e.Parked && tr.rejoin(t, e) || !e.Parked && tr.arrive(t, e) {
			n++
		}
	}
	for _, e := range tr.Entries {
		if e.Task != nil {
			e.Task.Blocked = e.heldBack != "" || e.Phase == PhStopping
		}
		if e.heldBack != "" && e.Task != nil {
			seen["held_back"]++
		}
		if e.standing && e.Record != nil {
			seen["standing"]++
		}
		switch {
		case e.HandsOff:
			seen["hands_off"]++
		case e.Phase == PhDispatched:
			seen["dispatched"]++
			seen["managed"]++
		case e.Phase == PhQueued:
			seen["managed"]++
		}
	}
	return n
}

// CompareID orders job ids numerically when they are numbers of any
// length, and as strings otherwise.
func CompareID(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// toJob converts a Slurm job to the project's record.
func toJob(sj *slurmclient.Job) job.Job {
	return job.Job{ID: sj.ID, Submit: unixSeconds(sj.Submit), User: sj.User, Name: sj.Name,
		Account: sj.Account, Partition: sj.Partition, QOS: sj.QOS, GPUs: sj.GPUs.Total,
		TimeLimit: sj.TimeLimit.Seconds(), State: sj.State, ArrayJobID: sj.Array.JobID,
		Command: sj.Command}
}

// arrive predicts e and hands it to the policy.
func (tr *State) arrive(t float64, e *Entry) bool {
	e.standing = false
	e.job = toJob(e.Record)
	e.job.GPUs = e.gpus
	e.tasks = e.Record.Array.Tasks
	e.Est = tr.pred.Predict(&e.job)
	e.prof = tr.profiles.Resolve(e.Record.Comment, e.family(), e.job.Account, max(e.job.GPUs, 1))
	e.job.Profile = e.prof.Model
	tr.note(Event{Kind: EvProfile, Job: e.ID, Source: string(e.prof.Source), Problem: e.prof.Problem,
		ProblemKind: e.prof.ProblemKind, Profile: e.prof.Model})
	tr.optIn(e)
	e.Seq = tr.nextSeq
	tr.nextSeq++
	e.Released, e.Parked, e.remaining = false, false, 0
	return tr.enter(t, e, func(task *policy.Task) { tr.pol.Arrive(t, task) })
}

// rejoin puts a parked job back into the policy with the virtual work it
// had left when it was withdrawn (a released job rejoins the end of the
// release queue).
func (tr *State) rejoin(t float64, e *Entry) bool {
	released, remaining := e.Released, e.remaining
	e.Parked, e.remaining = false, 0
	return tr.enter(t, e, func(task *policy.Task) { tr.pol.Restore(t, task, remaining, released) })
}

// enter creates e's task with e.Est and hands it to the policy by add.
func (tr *State) enter(t float64, e *Entry, add func(*policy.Task)) bool {
	task, err := tr.env.NewLiveTask(&e.job, e.Seq, e.Est, e.prof.Profile)
	if err != nil {
		e.Phase, e.Why = PhIdle, reason.Of(reason.NotSchedulable, err.Error())
		tr.note(Event{Kind: EvNotSchedulable, Job: e.ID, Err: err})
		return false
	}
	task.Preemptions = e.Preemptions
	add(task)
	e.Task, e.Phase, e.Why = task, PhQueued, reason.Reason{}
	tr.byTask[task] = e
	tr.Dirty = true
	return true
}

// withdraw takes a waiting job out of the policy and keeps e as idle;
// park keeps its virtual work left so that it can rejoin where it was.
func (tr *State) withdraw(t float64, e *Entry, why reason.Reason, park bool) {
	if e.Task != nil {
		if park {
			e.Parked, e.remaining = true, e.Task.VirtualRemaining()
			e.Released = !math.IsNaN(e.Task.Released)
		}
		tr.pol.Withdraw(t, e.Task)
		delete(tr.byTask, e.Task)
		e.Task = nil
	}
	e.Phase, e.Why = PhIdle, why
	tr.Dirty = true
}

// leavePolicy finishes a task the policy holds as running and keeps e as
// idle.
func (tr *State) leavePolicy(t float64, e *Entry, why reason.Reason) {
	if e.Task != nil {
		tr.pol.Finish(t, e.Task)
		delete(tr.byTask, e.Task)
		e.Task = nil
	}
	e.Phase, e.Why, e.placed, e.Parked = PhIdle, why, false, false
	tr.Dirty = true
}

// releases marks the jobs the virtual machine released since the last
// call and returns how many (released), with the number of waiting jobs
// it has not released yet (virtual), in one pass over the policy's jobs.
func (tr *State) releases() (released, virtual int) {
	for t, e := range tr.byTask {
		if math.IsNaN(t.Released) {
			if e.Phase == PhQueued {
				virtual++
			}
			continue
		}
		if !e.Released {
			e.Released = true
			released++
		}
	}
	return released, virtual
}

// vanish handles a job Slurm no longer lists (finished or cancelled):
// one accounting reported ended, or missing from AbsentCycles lists in a
// row (see gone).
func (tr *State) vanish(t float64, e *Entry) {
	tr.Dirty = true
	defer delete(tr.ended, e.ID)
	switch e.Phase {
	case PhQueued:
		tr.withdraw(t, e, reason.Of(reason.Withdrawn, "gone"), false)
	case PhDispatched, PhRunning, PhStopping:
		if !tr.ended[e.ID] { // else its accounting record was seen
			tr.finished[e.ID] = finishedJob{est: e.Est.Seconds, since: t}
		}
		if e.Phase == PhStopping && e.SignalSent {
			tr.note(Event{Kind: EvPreemptOutcome, Job: e.ID, Outcome: OutcomeFinished})
		}
		if e.Task != nil {
			if e.Phase == PhStopping {
				tr.pol.Withdraw(t, e.Task) // waiting in the policy
			} else {
				tr.pol.Finish(t, e.Task)
			}
			delete(tr.byTask, e.Task)
		}
	}
	delete(tr.Entries, e.ID)
}
