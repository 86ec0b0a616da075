package decision

import (
	"math"
	"math/bits"
	"slices"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// nodeView is the cluster's nodes as the decide step sees them: the
// cluster model, and from each cycle's node list and job list the
// partitions of each node, the PriorityTier pending jobs claim on it and
// the free GPUs. It answers which nodes a job may use and which node list
// to write for it.
type nodeView struct {
	cl *cluster.Cluster
	// index maps a node's name to its index in cl.Nodes.
	index map[string]int
	// nodeParts holds the partitions of each cluster node (by index) as
	// this cycle's node list gave them.
	nodeParts [][]string
	// tiers is Options.PartitionTiers; tierClaim holds, by cluster node
	// index, the highest PriorityTier of a partition of that node that a
	// pending job (not held, not held back) may run in this cycle (0:
	// none).
	tiers     map[string]int
	tierClaim []int
}

// newNodeView returns the view of cl with partition tiers tiers.
func newNodeView(cl *cluster.Cluster, tiers map[string]int) nodeView {
	nv := nodeView{cl: cl, index: make(map[string]int, len(cl.Nodes)), tiers: tiers}
	for i, n := range cl.Nodes {
		nv.index[n.Name] = i
	}
	return nv
}

// claimTiers fills nv.tierClaim from this cycle's nodes (nv.nodeParts) and
// the partitions claimed by its pending jobs (queueView.claimed): each node
// gets the highest PriorityTier among its partitions that a pending job,
// neither held nor held back, may run in. Work: one pass over the nodes'
// partitions.
func (nv *nodeView) claimTiers(claimed map[string]bool) {
	nv.tierClaim = nv.tierClaim[:0]
	if len(nv.tiers) == 0 {
		return
	}
	nv.tierClaim = slices.Grow(nv.tierClaim, len(nv.nodeParts))[:len(nv.nodeParts)]
	for i, parts := range nv.nodeParts {
		nv.tierClaim[i] = 0
		for _, p := range parts {
			if claimed[p] {
				nv.tierClaim[i] = max(nv.tierClaim[i], nv.tiers[p])
			}
		}
	}
}

// outranked reports whether pending jobs of a partition of a higher
// PriorityTier than any of e's own partitions on cluster node i wait for
// that node: Slurm would give it to them first.
func (nv *nodeView) outranked(e *Entry, i int, parts []string) bool {
	if i >= len(nv.tierClaim) || nv.tierClaim[i] == 0 {
		return false
	}
	own := math.MinInt
	for _, p := range parts {
		if slices.Contains(nv.nodeParts[i], p) {
			own = max(own, nv.tiers[p])
		}
	}
	return nv.tierClaim[i] > own
}

// freeModel returns the free GPUs as Slurm reports them: each usable node
// in scope (a partition of scope; any, when scope is empty) has its configured GPUs less those in use; GPU indices come from
// the running jobs where they add up, else the lowest indices count as used.
func (nv *nodeView) freeModel(nodes []slurmclient.Node, jobs []slurmclient.Job, scope []string) *placement.Free {
	free := placement.NewFree(nv.cl)
	used := make(map[int]uint64)
	for i := range jobs {
		for name, idx := range jobs[i].GPUIndices {
			if n, ok := nv.index[name]; ok {
				for _, x := range idx {
					if x >= 0 && x < 64 {
						used[n] |= 1 << uint(x)
					}
				}
			}
		}
	}
	seen := make([]bool, len(nv.cl.Nodes))
	nv.nodeParts = slices.Grow(nv.nodeParts[:0], len(nv.cl.Nodes))[:len(nv.cl.Nodes)]
	clear(nv.nodeParts)
	take := func(i int, mask uint64) {
		mask &= free.Mask(i)
		if mask != 0 {
			_ = free.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: mask}}})
		}
	}
	for k := range nodes {
		n := &nodes[k]
		i, ok := nv.index[n.Name]
		if !ok {
			continue
		}
		seen[i] = true
		nv.nodeParts[i] = n.Partitions
		all := free.Mask(i)
		inScope := len(scope) == 0
		for _, p := range n.Partitions {
			inScope = inScope || slices.Contains(scope, p)
		}
		if !n.Schedulable() || !inScope {
			take(i, all)
			continue
		}
		g := nv.cl.Nodes[i].GPUs
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

// mayUse reports whether e's request can use cluster node i: the node is
// in one of the job's partitions (as this cycle's node list says), no
// pending job of a partition of a higher PriorityTier waits for it
// (outranked), the job does not exclude it, and, for a job that named its
// own nodes, it is one of them. A job pinned to a node it cannot use would wait for ever, or
// start elsewhere than asrpt planned.
func (nv *nodeView) mayUse(e *Entry, i int) bool {
	if e.Record == nil {
		return true
	}
	name := nv.cl.Nodes[i].Name
	if slices.Contains(e.Record.ExcludedNodes, name) {
		return false
	}
	if e.OwnNodes && len(e.Record.RequiredNodes) > 0 && !slices.Equal(e.Record.RequiredNodes, e.Nodes) &&
		!slices.Contains(e.Record.RequiredNodes, name) {
		return false
	}
	parts := e.Record.Partitions()
	if len(parts) == 0 || i >= len(nv.nodeParts) || nv.nodeParts[i] == nil {
		return true
	}
	for _, p := range parts {
		if slices.Contains(nv.nodeParts[i], p) {
			return !nv.outranked(e, i, parts)
		}
	}
	return false
}

// mayUsePlacement reports whether e may use every node of p.
func (nv *nodeView) mayUsePlacement(e *Entry, p *placement.Placement) bool {
	for _, sl := range p.Slots {
		if !nv.mayUse(e, sl.Node) {
			return false
		}
	}
	return true
}

// heldPlacement returns the GPUs running job sj holds, from its GPU
// indices, when they are on cluster nodes and add up to gpus; else an
// empty placement.
func (nv *nodeView) heldPlacement(sj *slurmclient.Job, gpus int) placement.Placement {
	var p placement.Placement
	n := 0
	for name, idx := range sj.GPUIndices {
		i, ok := nv.index[name]
		if !ok {
			return placement.Placement{}
		}
		var mask uint64
		for _, x := range idx {
			if x < 0 || x >= 64 {
				return placement.Placement{}
			}
			mask |= 1 << uint(x)
		}
		if mask != 0 {
			p.Slots = append(p.Slots, placement.Slot{Node: i, GPUs: mask})
			n += bits.OnesCount64(mask)
		}
	}
	if n != gpus {
		return placement.Placement{}
	}
	slices.SortFunc(p.Slots, func(a, b placement.Slot) int { return a.Node - b.Node })
	return p
}

// nodeUpdate returns the node list (and per-node GPU count, 0 for none) to
// write for dispatched job e, or nil and the reason when none is to be
// written: the job's request must allow it (see the package documentation).
func (nv *nodeView) nodeUpdate(e *Entry, cfg Settings) ([]string, int, reason.Reason) {
	switch {
	case !cfg.RequiredNodes:
		return nil, 0, reason.Of(reason.NodeListsOff, "node lists off (required_nodes = false)")
	case e.Record == nil || e.Phase != PhDispatched:
		return nil, 0, reason.Reason{}
	case e.NoNodes:
		return nil, 0, reason.Of(reason.NodeListRefused, "Slurm refused a node list for this job")
	}
	sj := e.Record
	if why := nodeListBar(e.shape); !why.None() {
		return nil, 0, why
	}
	if !e.placed {
		return nil, 0, reason.Of(reason.NoPlacement, "no placement on nodes the job can use")
	}
	if len(sj.RequiredNodes) > 0 && !slices.Equal(sj.RequiredNodes, e.Nodes) {
		return nil, 0, reason.Of(reason.NodesNamed, "the job names its nodes")
	}
	names, err := placement.NodeNames(nv.cl, &e.place)
	if err != nil || len(names) == 0 {
		return nil, 0, reason.Of(reason.NoPlacement, "no placement on nodes the job can use")
	}
	per := e.place.Slots[0].Count()
	uniform := true
	for _, sl := range e.place.Slots {
		if !nv.mayUse(e, sl.Node) {
			return nil, 0, reason.Of(reason.NodeNotUsable, "placement on a node the job cannot use")
		}
		uniform = uniform && sl.Count() == per
	}
	total := sj.GPUs.Total
	switch {
	case len(names) == 1 && (sj.GPUs.PerNode == 0 || sj.GPUs.PerNode == total):
		return names, 0, reason.Reason{}
	case len(names) > 1 && uniform && sj.GPUs.PerNode == per:
		return names, 0, reason.Reason{}
	case len(names) > 1 && uniform && sj.GPUs.PerNode == 0 && sj.GPUs.PerJob == total && cfg.GPUsPerNode:
		return names, per, reason.Reason{}
	}
	return nil, 0, reason.Of(reason.GPUsPerNodeDiffer, "the placement does not match the job's GPUs per node")
}
