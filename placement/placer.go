package placement

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/asrpt/asrpt/cluster"
)

// Placer places jobs on one cluster with Heavy-Edge and evaluates the
// per-iteration time model of design §2 on it. It caches job graphs and
// (α_min, α_max) per profile. A Placer is safe for concurrent use; the
// *Free handed to Place is only read.
type Placer struct {
	c    *cluster.Cluster
	tree *tree
	// intra is, per node, the bandwidth between two of its GPUs that are
	// not NVLink-connected: Node.IntraBW when the node has no link matrix,
	// else Bandwidth.Intra (a 0 in a link matrix means PCIe).
	intra []float64
	// linkMax is, per node, the largest entry of its link matrix (0 when
	// the node has none or no NVLink).
	linkMax []int
	// slowest is the slowest bandwidth between two nodes anywhere in the
	// cluster, used for α_max.
	slowest float64
	// linked is true when some node has a non-uniform link matrix.
	linked bool

	mu     sync.Mutex
	graphs map[profileKey]*cached
	empty  *Free
	pool   sync.Pool
}

type profileKey struct {
	model string
	gpus  int
}

// cached is what the Placer remembers about one profile.
type cached struct {
	stages []Stage
	g      *Graph
	// order lists the edge indices by decreasing cut cost
	// c_k + w_e/B_slowest, ties by index.
	order      []int
	haveBounds bool
	amin, amax float64
}

// NewPlacer returns a Placer for c. c must not change afterwards.
func NewPlacer(c *cluster.Cluster) *Placer {
	pl := &Placer{
		c:       c,
		tree:    newTree(c),
		intra:   make([]float64, len(c.Nodes)),
		linkMax: make([]int, len(c.Nodes)),
		slowest: c.BW.Inter,
		graphs:  make(map[profileKey]*cached),
	}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		pl.intra[i] = c.BW.Intra
		if n.IntraBW > 0 && n.Links == nil {
			pl.intra[i] = n.IntraBW
		}
		lo, hi := math.MaxInt, 0
		for a, row := range n.Links {
			for b, l := range row {
				if a != b {
					lo, hi = min(lo, l), max(hi, l)
				}
			}
		}
		switch {
		case hi > 0 && lo == hi && len(n.Links) == n.GPUs:
			// Every pair has the same links (NVSwitch): one bandwidth.
			pl.intra[i] = c.BW.NVLink
		case hi > 0:
			pl.linkMax[i] = hi
			pl.linked = true
		}
	}
	if pl.tree != nil {
		for _, s := range pl.tree.speed {
			pl.slowest = min(pl.slowest, s)
		}
	}
	return pl
}

// Cluster returns the cluster the Placer places on.
func (pl *Placer) Cluster() *cluster.Cluster { return pl.c }

// entry returns the cache entry of prof, building it on first use.
func (pl *Placer) entry(prof *Profile) *cached {
	key := profileKey{prof.Model, prof.GPUs()}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if e, ok := pl.graphs[key]; ok && sameStages(e.stages, prof.Stages) {
		return e
	}
	e := &cached{stages: slices.Clone(prof.Stages), g: NewGraph(prof)}
	e.order = make([]int, len(e.g.Edges))
	for i := range e.order {
		e.order[i] = i
	}
	cut := func(i int) float64 { ed := &e.g.Edges[i]; return e.g.Compute[ed.Stage] + ed.Weight/pl.slowest }
	slices.SortStableFunc(e.order, func(a, b int) int { return cmp.Compare(cut(b), cut(a)) })
	pl.graphs[key] = e
	return e
}

// Graph returns the (cached) job graph of prof.
func (pl *Placer) Graph(prof *Profile) *Graph { return pl.entry(prof).g }

