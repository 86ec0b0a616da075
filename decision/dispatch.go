package decision

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
func (tr *State) placeDispatched(t float64, free *placement.Free) {
	ds := tr.dispatched(tr.ranked[:0])
	defer func() { clear(ds); tr.ranked = ds[:0] }()
	grace := tr.cfg.DispatchGrace.Seconds()
	for _, e := range ds {
		if e.placed && tr.nodes.mayUsePlacement(e, &e.place) && free.Take(&e.place) == nil {
			if t-e.placedAt <= grace {
				continue
			}
			if err := free.Give(&e.place); err != nil {
				tr.note(Event{Kind: EvPlacementFailed, Job: e.ID, Err: err})
				continue
			}
			avoid := free.Clone()
			_ = avoid.Take(&e.place)
			if p, err := tr.placeOn(avoid, e); err == nil && free.Take(&p) == nil {
				e.place, e.placedAt = p, t
				tr.note(Event{Kind: EvReplaced, Job: e.ID})
				tr.Dirty = true
				continue
			}
		}
		p, err := tr.placeOn(free, e)
		if st := policy.StatusOf(err); st.Code != policy.Fits {
			if st.Code == policy.Failed {
				tr.note(Event{Kind: EvPlacementFailed, Job: e.ID, Err: err})
			}
			e.placed = false
			continue
		}
		if free.Take(&p) == nil {
			e.place, e.placed, e.placedAt = p, true, t
			tr.note(Event{Kind: EvReplaced, Job: e.ID})
			tr.Dirty = true
		}
	}
}

// placeOn places e by its profile on the free GPUs of the nodes it may
// use (free is not changed), through the replay's placement code.
func (tr *State) placeOn(free *placement.Free, e *Entry) (placement.Placement, error) {
	t := e.Task
	if t == nil { // dispatched before a restart: not back in the policy
		t = &policy.Task{Job: &e.job, Prof: e.prof.Profile}
	}
	return tr.env.PlaceAllowed(free, t, func(_ *policy.Task, i int) bool { return tr.nodes.mayUse(e, i) })
}

// dispatched appends the dispatched jobs, in dispatch order, to ds.
func (tr *State) dispatched(ds []*Entry) []*Entry {
	for _, e := range tr.Entries {
		if e.Phase == PhDispatched {
			ds = append(ds, e)
		}
	}
	slices.SortFunc(ds, func(a, b *Entry) int { return cmp.Compare(a.dseq, b.dseq) })
	return ds
}

// schedule runs the policy's scheduling pass through policy.Env.Dispatch,
// the replay's code path, with the nodes each job's request may use, and
// returns the number of jobs whose turn came.
func (tr *State) schedule(t float64, free *placement.Free) int {
	started, preempted := tr.env.Dispatch(tr.pol, t, free, tr.allow)
	tr.stopping(t, preempted)
	n := 0
	for _, d := range started {
		e := tr.byTask[d.Task]
		if e == nil {
			continue
		}
		tr.Dirty = true
		e.Phase, e.dseq = PhDispatched, tr.nextDSeq
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
func (tr *State) allow(t *policy.Task, node int) bool {
	e := tr.byTask[t]
	return e == nil || tr.nodes.mayUse(e, node)
}
