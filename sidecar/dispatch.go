package sidecar

import (
	"cmp"
	"slices"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
)

// placeDispatched reserves, on free, the GPUs of the jobs whose turn has
// come but that Slurm has not started. A job whose nodes are no longer
// free, or that has waited longer than the dispatch grace on them (Slurm
// would not start it there: memory, CPUs, features the model does not
// know), gets a new Heavy-Edge placement, away from the old nodes when
// possible; one that fits nowhere keeps no placement until it does.
func (tr *tracker) placeDispatched(t float64, free *placement.Free) {
	ds := tr.dispatched()
	grace := tr.cfg.DispatchGrace.Seconds()
	for _, e := range ds {
		if e.placed && tr.nodes.mayUsePlacement(e, &e.place) && free.Take(&e.place) == nil {
			if t-e.placedAt <= grace {
				continue
			}
			if err := free.Give(&e.place); err != nil {
				tr.note(event{kind: evPlacementFailed, job: e.id, err: err})
				continue
			}
			avoid := free.Clone()
			_ = avoid.Take(&e.place)
			if p, err := tr.placeOn(avoid, e); err == nil && free.Take(&p) == nil {
				e.place, e.placedAt = p, t
				tr.note(event{kind: evReplaced, job: e.id})
				tr.dirty = true
				continue
			}
		}
		p, err := tr.placeOn(free, e)
		if st := policy.StatusOf(err); st.Code != policy.Fits {
			if st.Code == policy.Failed {
				tr.note(event{kind: evPlacementFailed, job: e.id, err: err})
			}
			e.placed = false
			continue
		}
		if free.Take(&p) == nil {
			e.place, e.placed, e.placedAt = p, true, t
			tr.note(event{kind: evReplaced, job: e.id})
			tr.dirty = true
		}
	}
}

// placeOn places e by its profile on the free GPUs of the nodes it may
// use (free is not changed), through the replay's placement code.
func (tr *tracker) placeOn(free *placement.Free, e *entry) (placement.Placement, error) {
	t := e.task
	if t == nil { // dispatched before a restart: not back in the policy
		t = &policy.Task{Job: &e.job, Prof: e.prof.Profile}
	}
	return tr.env.PlaceAllowed(free, t, func(_ *policy.Task, i int) bool { return tr.nodes.mayUse(e, i) })
}

// dispatched returns the dispatched jobs in dispatch order.
func (tr *tracker) dispatched() []*entry {
	var ds []*entry
	for _, e := range tr.entries {
		if e.ph == phDispatched {
			ds = append(ds, e)
		}
	}
	slices.SortFunc(ds, func(a, b *entry) int { return cmp.Compare(a.dseq, b.dseq) })
	return ds
}

// schedule runs the policy's scheduling pass through policy.Env.Dispatch,
// the replay's code path, with the nodes each job's request may use, and
// returns the number of jobs whose turn came.
func (tr *tracker) schedule(t float64, free *placement.Free) int {
	started, preempted := tr.env.Dispatch(tr.pol, t, free, tr.allow)
	tr.stopping(t, preempted)
	n := 0
	for _, d := range started {
		e := tr.byTask[d.Task]
		if e == nil {
			continue
		}
		tr.dirty = true
		e.ph, e.dseq = phDispatched, tr.nextDSeq
		tr.nextDSeq++
		e.place, e.placed, e.placedAt = d.Task.Placement, d.Placed, t
		if !d.Placed {
			e.place = placement.Placement{}
		}
		n++
	}
	return n
}

// allow is the policy.NodeFilter of the sidecar's jobs: mayUse.
func (tr *tracker) allow(t *policy.Task, node int) bool {
	e := tr.byTask[t]
	return e == nil || tr.nodes.mayUse(e, node)
}
