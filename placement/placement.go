// Package placement models distributed training jobs (profiles and job
// graphs), their per-iteration time under a placement, and chooses GPUs for
// them with the Heavy-Edge heuristic (see the design, §1–§3).
package placement

import (
	"errors"
	"math/bits"

	"github.com/asrpt/asrpt/cluster"
)

// ErrNoFit is returned when the free GPUs cannot hold the job.
var ErrNoFit = errors.New("placement: not enough free GPUs")

// Slot is the part of a placement on one node.
type Slot struct {
	// Node is the index of the node in cluster.Cluster.Nodes.
	Node int
	// GPUs is the set of GPU indices used on the node, as a bit mask.
	GPUs uint64
}

// Count returns the number of GPUs in the slot.
func (s Slot) Count() int { return bits.OnesCount64(s.GPUs) }

// GPU identifies one GPU: a node index and a GPU index inside the node.
type GPU struct {
	Node  int
	Index int
}

// Placement is where a job runs.
type Placement struct {
	// Slots lists the nodes used, in increasing node index.
	Slots []Slot
	// Vertex maps each vertex of the job graph (stage replicas in stage
	// order) to its GPU; nil for plain jobs.
	Vertex []GPU
}

// GPUs returns the number of GPUs the placement uses.
func (p *Placement) GPUs() int {
	n := 0
	for _, s := range p.Slots {
		n += s.Count()
	}
	return n
}

// Free tracks the free GPUs of a cluster. The zero value is not usable; use
// NewFree. Not safe for concurrent use.
type Free struct {
	mask  []uint64 // per node: bit i set when GPU i is free
	count []int    // per node: number of free GPUs
	total int
}

// NewFree returns the state of an empty cluster: every GPU free.
func NewFree(c *cluster.Cluster) *Free {
	f := &Free{mask: make([]uint64, len(c.Nodes)), count: make([]int, len(c.Nodes))}
	for i, n := range c.Nodes {
		if n.GPUs >= 64 {
			f.mask[i] = ^uint64(0)
		} else {
			f.mask[i] = 1<<uint(n.GPUs) - 1
		}
		f.count[i] = n.GPUs
		f.total += n.GPUs
	}
	return f
}

// Total returns the number of free GPUs in the cluster.
func (f *Free) Total() int { return f.total }

// On returns the number of free GPUs on node i.
func (f *Free) On(i int) int { return f.count[i] }

// Mask returns the free-GPU bit mask of node i.
func (f *Free) Mask(i int) uint64 { return f.mask[i] }

// Nodes returns the number of nodes tracked.
func (f *Free) Nodes() int { return len(f.mask) }

// ErrBusy is returned by Take when a GPU of the placement is not free.
var ErrBusy = errors.New("placement: GPU already in use")

// Take marks the placement's GPUs as used. It changes nothing and returns
// ErrBusy if any of them is not free.
func (f *Free) Take(p *Placement) error {
	for _, s := range p.Slots {
		if f.mask[s.Node]&s.GPUs != s.GPUs {
			return ErrBusy
		}
	}
	for _, s := range p.Slots {
		f.mask[s.Node] &^= s.GPUs
		c := s.Count()
		f.count[s.Node] -= c
		f.total -= c
	}
	return nil
}

// Give marks the placement's GPUs as free again. Giving back GPUs that are
// already free is a programming error and panics.
func (f *Free) Give(p *Placement) {
	for _, s := range p.Slots {
		if f.mask[s.Node]&s.GPUs != 0 {
			panic("placement: Give of free GPUs")
		}
		f.mask[s.Node] |= s.GPUs
		c := s.Count()
		f.count[s.Node] += c
		f.total += c
	}
}

// Clone returns an independent copy.
func (f *Free) Clone() *Free {
	return &Free{mask: append([]uint64(nil), f.mask...), count: append([]int(nil), f.count...), total: f.total}
}
