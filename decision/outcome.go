package decision

import (
	"math"
	"slices"
	"time"

	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// What a write did, as the shell that sent it reports it to Record. The
// shell sends; only Record changes what the state knows a job holds.

// WriteResult says how one write ended.
type WriteResult int

const (
	// Written: Slurm applied the update (also when it answered an error
	// but the re-read shows the value).
	Written WriteResult = iota
	// Lost: the write failed for a cause that says nothing about the job
	// (it is gone since the read, or slurmctld or the token failed): no
	// backoff.
	Lost
	// Failed: the write failed for this job: its next try waits for a
	// backoff.
	Failed
)

// maxWriteBackoff bounds the wait before a failed write to one job is
// tried again: after the n-th failure in a row the next try waits
// interval·2^(n−1), at most this long.
const maxWriteBackoff = 15 * time.Minute

// maxNodeListTries is how many node lists are tried for one job before
// asrpt stops writing node lists to it (a refusal as invalid stops at once).
const maxNodeListTries = 3

// The kinds of write an Outcome reports.
const (
	KindPriority   = "priority"
	KindSiteFactor = "site_factor"
	KindNodes      = "nodes"
	// KindSignal is a stop signal to a running job (no Update). One that
	// did not go out (Failed or Lost, Reason saying why) takes the job out
	// of the policy for good: it runs on unmanaged and is never signalled
	// again.
	KindSignal = "signal"
	// KindGiveback is a giveback that set the job's values back to
	// Slurm's (no Update): no priority, site factor or node list of
	// asrpt's, and no mark of one it may hold. The policy keeps its order.
	KindGiveback = "giveback"
)

// Outcome is one write sent to Slurm and how it ended.
type Outcome struct {
	// Entry is the job the write was for; Target the job id written:
	// Entry.ID, or for a site factor one of its heterogeneous components.
	Entry  *Entry
	Target string
	// Kind is the write's kind (KindPriority, ...).
	Kind   string
	Update slurmclient.JobUpdate
	Result WriteResult
	// Reason names a failure ("" when written); the job's first failure
	// for each reason is reported as such (Recorded.FirstOfReason).
	Reason string
	// NodesFinal: the failure says no node list will be taken for this
	// job. NotApplied: Slurm answered success but the job differs, so
	// nothing written of this kind can be relied on.
	NodesFinal, NotApplied bool
}

// Recorded is what Record concluded from a failed write.
type Recorded struct {
	// Wait is the backoff before the next try of the same kind, seconds.
	Wait float64
	// GiveUp: no further node list goes to this job.
	GiveUp bool
	// FirstOfReason: the first failure of the job for this reason (the
	// shell logs it; later ones it counts only).
	FirstOfReason bool
}

// Record folds one write's outcome into the state at its clock: what a
// written update set (priority, site factor, node list, release), the
// backoff of a failed one, and the marks `asrpt giveback` reads (a node
// list sent is marked whether or not it was answered, since it may have
// reached slurmctld; a component's site factor once written). The state is
// dirty afterwards unless the write was lost and changed no mark.
func (tr *State) Record(o Outcome) Recorded {
	e, u := o.Entry, o.Update
	switch o.Kind {
	case KindSignal:
		if o.Result == Written {
			e.SignalSent = true
		} else {
			tr.withdraw(tr.Clock, e, reason.Of(reason.PreemptFailed, "preemption not sent: "+o.Reason), false)
			e.StopWhy = reason.Of(reason.PreemptFailed, "a preemption of it was not sent")
			e.StopFrom = ""
		}
		tr.Dirty = true
		return Recorded{}
	case KindGiveback:
		e.Prio, e.Factor, e.Nodes, e.GPUsPerNode, e.MayFactor, e.MayPrio = 0, 0, nil, 0, false, false
		tr.Dirty = true
		return Recorded{}
	}
	if len(u.RequiredNodes) > 0 && !e.WroteNodes {
		e.WroteNodes, tr.Dirty = true, true
	}
	if o.Result == Lost {
		return Recorded{}
	}
	tr.Dirty = true
	switch {
	case o.Result == Failed:
		return e.failed(o, tr.Clock, tr.cfg.Interval.Seconds())
	case o.Target != e.ID:
		if !slices.Contains(e.HetFactor, o.Target) {
			e.HetFactor = append(e.HetFactor, o.Target)
		}
		return Recorded{}
	}
	delete(e.Fails, o.Kind)
	if u.Priority != nil {
		e.Prio, e.MayPrio = *u.Priority, false // known now
	} else if u.Hold != nil && !*u.Hold {
		// Released without a priority: the priority plugin's value stands.
		e.Prio = 0
	}
	if u.SiteFactor != nil {
		e.Factor = *u.SiteFactor
	}
	if u.RequiredNodes != nil {
		e.Nodes = slices.Clone(u.RequiredNodes)
		e.GPUsPerNode = 0
		if u.GPUsPerNode != nil {
			e.GPUsPerNode = *u.GPUsPerNode
		}
	}
	return Recorded{}
}

// failed records a failed write at clock (Unix seconds): the next try
// waits for a backoff, from interval seconds, that doubles with each
// failure in a row; a node list that Slurm refused for good, or that
// failed maxNodeListTries times, is not tried again for this job.
func (e *Entry) failed(o Outcome, clock, interval float64) Recorded {
	if e.Fails == nil {
		e.Fails = map[string]*WriteFailure{}
	}
	f := e.Fails[o.Kind]
	if f == nil {
		f = &WriteFailure{}
		e.Fails[o.Kind] = f
	}
	f.N++
	r := Recorded{Wait: math.Min(interval*math.Exp2(float64(f.N-1)), maxWriteBackoff.Seconds())}
	f.Next = clock + r.Wait
	if o.Kind == KindNodes && (o.NodesFinal || f.N >= maxNodeListTries) {
		e.NoNodes, r.GiveUp = true, true
	}
	if o.NotApplied {
		switch o.Kind {
		case KindPriority:
			e.Prio = 0
		case KindNodes:
			e.Nodes = nil
		}
	}
	if !slices.Contains(f.Logged, o.Reason) {
		f.Logged = append(f.Logged, o.Reason)
		r.FirstOfReason = true
	}
	return r
}

// Due reports whether a write of kind to e may be sent at clock (Unix
// seconds): not while the backoff after its last failure runs.
func (e *Entry) Due(kind string, clock float64) bool {
	f := e.Fails[kind]
	return f == nil || clock >= f.Next
}

// Intend marks on each pending job what these decisions may write to it
// (MayFactor for a site factor other than 0, MayPrio for a priority,
// WroteNodes for a node list, HetFactor for a heterogeneous job's
// components) and reports whether a mark is new: the shell then saves the
// state before any write goes out, so that whatever reaches Slurm is in the
// state file before it does, and `asrpt giveback` can undo it even if the
// sidecar dies before the cycle's own save. The marks over-approximate (a
// write the limit defers is marked too); a giveback of a job that holds
// nothing is harmless.
func (tr *State) Intend(ds []Decision) bool {
	changed := false
	mark := func(b *bool) {
		if !*b {
			*b, changed = true, true
		}
	}
	for _, d := range ds {
		e := d.Entry
		if e.Record == nil || !e.Record.Pending() {
			continue
		}
		nodes := d.Nodes != nil && (!slices.Equal(d.Nodes, e.Nodes) || d.GPUsPerNode != e.GPUsPerNode)
		if nodes {
			mark(&e.WroteNodes)
		}
		if tr.Mode == WriteFactor {
			if d.Factor != 0 && (nodes || d.SetFactor) {
				mark(&e.MayFactor)
				if d.SetFactor && e.shape == slurmclient.ShapeHetLeader {
					// Each component is written its factor by its own id.
					for _, c := range e.Record.Het.Components {
						if c != e.ID && !slices.Contains(e.HetFactor, c) {
							e.HetFactor, changed = append(e.HetFactor, c), true
						}
					}
				}
			}
		} else if nodes || d.Priority != e.Prio {
			mark(&e.MayPrio)
		}
	}
	if changed {
		tr.Dirty = true
	}
	return changed
}