// bw returns the bandwidth in bytes/s between GPUs a and b: +Inf on the
// same GPU; inside a node NVLink·l/lmax for a pair with l NVLinks (lmax the
// node's largest link count), else the node's PCIe bandwidth; between nodes
// the switch tree's bandwidth (Bandwidth.Inter on a flat cluster).
func (pl *Placer) bw(a, b GPU) float64 {
	if a.Node != b.Node {
		return pl.tree.path(a.Node, b.Node, pl.c.BW.Inter)
	}
	if a.Index == b.Index {
		return math.Inf(1)
	}
	return pl.intraBW(a.Node, a.Index, b.Index)
}

func (pl *Placer) intraBW(n, i, j int) float64 {
	if lm := pl.linkMax[n]; lm > 0 {
		links := pl.c.Nodes[n].Links
		if i < len(links) && j < len(links[i]) {
			if l := links[i][j]; l > 0 {
				return pl.c.BW.NVLink * float64(l) / float64(lm)
			}
		}
	}
	return pl.intra[n]
}

// links returns the NVLink count between GPUs i and j of node n.
func (pl *Placer) links(n, i, j int) int {
	if pl.linkMax[n] == 0 {
		return 0
	}
	links := pl.c.Nodes[n].Links
	if i < len(links) && j < len(links[i]) && links[i][j] > 0 {
		return links[i][j]
	}
	return 0
}

// alpha is α(π) of design §2 for graph g and vertex map v:
// max_k (c_k + max over the stage's edges of w_e / B(e)).
func (pl *Placer) alpha(g *Graph, v []GPU) float64 {
	a := 0.0
	for _, c := range g.Compute {
		a = max(a, c)
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		a = max(a, g.Compute[e.Stage]+e.Weight/pl.bw(v[e.U], v[e.V]))
	}
	return a
}

// Alpha returns α(π), the per-iteration time in seconds of prof placed as p
// (design §2): the largest stage time c_k + (largest w_e/B over the stage's
// edges). It returns 0 for a nil profile (a plain job runs its trace
// duration). It panics if p.Vertex does not have one GPU per vertex of the
// profile's job graph, which is a programming error.
func (pl *Placer) Alpha(prof *Profile, p *Placement) float64 {
	if prof == nil {
		return 0
	}
	g := pl.Graph(prof)
	if len(p.Vertex) != g.Vertices {
		panic(fmt.Sprintf("placement: Alpha of %q: placement maps %d vertices, job graph has %d", prof.Model, len(p.Vertex), g.Vertices))
	}
	return pl.alpha(g, p.Vertex)
}

// AlphaOf is Alpha for a placement that may not map the profile's job
// graph (one rebuilt from node names alone): ok is false then, and for a
// nil profile.
func (pl *Placer) AlphaOf(prof *Profile, p *Placement) (alpha float64, ok bool) {
	if prof == nil || len(p.Vertex) != pl.Graph(prof).Vertices {
		return 0, false
	}
	return pl.Alpha(prof, p), true
}

// alphaMax is α with every edge between two nodes at the cluster's slowest
// inter-node bandwidth.
func (pl *Placer) alphaMax(g *Graph) float64 {
	a := 0.0
	for _, c := range g.Compute {
		a = max(a, c)
	}
	for i := range g.Edges {
		e := &g.Edges[i]
		a = max(a, g.Compute[e.Stage]+e.Weight/pl.slowest)
	}
	return a
}

