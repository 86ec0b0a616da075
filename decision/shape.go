package decision

import (
	"fmt"
	"slices"

	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// The shapes of a queue (slurmclient.Shape) and what asrpt does with each:
//
//   - A plain job is ranked and, when its turn comes, gets a Heavy-Edge
//     node list where its request allows (see nodeUpdate).
//   - A job array is ranked as one unit through its pending remainder, by
//     the prediction for one task, and gets priorities only: a node list
//     would pin every later task to the same nodes. While as many tasks run
//     as its throttle allows, the remainder is parked (it cannot start
//     anyway). When a task of a dispatched remainder starts, that task has
//     had its turn: the remainder arrives again as the next task. Tasks
//     split off from the remainder are left alone.
//   - A heterogeneous job is ranked as one unit through its leader, with
//     the GPUs of all its components, and gets priorities only (Slurm
//     applies a write to the leader to every component). It is managed
//     only while every component is pending and listed.
//   - A job submitted to several partitions is placed on nodes of those
//     partitions only, like every job; it is in scope only when each of
//     its partitions is.

// queueView groups one cycle's job records that belong together: the
// tasks of each array and the components of each heterogeneous job.
type queueView struct {
	arrays map[string]*arrayView
	hets   map[string]*hetView
	// now is the cycle's time, Unix seconds.
	now float64
	// scope is the configured scope; clusterGPUs the cluster's GPUs.
	scope       Scope
	clusterGPUs int
	// claimed holds the partitions a pending job may run in that is
	// neither held nor held back (jobHeldBack), when the view was asked
	// for them (nodeView.claimTiers reads it); nil otherwise.
	claimed map[string]bool
}

// arrayView is one job array as the job list shows it.
type arrayView struct {
	// running counts the tasks that are not pending (running, suspended,
	// completing): the ones the throttle counts.
	running int
}

// hetView is one heterogeneous job as the job list shows it.
type hetView struct {
	comps []*slurmclient.Job
	// gpus is the GPUs of all components listed.
	gpus int
}

// class is what one cycle's job list says of a record, before anything
// asrpt tracked or wrote is consulted: computed once per record
// (queueView.classify) and acted on by reconcile and the plan.
type class struct {
	// ok: the record may be ranked — pending, of a shape ranked through
	// itself (manageable), not held, asking for GPUs no more than the
	// cluster has, in scope; why says why not. An admin's priority can
	// still keep it out (admitted).
	ok  bool
	why reason.Reason
	// shape is the record's shape (slurmclient.Job.Shape).
	shape slurmclient.Shape
	// gpus is the GPUs of the unit the record stands for (queueView.gpus).
	gpus int
	// heldBack is Slurm's reason for holding the unit back, "" when none
	// (queueView.heldBack).
	heldBack string
	// standable: not ranked for its GPUs (none, or more than the cluster)
	// but pending, not held and in scope, so it keeps its standing through
	// asrpt's writes (standing.go).
	standable bool
}

// classify is the class of record sj.
func (v queueView) classify(sj *slurmclient.Job) class {
	sh := sj.Shape()
	c := class{shape: sh, gpus: v.gpus(sj, sh)}
	if !sj.Pending() {
		c.why = reason.Of(reason.NotPending, "not pending")
		return c
	}
	c.heldBack = v.heldBack(sj, sh)
	if ok, why := v.manageable(sj, sh); !ok {
		c.why = why
		return c
	}
	inScope := v.scope.Contains(sj.Partition, sj.QOS, sj.Account)
	switch {
	case sj.Held:
		c.why = reason.Of(reason.Held, "held")
	case c.gpus <= 0:
		c.why, c.standable = reason.Of(reason.NoGPUs, "no GPUs"), inScope
	case !inScope:
		c.why = reason.Of(reason.OutOfScope, "out of scope")
	case c.gpus > v.clusterGPUs:
		c.why, c.standable = reason.Of(reason.LargerThanCluster, "larger than the cluster"), true
	default:
		c.ok = true
	}
	return c
}

// newQueueView groups jobs (which must outlive the view) at now (Unix
// seconds) for a scope and a cluster of clusterGPUs GPUs; claims asks for
// the claimed partitions (queueView.claimed).
func newQueueView(jobs []slurmclient.Job, now float64, scope Scope, clusterGPUs int, claims bool) queueView {
	v := queueView{arrays: map[string]*arrayView{}, hets: map[string]*hetView{}, now: now, scope: scope, clusterGPUs: clusterGPUs}
	if claims {
		v.claimed = map[string]bool{}
	}
	for i := range jobs {
		sj := &jobs[i]
		if claims && sj.Pending() && !sj.Held && jobHeldBack(sj, now) == "" {
			for _, p := range sj.Partitions() {
				v.claimed[p] = true
			}
		}
		if id := sj.Array.JobID; id != "" {
			a := v.arrays[id]
			if a == nil {
				a = &arrayView{}
				v.arrays[id] = a
			}
			if !sj.Pending() {
				a.running++
			}
		}
		if id := sj.Het.LeaderID; id != "" {
			h := v.hets[id]
			if h == nil {
				h = &hetView{}
				v.hets[id] = h
			}
			h.comps = append(h.comps, sj)
			h.gpus += max(sj.GPUs.Total, 0)
		}
	}
	return v
}

// heldBack returns Slurm's reason when it holds the unit sj (of shape sh)
// stands for back (see the function heldBack): a heterogeneous job is held
// back while any of its components is.
func (v queueView) heldBack(sj *slurmclient.Job, sh slurmclient.Shape) string {
	if !sj.Pending() {
		return ""
	}
	if why := jobHeldBack(sj, v.now); why != "" {
		return why
	}
	if sh == slurmclient.ShapeHetLeader {
		if h := v.hets[sj.ID]; h != nil {
			for _, c := range h.comps {
				if why := jobHeldBack(c, v.now); why != "" && c.Pending() {
					return why
				}
			}
		}
	}
	return ""
}

// gpus returns the GPUs of the unit sj (of shape sh) stands for: all
// components of a heterogeneous job at its leader, the job's own request
// otherwise.
func (v queueView) gpus(sj *slurmclient.Job, sh slurmclient.Shape) int {
	if sh == slurmclient.ShapeHetLeader {
		if h := v.hets[sj.ID]; h != nil {
			return h.gpus
		}
	}
	return sj.GPUs.Total
}

// manageable reports whether a pending record of its shape may be ranked,
// and why not: array tasks and heterogeneous components are ranked through
// their remainder and leader; an array at its throttle waits for a task to
// end; a heterogeneous job needs every component pending, not held and
// listed.
func (v queueView) manageable(sj *slurmclient.Job, sh slurmclient.Shape) (bool, reason.Reason) {
	switch sh {
	case slurmclient.ShapeArrayTask:
		return false, reason.Of(reason.ArrayTask, "array task (the array is ranked through its pending remainder)")
	case slurmclient.ShapeHetComponent:
		return false, reason.Of(reason.HetComponent, "heterogeneous job component (the job is ranked through its leader)")
	case slurmclient.ShapeArrayRemainder:
		if a := v.arrays[sj.Array.JobID]; a != nil && sj.Array.Throttle > 0 && a.running >= sj.Array.Throttle {
			return false, reason.Of(reason.ArrayThrottled, fmt.Sprintf("array at its task limit (%d running)", a.running))
		}
	case slurmclient.ShapeHetLeader:
		h := v.hets[sj.ID]
		if h == nil || len(h.comps) != len(sj.Het.Components) {
			return false, reason.Of(reason.HetIncomplete, "heterogeneous job with components missing from the queue")
		}
		for _, c := range h.comps {
			switch {
			case !slices.Contains(sj.Het.Components, c.ID):
				return false, reason.Of(reason.HetIncomplete, "heterogeneous job with components missing from the queue")
			case !c.Pending():
				return false, reason.Of(reason.HetIncomplete, "heterogeneous job with a component not pending")
			case c.Held:
				return false, reason.Of(reason.Held, "held")
			}
		}
	}
	return true, reason.Reason{}
}

// nodeListBar says why a record of shape sh never gets a node list or GPU
// count, "" when it may.
func nodeListBar(sh slurmclient.Shape) reason.Reason {
	switch sh {
	case slurmclient.ShapeArrayRemainder, slurmclient.ShapeArrayTask:
		return reason.Of(reason.NodeListShape, "array: a node list would pin every task")
	case slurmclient.ShapeHetLeader, slurmclient.ShapeHetComponent:
		return reason.Of(reason.NodeListShape, "heterogeneous job: a node list would apply to every component")
	}
	return reason.Reason{}
}
