package policy

import (
	"fmt"

	"github.com/asrpt/asrpt/placement"
)

// NodeFilter reports whether task t may run on cluster node i (the node is
// in one of the job's partitions and the job does not exclude it, for a
// live job); nil allows every node.
type NodeFilter func(t *Task, node int) bool

// Dispatched is a job whose turn came in a scheduling pass, with where it
// goes: the replay starts it there, the sidecar writes the node list.
type Dispatched struct {
	Task *Task
	// Placed is false when the policy's placement used a node the job may
	// not use and no placement on its own nodes is free now: its turn has
	// come, and it waits for GPUs it can use. When Placed, Task.Placement
	// is where it goes (placement.NodeNames gives the node list).
	Placed bool
}

// Dispatch runs pol's scheduling pass at now on free and returns the jobs
// whose turn came, each placed on nodes allow (Env.Allow when nil) permits,
// and the jobs the pass preempted. A policy that placed a job on a node the
// job may not use (one placing without Env.Allow) has it placed again (Heavy-Edge, by its profile)
// on the nodes it may use, its Placement and Alpha updated, or left
// unplaced. The replay (allow nil) and the sidecar both dispatch through
// it, so what the replay starts and the node lists the sidecar writes come
// from one code path. Failures other than a lack of free GPUs are recorded
// for TakeErrors. The slices returned are valid until the next call.
func (e *Env) Dispatch(pol Policy, now float64, free *placement.Free, allow NodeFilter) (started []Dispatched, preempted []*Task) {
	started, preempted = e.started[:0], e.preempted[:0]
	defer func() { e.started, e.preempted = started, preempted }()
	if allow == nil {
		allow = e.Allow
	}
	for _, d := range pol.Schedule(now, free) {
		t := d.Task
		if d.Preempt {
			preempted = append(preempted, t)
			continue
		}
		out := Dispatched{Task: t, Placed: true}
		if allow != nil && !allowedAll(t, &t.Placement, allow) {
			out.Placed = e.replace(t, free, allow)
		}
		started = append(started, out)
	}
	return started, preempted
}

// allowedAll reports whether t may use every node of p.
func allowedAll(t *Task, p *placement.Placement, allow NodeFilter) bool {
	for _, sl := range p.Slots {
		if !allow(t, sl.Node) {
			return false
		}
	}
	return true
}

// replace gives t's placement back to free and places t again on the
// nodes allow permits; it reports whether it found one (taken from free).
func (e *Env) replace(t *Task, free *placement.Free, allow NodeFilter) bool {
	if err := free.Give(&t.Placement); err != nil {
		e.fail(t, fmt.Errorf("placed again: %w", err))
		return false
	}
	p, err := e.PlaceAllowed(free, t, allow)
	if st := StatusOf(err); st.Code != Fits {
		if st.Code == Failed {
			e.fail(t, err)
		}
		return false
	}
	if err := free.Take(&p); err != nil {
		e.fail(t, err)
		return false
	}
	t.Placement = p
	if t.Prof != nil {
		if a, ok := e.Placer.AlphaOf(t.Prof, &p); ok {
			t.Alpha = a
		}
	}
	return true
}

// PlaceAllowed returns a Heavy-Edge placement of t (by its profile) on the
// free GPUs of the nodes allow permits (every node when allow is nil);
// free is not changed. placement.ErrNoFit means none is free now.
func (e *Env) PlaceAllowed(free *placement.Free, t *Task, allow NodeFilter) (placement.Placement, error) {
	if allow != nil {
		var own *placement.Free
		for i := range e.Cluster.Nodes {
			if m := free.Mask(i); m != 0 && !allow(t, i) {
				if own == nil {
					own = free.Clone()
				}
				_ = own.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: m}}})
			}
		}
		if own != nil {
			free = own
		}
	}
	return e.Placer.Place(free, t.GPUs, t.Prof)
}