// Bounds returns α_min, the α of the Heavy-Edge placement of prof on the
// empty cluster, and α_max, the α with every edge between servers at the
// slowest inter-server bandwidth of the cluster (seconds per iteration).
// When prof does not fit the empty cluster, α_min = α_max. Both are 0 for a
// nil profile. Results are cached per (Model, GPUs) and stage values.
func (pl *Placer) Bounds(prof *Profile) (alphaMin, alphaMax float64) {
	if prof == nil {
		return 0, 0
	}
	e := pl.entry(prof)
	pl.mu.Lock()
	if e.haveBounds {
		// Read under the lock: a goroutine that computed the bounds at
		// the same time may be storing them again.
		alphaMin, alphaMax = e.amin, e.amax
		pl.mu.Unlock()
		return alphaMin, alphaMax
	}
	if pl.empty == nil {
		pl.empty = NewFree(pl.c)
	}
	empty := pl.empty
	pl.mu.Unlock()

	amax := pl.alphaMax(e.g)
	amin := amax
	if p, err := pl.Place(empty, prof.GPUs(), prof); err == nil {
		amin = min(pl.alpha(e.g, p.Vertex), amax)
	}
	pl.mu.Lock()
	e.amin, e.amax, e.haveBounds = amin, amax, true
	pl.mu.Unlock()
	return amin, amax
}

// CommHeavy reports whether prof is communication-heavy: α_max/α_min ≥
// threshold (design §2, default threshold 1.5). It is false for nil (plain
// jobs are communication-light) and when α_min is 0.
func (pl *Placer) CommHeavy(prof *Profile, threshold float64) bool {
	if prof == nil {
		return false
	}
	amin, amax := pl.Bounds(prof)
	return amin > 0 && amax/amin >= threshold
}

// scratch holds the per-call working memory of Place.
type scratch struct {
	// per node (len = nodes), reset after each call through touched:
	used    []int // GPUs of this placement on the node so far
	pos     []int // 1 + position of the node in touched, 0 when untouched
	touched []int
	pieces  [][]int // per touched node: the vertices put there, in order
	// per vertex:
	parent, size []int
	cand         []int
	// histograms by GPU count: node capacities, group sizes, work copy.
	bins, sizes, work []int
	// local search:
	val   []float64
	ord   []int
	spare []GPU
	at    []int // per vertex: 1 + its position in the piece being placed
}

func (pl *Placer) getScratch(nodes int) *scratch {
	if s, ok := pl.pool.Get().(*scratch); ok && len(s.used) == nodes {
		return s
	}
	return &scratch{used: make([]int, nodes), pos: make([]int, nodes)}
}

func (pl *Placer) putScratch(s *scratch) {
	pl.reset(s)
	pl.pool.Put(s)
}

// reset clears the per-node part of s.
func (pl *Placer) reset(s *scratch) {
	for _, n := range s.touched {
		s.used[n] = 0
		s.pos[n] = 0
	}
	s.touched = s.touched[:0]
	for i := range s.pieces {
		s.pieces[i] = s.pieces[i][:0]
	}
	s.pieces = s.pieces[:0]
}

// touch records that k GPUs of node n go to the placement and returns the
// node's position in touched.
func (s *scratch) touch(n, k int) int {
	if s.pos[n] == 0 {
		s.touched = append(s.touched, n)
		s.pos[n] = len(s.touched)
		if len(s.pieces) < len(s.touched) {
			s.pieces = append(s.pieces, nil)
		}
	}
	s.used[n] += k
	return s.pos[n] - 1
}

