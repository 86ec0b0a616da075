package placement

import "github.com/asrpt/asrpt/cluster"

// tree is the switch tree of a cluster in index form. It is immutable once
// built and shared by every Free and the Placer of the cluster.
type tree struct {
	// leaf is, per node, the index of its leaf switch in cluster.Switches,
	// or -1 when the node hangs off no switch (always on a flat cluster).
	leaf []int32
	// parent is, per switch, the index of its parent switch or -1 for a
	// root. Unknown parent names and cycles are cut: the switch becomes a
	// root.
	parent []int32
	// level is 0 for leaf switches and one more than the highest child
	// level otherwise (recomputed here, not taken from the input).
	level []int
	// depth is the distance from the switch to its root.
	depth []int
	// speed is the bandwidth in bytes/s of traffic crossing the switch
	// (Switch.LinkSpeed, or Bandwidth.Inter where that is 0).
	speed []float64
	// members lists, per switch, the node indices under it, ascending.
	members [][]int
}

// newTree builds the index form of c's switch tree; nil when no node
// names a switch (a flat cluster: one switch at Bandwidth.Inter).
func newTree(c *cluster.Cluster) *tree {
	flat := true
	for i := range c.Nodes {
		if c.Nodes[i].Switch != "" {
			flat = false
			break
		}
	}
	if flat || len(c.Switches) == 0 {
		return nil
	}
	t := &tree{
		leaf:    make([]int32, len(c.Nodes)),
		parent:  make([]int32, len(c.Switches)),
		level:   make([]int, len(c.Switches)),
		depth:   make([]int, len(c.Switches)),
		speed:   make([]float64, len(c.Switches)),
		members: make([][]int, len(c.Switches)),
	}
	idx := make(map[string]int32, len(c.Switches))
	for i, s := range c.Switches {
		if _, dup := idx[s.Name]; !dup {
			idx[s.Name] = int32(i)
		}
	}
	for i, s := range c.Switches {
		t.parent[i] = -1
		if p, ok := idx[s.Parent]; ok && s.Parent != "" && int(p) != i {
			t.parent[i] = p
		}
		t.speed[i] = s.LinkSpeed
		if t.speed[i] <= 0 {
			t.speed[i] = c.BW.Inter
		}
	}
	// Cut cycles: walk up from every switch; a walk longer than the number
	// of switches has entered a cycle, and the edge that closes it is cut.
	for i := range t.parent {
		seen := map[int32]bool{int32(i): true}
		for s := int32(i); t.parent[s] >= 0; s = t.parent[s] {
			if seen[t.parent[s]] {
				t.parent[s] = -1
				break
			}
			seen[t.parent[s]] = true
		}
	}
	for i := range t.parent {
		d := 0
		for s := t.parent[i]; s >= 0; s = t.parent[s] {
			d++
		}
		t.depth[i] = d
	}
	for i := range c.Nodes {
		t.leaf[i] = -1
		if s, ok := idx[c.Nodes[i].Switch]; ok && c.Nodes[i].Switch != "" {
			t.leaf[i] = s
			for w := s; w >= 0; w = t.parent[w] {
				t.members[w] = append(t.members[w], i)
			}
		}
	}
	// Levels: 0 for switches with nodes or without children; a parent is one
	// above its highest child.
	for i := range t.parent {
		l := 0
		for s := t.parent[i]; s >= 0; s = t.parent[s] {
			l++
			if t.level[s] < l {
				t.level[s] = l
			}
		}
	}
	return t
}

// path returns the bandwidth between nodes a and b (a ≠ b): the slowest
// switch on the way up from each node's leaf to their lowest common
// ancestor, both included. Nodes without a common switch (or without a
// switch) use inter, the cluster's Bandwidth.Inter, together with every
// switch on their way up.
func (t *tree) path(a, b int, inter float64) float64 {
	if t == nil {
		return inter
	}
	x, y := t.leaf[a], t.leaf[b]
	if x < 0 || y < 0 {
		return inter
	}
	if x == y {
		return t.speed[x]
	}
	bw := min(t.speed[x], t.speed[y])
	for t.depth[x] > t.depth[y] {
		x = t.parent[x]
		bw = min(bw, t.speed[x])
	}
	for t.depth[y] > t.depth[x] {
		y = t.parent[y]
		bw = min(bw, t.speed[y])
	}
	for x != y {
		x, y = t.parent[x], t.parent[y]
		if x < 0 || y < 0 {
			return min(bw, inter)
		}
		bw = min(bw, t.speed[x], t.speed[y])
	}
	return bw
}
