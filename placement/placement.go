// Package placement models distributed training jobs (profiles and job
// graphs), their per-iteration time under a placement, and chooses GPUs for
// them with the Heavy-Edge heuristic (see the design, §1–§3).
package placement

import (
	"errors"
	"fmt"
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
//
// Besides the per-node masks it keeps a best-fit index: for every free count
// c ≥ 1, the set of nodes with exactly c free GPUs, ordered by node index (the
// cluster's node order is the tie-break "by name"). Take and Give keep it up
// to date in O(log₆₄ nodes) per node touched, so finding the best-fit node or
// walking nodes from most to fewest free GPUs costs O(max GPUs per node +
// nodes visited), not O(nodes). On a cluster with a switch tree it also keeps
// the number of free GPUs under every switch.
type Free struct {
	mask   []uint64 // per node: bit i set when GPU i is free
	count  []int    // per node: number of free GPUs
	total  int
	bucket []hbits // bucket[c], c ≥ 1: nodes with exactly c free GPUs
	nb     []int   // nb[c]: the number of nodes in bucket[c]
	tree   *tree   // shared and immutable; nil on a flat cluster
	swFree []int   // per switch: free GPUs of the nodes under it
}

// NewFree returns the state of an empty cluster: every GPU free.
func NewFree(c *cluster.Cluster) *Free {
	n := len(c.Nodes)
	f := &Free{mask: make([]uint64, n), count: make([]int, n), tree: newTree(c)}
	maxG := 0
	for i := range c.Nodes {
		maxG = max(maxG, min(c.Nodes[i].GPUs, cluster.MaxGPUsPerNode))
	}
	f.bucket = make([]hbits, maxG+1)
	f.nb = make([]int, maxG+1)
	for k := 1; k <= maxG; k++ {
		f.bucket[k] = newHbits(n)
	}
	if f.tree != nil {
		f.swFree = make([]int, len(f.tree.parent))
	}
	for i, nd := range c.Nodes {
		g := min(max(nd.GPUs, 0), cluster.MaxGPUsPerNode)
		if g == 64 {
			f.mask[i] = ^uint64(0)
		} else {
			f.mask[i] = 1<<uint(g) - 1
		}
		f.count[i] = g
		f.total += g
		f.index(i, 0, g)
	}
	return f
}

// index moves node i from the bucket of free count old to that of new and
// adds new−old to the free counts of its switches.
func (f *Free) index(i, old, new int) {
	if old > 0 {
		f.bucket[old].clear(i)
		f.nb[old]--
	}
	if new > 0 {
		f.bucket[new].set(i)
		f.nb[new]++
	}
	if f.tree != nil {
		for s := f.tree.leaf[i]; s >= 0; s = f.tree.parent[s] {
			f.swFree[s] += new - old
		}
	}
}

// Total returns the number of free GPUs in the cluster.
func (f *Free) Total() int { return f.total }

// On returns the number of free GPUs on node i.
func (f *Free) On(i int) int { return f.count[i] }

// Mask returns the free-GPU bit mask of node i.
func (f *Free) Mask(i int) uint64 { return f.mask[i] }

// Nodes returns the number of nodes tracked.
func (f *Free) Nodes() int { return len(f.mask) }

// Largest returns the largest number of free GPUs on one node (0 when none
// is free), in O(max GPUs per node).
func (f *Free) Largest() int {
	for c := len(f.bucket) - 1; c >= 1; c-- {
		if !f.bucket[c].empty() {
			return c
		}
	}
	return 0
}

// bestFit returns the node with the fewest free GPUs that still has at
// least g (ties: lowest index), skipping nodes for which skip is true
// (skip may be nil); -1 when none.
func (f *Free) bestFit(g int, skip []bool) int {
	for c := max(g, 1); c < len(f.bucket); c++ {
		for n := f.bucket[c].next(0); n >= 0; n = f.bucket[c].next(n + 1) {
			if skip == nil || !skip[n] {
				return n
			}
		}
	}
	return -1
}

// ErrBusy is returned by Take when a GPU of the placement is not free.
var ErrBusy = errors.New("placement: GPU already in use")

// Take marks the placement's GPUs as used. It changes nothing and returns
// ErrBusy if any of them is not free.
func (f *Free) Take(p *Placement) error {
	for _, s := range p.Slots {
		if s.Node < 0 || s.Node >= len(f.mask) || f.mask[s.Node]&s.GPUs != s.GPUs {
			return ErrBusy
		}
	}
	for _, s := range p.Slots {
		f.mask[s.Node] &^= s.GPUs
		c := s.Count()
		old := f.count[s.Node]
		f.count[s.Node] = old - c
		f.total -= c
		f.index(s.Node, old, old-c)
	}
	return nil
}

// ErrNotTaken is returned by Give when a GPU of the placement is free
// already (or the placement names a node the state does not have).
var ErrNotTaken = errors.New("placement: GPU not in use")

// Give marks the placement's GPUs as free again. It changes nothing and
// returns ErrNotTaken if any of them is free already.
func (f *Free) Give(p *Placement) error {
	for _, s := range p.Slots {
		if s.Node < 0 || s.Node >= len(f.mask) || f.mask[s.Node]&s.GPUs != 0 {
			return ErrNotTaken
		}
	}
	for _, s := range p.Slots {
		f.mask[s.Node] |= s.GPUs
		c := s.Count()
		old := f.count[s.Node]
		f.count[s.Node] = old + c
		f.total += c
		f.index(s.Node, old, old+c)
	}
	return nil
}

// Clone returns an independent copy.
func (f *Free) Clone() *Free {
	c := &Free{
		mask:   append([]uint64(nil), f.mask...),
		count:  append([]int(nil), f.count...),
		total:  f.total,
		bucket: make([]hbits, len(f.bucket)),
		nb:     append([]int(nil), f.nb...),
		tree:   f.tree,
		swFree: append([]int(nil), f.swFree...),
	}
	for i := 1; i < len(f.bucket); i++ {
		c.bucket[i] = f.bucket[i].clone()
	}
	return c
}

// NodeNames returns the names of the nodes p uses, in increasing node
// index: the node list Slurm is given for p (the sidecar writes it, the
// replay reports it). It returns nil for an empty placement and an error
// for a slot outside c.
func NodeNames(c *cluster.Cluster, p *Placement) ([]string, error) {
	if len(p.Slots) == 0 {
		return nil, nil
	}
	names := make([]string, len(p.Slots))
	for i, sl := range p.Slots {
		if sl.Node < 0 || sl.Node >= len(c.Nodes) {
			return nil, fmt.Errorf("placement: slot on node %d of a %d-node cluster", sl.Node, len(c.Nodes))
		}
		names[i] = c.Nodes[sl.Node].Name
	}
	return names, nil
}