// Place chooses GPUs for a job of gpus GPUs on the free GPUs (design §3).
//
// Plain job (prof == nil, only the count matters): the whole job goes to
// one node by best fit when some node has gpus free GPUs (the node with the
// fewest free GPUs that fits, ties by node index); otherwise it is spread
// over the fewest nodes, most free first, the last node chosen by best fit
// for the remainder. With a switch tree the spread stays under the
// lowest-level switch whose nodes hold the job (among those, the one with
// the fewest free GPUs, then the lowest index) when there is one. Costs
// O(max GPUs per node + nodes used) on a flat cluster, plus O(switches +
// nodes under the chosen switch) with a tree.
//
// Profiled job, Heavy-Edge:
//
//  1. When one node holds the job: best fit as above. Where nodes have
//     non-uniform NVLink matrices, the next nodes in best-fit order (up to
//     8 in all) are compared too and the lowest α wins (ties: best fit).
//  2. Otherwise, in the domain chosen as for a plain job: the job graph's
//     edges are taken in decreasing order of the α they would set if cut,
//     c_k + w_e/B_inter (for edges of one stage, decreasing weight, as in the
//     design; across stages the compute time counts too); the endpoint
//     groups are merged while the merged group fits the domain's largest
//     free node and the groups still pack whole into the free nodes (best
//     fit decreasing). Groups then go, largest first, to the node with the
//     fewest free GPUs that holds them whole (ours: the design says the
//     node with the most; on a flat cluster the cut, and so α, is the same,
//     and large free nodes stay whole for later jobs); a group that fits
//     nowhere whole is split over the nodes with the most free GPUs. With a
//     switch tree, the placement on the whole cluster replaces the one
//     under the chosen switch when its α is strictly lower.
//  3. Inside a node, each group takes the lowest free indices, or, with a
//     non-uniform link matrix, the chain of NVLink-connected GPUs (from the
//     best of every start) that makes its internal edges cheapest.
//
// A local search then moves or swaps the endpoints of the edge that sets α
// while that lowers α, within the nodes already chosen (see improve).
//
// gpus must be ≥ 1 and equal prof.GPUs(); free must track this Placer's
// cluster. It returns ErrNoFit itself (unwrapped, cheap to test with
// errors.Is) when free.Total() < gpus; then nothing can fit, and otherwise
// something always does. Place is deterministic and does not modify free.
func (pl *Placer) Place(free *Free, gpus int, prof *Profile) (Placement, error) {
	if gpus < 1 {
		return Placement{}, fmt.Errorf("placement: job of %d GPUs, want at least 1", gpus)
	}
	if free.Nodes() != len(pl.c.Nodes) {
		return Placement{}, fmt.Errorf("placement: free-GPU state has %d nodes, cluster has %d", free.Nodes(), len(pl.c.Nodes))
	}
	var g *Graph
	var ce *cached
	if prof != nil {
		if err := prof.Validate(); err != nil {
			return Placement{}, err
		}
		if n := prof.GPUs(); n != gpus {
			return Placement{}, fmt.Errorf("placement: profile %q has %d GPUs, job asks for %d", prof.Model, n, gpus)
		}
		ce = pl.entry(prof)
		g = ce.g
	}
	if free.Total() < gpus {
		return Placement{}, ErrNoFit
	}
	if gpus <= free.Largest() {
		n := free.bestFit(gpus, nil)
		p := pl.single(free, n, gpus, g)
		if g != nil && pl.linked {
			p = pl.singleLinked(free, gpus, g, p)
		}
		return p, nil
	}
	s := pl.getScratch(free.Nodes())
	defer pl.putScratch(s)
	dom := pl.domain(free, gpus)
	if g == nil {
		return pl.spread(free, gpus, dom, s), nil
	}
	p := pl.heavyEdge(free, g, ce.order, dom, s)
	if dom >= 0 {
		// The subtree keeps traffic under one switch, but its free GPUs
		// may split a heavy group that the whole cluster keeps whole:
		// take the cluster-wide placement when its α is strictly lower.
		pl.reset(s)
		q := pl.heavyEdge(free, g, ce.order, -1, s)
		if pl.alpha(g, q.Vertex) < pl.alpha(g, p.Vertex) {
			p = q
		}
	}
	return p, nil
}

// single places a job entirely on node n, which has mask free.
func (pl *Placer) single(free *Free, n int, gpus int, g *Graph) Placement {
	mask := free.Mask(n)
	p := Placement{}
	if g == nil {
		p.Slots = []Slot{{Node: n, GPUs: pl.pick(n, mask, gpus, nil)}}
		return p
	}
	p.Vertex = make([]GPU, gpus)
	s := pl.getScratch(len(pl.c.Nodes))
	piece := make([]int, gpus)
	for i := range piece {
		piece[i] = i
	}
	pl.pickGroup(n, mask, piece, g, p.Vertex, s)
	pl.improve(g, p.Vertex, free, []int{n}, s)
	pl.putScratch(s)
	return finish(p)
}

