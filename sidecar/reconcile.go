package sidecar

import (
	"cmp"
	"math"
	"slices"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// eligible reports whether a Slurm job may be managed, and why not.
func (tr *tracker) eligible(sj *slurmclient.Job, e *entry) (bool, reason.Reason) {
	if !sj.Pending() {
		return false, reason.Of(reason.NotPending, "not pending")
	}
	if ok, why := tr.view.manageable(sj); !ok {
		return false, why
	}
	g := tr.view.gpus(sj)
	switch {
	case sj.Held:
		return false, reason.Of(reason.Held, "held")
	case g <= 0:
		return false, reason.Of(reason.NoGPUs, "no GPUs")
	case !tr.cfg.Scope.Contains(sj.Partition, sj.QOS, sj.Account):
		return false, reason.Of(reason.OutOfScope, "out of scope")
	case g > tr.env.G:
		return false, reason.Of(reason.LargerThanCluster, "larger than the cluster")
	case e != nil && e.handsOff:
		return false, reason.Of(reason.AdminPriority, "priority set by an admin")
	}
	return true, reason.Reason{}
}

// reconcile brings the tracked jobs and the policy up to date with Slurm's
// queue, counts the jobs it shows by state in seen (CycleReport.Jobs) and
// returns the number of arrivals.
func (tr *tracker) reconcile(t float64, jobs []slurmclient.Job, seen map[string]int) int {
	for _, e := range tr.entries {
		e.sj = nil
	}
	tr.view = newQueueView(jobs)
	tr.view.now = t
	var arrivals []*entry
	for i := range jobs {
		sj := &jobs[i]
		if i > 0 && jobs[i-1].ID == sj.ID {
			continue // listed twice (the client orders jobs by id): counted once
		}
		e := tr.entries[sj.ID]
		switch {
		case sj.Pending() && sj.Held:
			seen["held"]++
		case sj.Pending():
			seen["pending"]++
		default:
			seen["running"]++
		}
		if e == nil {
			if ok, why := tr.eligible(sj, nil); ok {
				e = &entry{id: sj.ID, sj: sj, ownNodes: len(sj.RequiredNodes) > 0, heldBack: tr.view.heldBack(sj), base: sj.Priority, lastPending: true}
				tr.entries[sj.ID] = e
				arrivals = append(arrivals, e)
			} else if tr.standable(sj, why) {
				e = &entry{id: sj.ID, sj: sj, ph: phIdle, why: why, standing: true, heldBack: tr.view.heldBack(sj),
					base: sj.Priority, ownNodes: len(sj.RequiredNodes) > 0, lastPending: true}
				tr.entries[sj.ID] = e
				tr.dirty = true
			} else if why.Code == reason.OutOfScope {
				seen["out_of_scope"]++
			}
			continue
		}
		e.sj, e.absent, e.lostSince, e.lastPending = sj, 0, 0, sj.Pending()
		delete(tr.ended, sj.ID)
		e.heldBack = tr.view.heldBack(sj)
		if !sj.Pending() {
			switch e.ph {
			case phDispatched:
				e.ph = phRunning
				tr.dirty = true
				tr.heldBy(t, e) // where and since when Slurm runs it
			case phQueued:
				// Withdrawn only when startedCycles lists in a row show it
				// not pending: a flapping job keeps its place.
				if e.notPending++; e.notPending >= startedCycles && !tr.adopt(t, e) {
					tr.withdraw(t, e, reason.Of(reason.Withdrawn, "started by Slurm before its turn"), false)
				}
			case phStopping:
				tr.watchStop(t, e)
			}
			continue
		}
		e.notPending = 0
		// A priority of 0 on a job that is not held is no value at all (a
		// response without one, or out of range): it proves nothing.
		if e.prio != 0 && !sj.Held && !e.handsOff && sj.Priority != 0 && sj.Priority != e.prio {
			e.handsOff = true
			tr.dirty = true
			tr.note(event{kind: evHandsOff, job: e.id, wrote: e.prio, now: sj.Priority})
		}
		ok, why := tr.eligible(sj, e)
		if sj.Shape() == slurmclient.ShapeArrayRemainder {
			if e.ph == phDispatched && e.tasks != "" && sj.Array.Tasks != e.tasks {
				// A task of the array whose turn had come has started: the
				// rest of the array arrives again as its next task.
				tr.leavePolicy(t, e, reason.Of(reason.Withdrawn, "array task started"))
			}
			e.tasks = sj.Array.Tasks
		}
		if e.ph == phStopping {
			tr.requeued(e)
		}
		switch e.ph {
		case phQueued:
			if !ok {
				tr.withdraw(t, e, why, true)
			}
		case phDispatched:
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
		case phRunning: // requeued
			tr.leavePolicy(t, e, reason.Of(reason.Withdrawn, "requeued"))
			if ok {
				arrivals = append(arrivals, e)
			}
		case phIdle:
			if ok {
				arrivals = append(arrivals, e)
			}
		}
	}
	for _, e := range tr.entries {
		if e.sj == nil && tr.gone(e) {
			if tr.keepLost(t, e) {
				continue
			}
			tr.vanish(t, e)
		}
	}
	slices.SortFunc(arrivals, func(a, b *entry) int {
		if c := a.sj.Submit.Compare(b.sj.Submit); c != 0 {
			return c
		}
		return compareID(a.id, b.id)
	})
	n := 0
	for _, e := range arrivals {
		if e.parked && tr.rejoin(t, e) || !e.parked && tr.arrive(t, e) {
			n++
		}
	}
	for _, e := range tr.entries {
		if e.task != nil {
			e.task.Blocked = e.heldBack != "" || e.ph == phStopping
		}
		if e.heldBack != "" && e.task != nil {
			seen["held_back"]++
		}
		if e.standing && e.sj != nil {
			seen["standing"]++
		}
		switch {
		case e.handsOff:
			seen["hands_off"]++
		case e.ph == phDispatched:
			seen["dispatched"]++
			seen["managed"]++
		case e.ph == phQueued:
			seen["managed"]++
		}
	}
	return n
}

// compareID orders job ids numerically when they are numbers of any
// length, and as strings otherwise.
func compareID(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// toJob converts a Slurm job to the project's record.
func toJob(sj *slurmclient.Job) job.Job {
	return job.Job{ID: sj.ID, Submit: unixSeconds(sj.Submit), User: sj.User, Name: sj.Name,
		Account: sj.Account, Partition: sj.Partition, QOS: sj.QOS, GPUs: sj.GPUs.Total,
		TimeLimit: sj.TimeLimit.Seconds(), State: sj.State, ArrayJobID: sj.Array.JobID}
}

// arrive predicts e and hands it to the policy.
func (tr *tracker) arrive(t float64, e *entry) bool {
	e.standing = false
	e.job = toJob(e.sj)
	e.job.GPUs = tr.view.gpus(e.sj)
	e.tasks = e.sj.Array.Tasks
	e.est = tr.pred.Predict(&e.job)
	e.prof = tr.profiles.Resolve(e.sj.Comment, e.family(), e.job.Account, max(e.job.GPUs, 1))
	e.job.Profile = e.prof.Model
	tr.note(event{kind: evProfile, job: e.id, source: string(e.prof.Source), problem: e.prof.Problem,
		problemKind: e.prof.ProblemKind, profile: e.prof.Model})
	tr.optIn(e)
	e.seq = tr.nextSeq
	tr.nextSeq++
	e.released, e.parked, e.remaining = false, false, 0
	return tr.enter(t, e, func(task *policy.Task) { tr.pol.Arrive(t, task) })
}

// rejoin puts a parked job back into the policy with the virtual work it
// had left when it was withdrawn (a released job rejoins the end of the
// release queue).
func (tr *tracker) rejoin(t float64, e *entry) bool {
	released, remaining := e.released, e.remaining
	e.parked, e.remaining = false, 0
	return tr.enter(t, e, func(task *policy.Task) { tr.pol.Restore(t, task, remaining, released) })
}

// enter creates e's task with e.est and hands it to the policy by add.
func (tr *tracker) enter(t float64, e *entry, add func(*policy.Task)) bool {
	task, err := tr.env.NewLiveTask(&e.job, e.seq, e.est, e.prof.Profile)
	if err != nil {
		e.ph, e.why = phIdle, reason.Of(reason.NotSchedulable, err.Error())
		tr.note(event{kind: evNotSchedulable, job: e.id, err: err})
		return false
	}
	task.Preemptions = e.preemptions
	add(task)
	e.task, e.ph, e.why = task, phQueued, reason.Reason{}
	tr.byTask[task] = e
	tr.dirty = true
	return true
}

// withdraw takes a waiting job out of the policy and keeps e as idle;
// park keeps its virtual work left so that it can rejoin where it was.
func (tr *tracker) withdraw(t float64, e *entry, why reason.Reason, park bool) {
	if e.task != nil {
		if park {
			e.parked, e.remaining = true, e.task.VirtualRemaining()
			e.released = !math.IsNaN(e.task.Released)
		}
		tr.pol.Withdraw(t, e.task)
		delete(tr.byTask, e.task)
		e.task = nil
	}
	e.ph, e.why = phIdle, why
	tr.dirty = true
}

// leavePolicy finishes a task the policy holds as running and keeps e as
// idle.
func (tr *tracker) leavePolicy(t float64, e *entry, why reason.Reason) {
	if e.task != nil {
		tr.pol.Finish(t, e.task)
		delete(tr.byTask, e.task)
		e.task = nil
	}
	e.ph, e.why, e.placed, e.parked = phIdle, why, false, false
	tr.dirty = true
}

// releases marks the jobs the virtual machine released since the last
// call and returns how many (released), with the number of waiting jobs
// it has not released yet (virtual), in one pass over the policy's jobs.
func (tr *tracker) releases() (released, virtual int) {
	for t, e := range tr.byTask {
		if math.IsNaN(t.Released) {
			if e.ph == phQueued {
				virtual++
			}
			continue
		}
		if !e.released {
			e.released = true
			released++
		}
	}
	return released, virtual
}

// vanish handles a job Slurm no longer lists (finished or cancelled):
// one accounting reported ended, or missing from absentCycles lists in a
// row (see gone).
func (tr *tracker) vanish(t float64, e *entry) {
	tr.dirty = true
	defer delete(tr.ended, e.id)
	switch e.ph {
	case phQueued:
		tr.withdraw(t, e, reason.Of(reason.Withdrawn, "gone"), false)
	case phDispatched, phRunning, phStopping:
		if !tr.ended[e.id] { // else its accounting record was seen
			tr.finished[e.id] = finishedJob{est: e.est.Seconds, since: t}
		}
		if e.ph == phStopping && e.signalSent {
			tr.note(event{kind: evPreemptOutcome, job: e.id, outcome: outcomeFinished})
		}
		if e.task != nil {
			if e.ph == phStopping {
				tr.pol.Withdraw(t, e.task) // waiting in the policy
			} else {
				tr.pol.Finish(t, e.task)
			}
			delete(tr.byTask, e.task)
		}
	}
	delete(tr.entries, e.id)
}
