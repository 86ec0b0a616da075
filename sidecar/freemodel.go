package sidecar

import (
	"math"
	"math/bits"
	"slices"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/slurmclient"
)

// claimTiers fills s.tr.tierClaim from this cycle's nodes (s.tr.nodeParts) and
// jobs: each node gets the highest PriorityTier among its partitions that
// a pending job, neither held nor held back, may run in. Work: one pass
// over the jobs' partitions and one over the nodes'.
func (tr *tracker) claimTiers(jobs []slurmclient.Job) {
	tr.tierClaim = tr.tierClaim[:0]
	if len(tr.tiers) == 0 {
		return
	}
	claimed := map[string]bool{}
	for i := range jobs {
		j := &jobs[i]
		if !j.Pending() || j.Held || jobHeldBack(j, tr.view.now) != "" {
			continue
		}
		for _, p := range j.Partitions() {
			claimed[p] = true
		}
	}
	tr.tierClaim = slices.Grow(tr.tierClaim, len(tr.nodeParts))[:len(tr.nodeParts)]
	for i, parts := range tr.nodeParts {
		tr.tierClaim[i] = 0
		for _, p := range parts {
			if claimed[p] {
				tr.tierClaim[i] = max(tr.tierClaim[i], tr.tiers[p])
			}
		}
	}
}

// outranked reports whether pending jobs of a partition of a higher
// PriorityTier than any of e's own partitions on cluster node i wait for
// that node: Slurm would give it to them first.
func (tr *tracker) outranked(e *entry, i int, parts []string) bool {
	if i >= len(tr.tierClaim) || tr.tierClaim[i] == 0 {
		return false
	}
	own := math.MinInt
	for _, p := range parts {
		if slices.Contains(tr.nodeParts[i], p) {
			own = max(own, tr.tiers[p])
		}
	}
	return tr.tierClaim[i] > own
}

// freeModel returns the free GPUs as Slurm reports them: each usable node
// in scope has its configured GPUs less those in use; GPU indices come from
// the running jobs where they add up, else the lowest indices count as used.
func (tr *tracker) freeModel(nodes []slurmclient.Node, jobs []slurmclient.Job) *placement.Free {
	free := placement.NewFree(tr.cl)
	used := make(map[int]uint64)
	for i := range jobs {
		for name, idx := range jobs[i].GPUIndices {
			if n, ok := tr.nodeIndex[name]; ok {
				for _, x := range idx {
					if x >= 0 && x < 64 {
						used[n] |= 1 << uint(x)
					}
				}
			}
		}
	}
	seen := make([]bool, len(tr.cl.Nodes))
	tr.nodeParts = slices.Grow(tr.nodeParts[:0], len(tr.cl.Nodes))[:len(tr.cl.Nodes)]
	clear(tr.nodeParts)
	take := func(i int, mask uint64) {
		mask &= free.Mask(i)
		if mask != 0 {
			_ = free.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: mask}}})
		}
	}
	for k := range nodes {
		n := &nodes[k]
		i, ok := tr.nodeIndex[n.Name]
		if !ok {
			continue
		}
		seen[i] = true
		tr.nodeParts[i] = n.Partitions
		all := free.Mask(i)
		inScope := len(tr.cfg.Scope.Partitions) == 0
		for _, p := range n.Partitions {
			inScope = inScope || contains(tr.cfg.Scope.Partitions, p)
		}
		if !n.Schedulable() || !inScope {
			take(i, all)
			continue
		}
		g := tr.cl.Nodes[i].GPUs
		if n.GPUs < g { // Slurm has fewer GPUs than the model: the rest is busy
			take(i, all&^(1<<uint(n.GPUs)-1))
		}
		u := used[i]
		if bits.OnesCount64(u) != n.GPUsUsed {
			u = 1<<uint(min(n.GPUsUsed, 63)) - 1
		}
		take(i, u)
	}
	for i, ok := range seen {
		if !ok {
			take(i, free.Mask(i))
		}
	}
	return free
}