// singleTries is how many nodes, in best-fit order, Place compares for a
// job that fits one node when the cluster has non-uniform link matrices.
const singleTries = 8

// singleLinked compares the best-fit placement p with the placements on the
// next nodes in best-fit order (up to singleTries nodes in all) and returns
// the one with the lowest α, ties to the earlier. With non-uniform link
// matrices the fewest free GPUs are not always the best-linked ones.
func (pl *Placer) singleLinked(free *Free, gpus int, g *Graph, p Placement) Placement {
	best := pl.alpha(g, p.Vertex)
	first := p.Slots[0].Node
	tries := 1
	for c := gpus; c < len(free.bucket) && tries < singleTries; c++ {
		for n := free.bucket[c].next(0); n >= 0 && tries < singleTries; n = free.bucket[c].next(n + 1) {
			if n == first {
				continue
			}
			tries++
			q := pl.single(free, n, gpus, g)
			if a := pl.alpha(g, q.Vertex); a < best {
				best, p = a, q
			}
		}
	}
	return p
}

// finish sets p.Slots from p.Vertex.
func finish(p Placement) Placement {
	p.Slots = p.Slots[:0]
	for _, v := range p.Vertex {
		i, ok := slices.BinarySearchFunc(p.Slots, v.Node, func(s Slot, n int) int { return s.Node - n })
		if !ok {
			p.Slots = slices.Insert(p.Slots, i, Slot{Node: v.Node})
		}
		p.Slots[i].GPUs |= 1 << uint(v.Index)
	}
	return p
}

// pick chooses k GPUs among mask on node n and returns them as a mask; if
// out is not nil, out[i] receives the i-th GPU chosen. Without a link matrix
// (or with a uniform one) it takes the lowest indices. With one it builds a
// chain (see chain) from the best start.
func (pl *Placer) pick(n int, mask uint64, k int, out []GPU) uint64 {
	if pl.linkMax[n] == 0 || k == bits.OnesCount64(mask) && out == nil {
		var m uint64
		for i := 0; i < k; i++ {
			b := bits.TrailingZeros64(mask)
			mask &^= 1 << uint(b)
			m |= 1 << uint(b)
			if out != nil {
				out[i] = GPU{Node: n, Index: b}
			}
		}
		return m
	}
	return pl.chain(n, mask, k, -1, out)
}

// chain picks k GPUs of mask on node n as a chain: it starts at start (or,
// when start < 0, at the GPU with the most NVLinks to the other candidates)
// and adds, each time, the GPU with the most links to the previous one — for
// the last of three or more, the most links to both the previous and the
// first, closing a ring — ties by the most links to those chosen, then the
// lowest index.
func (pl *Placer) chain(n int, mask uint64, k, start int, out []GPU) uint64 {
	var chosen uint64
	prev, first := -1, -1
	for i := 0; i < k; i++ {
		best, bestA, bestB := -1, -1, -1
		if i == 0 && start >= 0 {
			best = start
		}
		for m := mask; m != 0 && (i > 0 || start < 0); m &= m - 1 {
			j := bits.TrailingZeros64(m)
			a, b := 0, 0
			switch {
			case i == 0:
				for o := mask; o != 0; o &= o - 1 {
					if x := bits.TrailingZeros64(o); x != j {
						a += pl.links(n, j, x)
					}
				}
			case i == k-1 && k >= 3:
				a = min(pl.links(n, prev, j), pl.links(n, first, j))
			default:
				a = pl.links(n, prev, j)
			}
			for o := chosen; o != 0; o &= o - 1 {
				b += pl.links(n, bits.TrailingZeros64(o), j)
			}
			if a > bestA || a == bestA && b > bestB {
				best, bestA, bestB = j, a, b
			}
		}
		mask &^= 1 << uint(best)
		chosen |= 1 << uint(best)
		prev = best
		if i == 0 {
			first = best
		}
		if out != nil {
			out[i] = GPU{Node: n, Index: best}
		}
	}
	return chosen
}

