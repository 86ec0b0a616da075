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
func (s *Sidecar) placeDispatched(t float64, free *placement.Free) {
	ds := s.dispatched()
	grace := s.cfg.DispatchGrace.Seconds()
	for _, e := range ds {
		if e.placed && s.mayUsePlacement(e, &e.place) && free.Take(&e.place) == nil {
			if t-e.placedAt <= grace {
				continue
			}
			if err := free.Give(&e.place); err != nil {
				s.placementFailed(e, err)
				continue
			}
			avoid := free.Clone()
			_ = avoid.Take(&e.place)
			if p, err := s.placeOn(avoid, e); err == nil && free.Take(&p) == nil {
				e.place, e.placedAt = p, t
				s.m.replaced.Inc()
				s.dirty = true
				continue
			}
		}
		p, err := s.placeOn(free, e)
		if st := policy.StatusOf(err); st.Code != policy.Fits {
			if st.Code == policy.Failed {
				s.placementFailed(e, err)
			}
			e.placed = false
			continue
		}
		if free.Take(&p) == nil {
			e.place, e.placed, e.placedAt = p, true, t
			s.m.replaced.Inc()
			s.dirty = true
		}
	}
}

func (s *Sidecar) placeOn(free *placement.Free, e *entry) (placement.Placement, error) {
	var prof *placement.Profile
	if e.task != nil {
		prof = e.task.Prof
	}
	if !s.mayUseAll(e, free) {
		free = free.Clone()
		for i := range s.cl.Nodes {
			if m := free.Mask(i); m != 0 && !s.mayUse(e, i) {
				_ = free.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: m}}})
			}
		}
	}
	return s.env.Placer.Place(free, e.job.GPUs, prof)
}

// dispatched returns the dispatched jobs in dispatch order.
func (s *Sidecar) dispatched() []*entry {
	var ds []*entry
	for _, e := range s.entries {
		if e.ph == phDispatched {
			ds = append(ds, e)
		}
	}
	slices.SortFunc(ds, func(a, b *entry) int { return cmp.Compare(a.dseq, b.dseq) })
	return ds
}

// schedule runs the policy's scheduling pass and returns the number of
// jobs whose turn came.
func (s *Sidecar) schedule(t float64, free *placement.Free) int {
	n := 0
	for _, d := range s.pol.Schedule(t, free) {
		e := s.byTask[d.Task]
		if e == nil || d.Preempt {
			continue
		}
		s.dirty = true
		e.ph, e.dseq = phDispatched, s.nextDSeq
		s.nextDSeq++
		e.place, e.placed, e.placedAt = d.Task.Placement, true, t
		if !s.mayUsePlacement(e, &e.place) {
			// The policy sees one pool of GPUs; place the job again on the
			// nodes its request can use, or keep no placement until it fits.
			if err := free.Give(&e.place); err != nil {
				s.placementFailed(e, err)
				e.placed = false
				n++
				continue
			}
			p, err := s.placeOn(free, e)
			if st := policy.StatusOf(err); st.Code == policy.Failed {
				s.placementFailed(e, err)
			}
			if e.placed = err == nil && free.Take(&p) == nil; e.placed {
				e.place = p
			}
		}
		n++
	}
	return n
}