// pickGroup chooses GPUs of mask on node n for the vertices piece of g and
// writes them to out (out[i] for piece[i]). On a node with a non-uniform
// link matrix it builds a chain from every possible start and keeps the one
// whose edges inside the piece cost least (ties: the lowest start).
func (pl *Placer) pickGroup(n int, mask uint64, piece []int, g *Graph, out []GPU, s *scratch) uint64 {
	k := len(piece)
	if pl.linkMax[n] == 0 || k <= 1 {
		return pl.pick(n, mask, k, out)
	}
	s.at = grow(s.at, g.Vertices)
	for i, v := range piece {
		s.at[v] = i + 1
	}
	var try [64]GPU
	bestCost, bestMask := math.Inf(1), uint64(0)
	for m := mask; m != 0; m &= m - 1 {
		got := pl.chain(n, mask, k, bits.TrailingZeros64(m), try[:k])
		cost := 0.0
		for i, v := range piece {
			for _, ei := range g.adj[v] {
				e := &g.Edges[ei]
				u := e.U + e.V - v
				if j := s.at[u] - 1; j > i {
					cost = max(cost, g.Compute[e.Stage]+e.Weight/pl.bw(try[i], try[j]))
				}
			}
		}
		if cost < bestCost {
			bestCost, bestMask = cost, got
			copy(out, try[:k])
		}
	}
	for _, v := range piece {
		s.at[v] = 0
	}
	return bestMask
}

// domain returns the switch whose subtree the job should stay under, or -1
// for the whole cluster: the lowest-level switch whose nodes have at least
// gpus free GPUs, ties by the fewest free GPUs, then index.
func (pl *Placer) domain(free *Free, gpus int) int {
	t := pl.tree
	if t == nil {
		return -1
	}
	best := -1
	for s := range t.parent {
		f := free.swFree[s]
		if f < gpus {
			continue
		}
		if best < 0 || t.level[s] < t.level[best] || t.level[s] == t.level[best] && f < free.swFree[best] {
			best = s
		}
	}
	return best
}

// candidates puts the nodes of switch dom with free GPUs into s.cand, most
// free first, ties by index.
func (pl *Placer) candidates(free *Free, dom int, s *scratch) []int {
	s.cand = s.cand[:0]
	for _, n := range pl.tree.members[dom] {
		if free.On(n) > 0 {
			s.cand = append(s.cand, n)
		}
	}
	slices.SortFunc(s.cand, func(a, b int) int {
		if fa, fb := free.On(a), free.On(b); fa != fb {
			return fb - fa
		}
		return a - b
	})
	return s.cand
}

// spread places a plain job over the fewest nodes of the domain, most free
// first, the last by best fit for the remainder.
func (pl *Placer) spread(free *Free, gpus, dom int, s *scratch) Placement {
	rem := gpus
	if dom >= 0 {
		cand := pl.candidates(free, dom, s)
		for i, n := range cand {
			if f := free.On(n); f < rem {
				s.touch(n, f)
				rem -= f
				continue
			}
			best := n
			for _, m := range cand[i+1:] {
				if f := free.On(m); f >= rem && f <= free.On(best) {
					best = m // cand is by decreasing free count: the last fit is the best fit
				}
			}
			s.touch(best, rem)
			rem = 0
			break
		}
	} else {
	outer:
		for c := len(free.bucket) - 1; c >= 1; c-- {
			for n := free.bucket[c].next(0); n >= 0; n = free.bucket[c].next(n + 1) {
				if c < rem {
					s.touch(n, c)
					rem -= c
					continue
				}
				best := pl.bestFitUntouched(free, rem, s)
				s.touch(best, rem)
				rem = 0
				break outer
			}
		}
	}
	return pl.slots(free, s, nil)
}

// bestFitUntouched is free.bestFit over the nodes not yet in s.touched.
func (pl *Placer) bestFitUntouched(free *Free, k int, s *scratch) int {
	for c := max(k, 1); c < len(free.bucket); c++ {
		for n := free.bucket[c].next(0); n >= 0; n = free.bucket[c].next(n + 1) {
			if s.pos[n] == 0 {
				return n
			}
		}
	}
	return -1
}

// slots turns the per-node counts (and, for a graph, vertex pieces) of s
// into a Placement with slots by increasing node index.
func (pl *Placer) slots(free *Free, s *scratch, g *Graph) Placement {
	nodes := slices.Clone(s.touched)
	slices.Sort(nodes)
	p := Placement{Slots: make([]Slot, len(nodes))}
	if g != nil {
		p.Vertex = make([]GPU, g.Vertices)
	}
	var buf [64]GPU
	for i, n := range nodes {
		mask := free.Mask(n)
		if g == nil {
			p.Slots[i] = Slot{Node: n, GPUs: pl.pick(n, mask, s.used[n], nil)}
			continue
		}
		var m uint64
		for _, piece := range pl.splitPieces(s.pieces[s.pos[n]-1]) {
			got := pl.pickGroup(n, mask&^m, piece, g, buf[:len(piece)], s)
			m |= got
			for j, v := range piece {
				p.Vertex[v] = buf[j]
			}
		}
		p.Slots[i] = Slot{Node: n, GPUs: m}
	}
	if g != nil {
		pl.improve(g, p.Vertex, free, nodes, s)
		p = finish(p)
	}
	return p
}

// splitPieces splits a node's vertex list, stored as groups separated by -1,
// into its groups.
func (pl *Placer) splitPieces(vs []int) [][]int {
	var out [][]int
	start := 0
	for i, v := range vs {
		if v < 0 {
			if i > start {
				out = append(out, vs[start:i])
			}
			start = i + 1
		}
	}
	if start < len(vs) {
		out = append(out, vs[start:])
	}
	return out
}

func find(parent []int, v int) int {
	for parent[v] != v {
		parent[v] = parent[parent[v]]
		v = parent[v]
	}
	return v
}

// heavyEdge is step 2 of design §3 for a job that fits no single node.
func (pl *Placer) heavyEdge(free *Free, g *Graph, order []int, dom int, s *scratch) Placement {
	V := g.Vertices
	var cand []int
	capacity := 0
	if dom >= 0 {
		cand = pl.candidates(free, dom, s)
		capacity = free.On(cand[0])
	} else {
		capacity = free.Largest()
	}

	// Capacities of the domain as a histogram: bins[c] nodes with c free.
	s.bins = grow(s.bins, len(free.bucket))
	if cand != nil {
		clear(s.bins)
		for _, n := range cand {
			s.bins[free.On(n)]++
		}
	} else {
		copy(s.bins, free.nb)
	}

	// Merge groups along edges by decreasing weight while the merged group
	// fits the largest free node and the groups still pack whole.
	s.parent = grow(s.parent, V)
	s.size = grow(s.size, V)
	s.sizes = grow(s.sizes, capacity+1)
	clear(s.sizes)
	for v := 0; v < V; v++ {
		s.parent[v], s.size[v] = v, 1
	}
	s.sizes[1] = V
	groups := V
	for _, ei := range order {
		e := &g.Edges[ei]
		a, b := find(s.parent, e.U), find(s.parent, e.V)
		if a == b || s.size[a]+s.size[b] > capacity {
			continue
		}
		x, y := s.size[a], s.size[b]
		s.sizes[x]--
		s.sizes[y]--
		s.sizes[x+y]++
		if groups-1 > s.bins[capacity] && !s.packs() {
			s.sizes[x+y]--
			s.sizes[x]++
			s.sizes[y]++
			continue
		}
		groups--
		if b < a {
			a, b = b, a
		}
		s.parent[b] = a
		s.size[a] = x + y
	}

	// Groups, each as its vertices ascending, largest first (ties: smallest
	// first vertex). A group's root is its smallest vertex.
	roots := make([]int, 0, V)
	for v := 0; v < V; v++ {
		if find(s.parent, v) == v {
			roots = append(roots, v)
		}
	}
	slices.SortStableFunc(roots, func(a, b int) int { return s.size[b] - s.size[a] })
	members := make([][]int, V)
	for v := 0; v < V; v++ {
		r := find(s.parent, v)
		members[r] = append(members[r], v)
	}

	for _, r := range roots {
		vs := members[r]
		for len(vs) > 0 {
			n := pl.fitWhole(free, len(vs), cand, s)
			k := len(vs)
			if n < 0 {
				n = pl.mostRemaining(free, cand, s)
				k = min(k, free.On(n)-s.used[n])
			}
			i := s.touch(n, k)
			if len(s.pieces[i]) > 0 {
				s.pieces[i] = append(s.pieces[i], -1)
			}
			s.pieces[i] = append(s.pieces[i], vs[:k]...)
			vs = vs[k:]
		}
	}
	return pl.slots(free, s, g)
}

func grow(b []int, n int) []int {
	if cap(b) < n {
		return make([]int, n)
	}
	return b[:n]
}

// fitWhole returns the node of the domain (cand, or the whole cluster when
// cand is nil) whose remaining free GPUs are the fewest that are ≥ k (ties:
// lowest index), or -1.
func (pl *Placer) fitWhole(free *Free, k int, cand []int, s *scratch) int {
	best, bestR := -1, 0
	better := func(n, r int) {
		if r >= k && (best < 0 || r < bestR || r == bestR && n < best) {
			best, bestR = n, r
		}
	}
	if cand != nil {
		for _, n := range cand {
			better(n, free.On(n)-s.used[n])
		}
		return best
	}
	for _, n := range s.touched {
		better(n, free.On(n)-s.used[n])
	}
	if n := pl.bestFitUntouched(free, k, s); n >= 0 {
		better(n, free.On(n))
	}
	return best
}

// mostRemaining returns the node of the domain with the most remaining free
// GPUs (ties: lowest index).
func (pl *Placer) mostRemaining(free *Free, cand []int, s *scratch) int {
	best, bestR := -1, 0
	better := func(n, r int) {
		if r > 0 && (best < 0 || r > bestR || r == bestR && n < best) {
			best, bestR = n, r
		}
	}
	if cand != nil {
		for _, n := range cand {
			better(n, free.On(n)-s.used[n])
		}
		return best
	}
	for _, n := range s.touched {
		better(n, free.On(n)-s.used[n])
	}
	for c := len(free.bucket) - 1; c >= max(bestR, 1); c-- {
		for n := free.bucket[c].next(0); n >= 0; n = free.bucket[c].next(n + 1) {
			if s.pos[n] == 0 {
				better(n, c)
				break
			}
		}
		if best >= 0 && bestR >= c {
			break
		}
	}
	return best
}

// packs reports whether groups with the size histogram s.sizes fit whole
// into nodes with the capacity histogram s.bins, packing them largest first,
// each into the smallest capacity that holds it (best fit decreasing, the
// order in which heavyEdge assigns them).
func (s *scratch) packs() bool {
	s.work = append(s.work[:0], s.bins...)
	for k := len(s.sizes) - 1; k >= 1; k-- {
		for range s.sizes[k] {
			c := k
			for c < len(s.work) && s.work[c] == 0 {
				c++
			}
			if c == len(s.work) {
				return false
			}
			s.work[c]--
			s.work[c-k]++
		}
	}
	return true
}
