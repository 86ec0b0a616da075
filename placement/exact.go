package placement

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/asrpt/asrpt/cluster"
)

// Size limits of Exact. Its search is exponential: with the symmetry
// breaking below, 12 vertices over up to 8 distinct free nodes take well
// under a second (see README.md); larger instances are refused.
const (
	// MaxExactVertices is the largest job graph (GPUs) Exact accepts.
	MaxExactVertices = 12
	// MaxExactBins is the largest number of bins Exact accepts: one per
	// node with free GPUs and no link matrix, plus one per free GPU of a
	// node with a link matrix.
	MaxExactBins = 48
	// MaxExactSteps bounds the search nodes Exact visits; an instance that
	// needs more is refused (deterministically).
	MaxExactSteps = 20_000_000
)

// ErrTooLarge is returned by Exact for an instance beyond its size limits.
var ErrTooLarge = errors.New("placement: instance too large for the exact search")

// Exact returns a placement of prof on the free GPUs that minimises α, its
// α in seconds, found by branch and bound. It is the reference Heavy-Edge is
// measured against, for small instances only: it returns an error wrapping
// ErrTooLarge beyond MaxExactVertices vertices or MaxExactBins bins, and
// ErrNoFit when free.Total() < prof.GPUs().
//
// The search assigns vertices in stage order to bins. GPUs of a node
// without a link matrix are interchangeable, so such a node is one bin of
// its free count; a node with a link matrix gives one bin per free GPU.
// Unused bins that are interchangeable (same leaf switch, free count and
// intra-node bandwidth) are tried once. A branch is cut when its partial α,
// or the static bound max_k(c_k + max_e w_e/B_fastest), reaches the best α
// so far, which starts at Heavy-Edge's.
func Exact(c *cluster.Cluster, free *Free, prof *Profile) (Placement, float64, error) {
	if err := prof.Validate(); err != nil {
		return Placement{}, 0, err
	}
	V := prof.GPUs()
	if V > MaxExactVertices {
		return Placement{}, 0, fmt.Errorf("%w: %d vertices, limit %d", ErrTooLarge, V, MaxExactVertices)
	}
	if free.Nodes() != len(c.Nodes) {
		return Placement{}, 0, fmt.Errorf("placement: free-GPU state has %d nodes, cluster has %d", free.Nodes(), len(c.Nodes))
	}
	if free.Total() < V {
		return Placement{}, 0, ErrNoFit
	}
	pl := NewPlacer(c)
	g := NewGraph(prof)
	he, err := pl.Place(free, V, prof)
	if err != nil {
		return Placement{}, 0, err
	}
	best := pl.alpha(g, he.Vertex)

	type bin struct {
		node, gpu int // gpu is -1 for a bin of interchangeable GPUs
		cap       int
		intra     float64 // bandwidth inside the bin (cap ≥ 2)
	}
	var bins []bin
	nodeClass := make([]int, free.Nodes()) // nodes of one class are interchangeable while unused
	classes := map[string]int{}
	for n := 0; n < free.Nodes(); n++ {
		f := free.On(n)
		if f == 0 {
			continue
		}
		var gpus []int
		for m := free.Mask(n); m != 0; m &= m - 1 {
			gpus = append(gpus, bits.TrailingZeros64(m))
		}
		// The free GPUs are interchangeable when every pair has the same
		// bandwidth (no link matrix, or an NVSwitch-like one).
		uniform, bw0 := true, pl.intra[n]
		if f >= 2 {
			bw0 = pl.intraBW(n, gpus[0], gpus[1])
			for i := range gpus {
				for j := i + 1; j < len(gpus); j++ {
					uniform = uniform && pl.intraBW(n, gpus[i], gpus[j]) == bw0
				}
			}
		}
		leaf := int32(-1)
		if pl.tree != nil {
			leaf = pl.tree.leaf[n]
		}
		var key string
		if uniform {
			key = fmt.Sprintf("%d/%d/%g", leaf, f, bw0)
			bins = append(bins, bin{node: n, gpu: -1, cap: f, intra: bw0})
		} else {
			key = fmt.Sprintf("%d/%d", leaf, f)
			for _, i := range gpus {
				for _, j := range gpus {
					key += fmt.Sprintf("/%g", pl.intraBW(n, i, j))
				}
				bins = append(bins, bin{node: n, gpu: i, cap: 1})
			}
		}
		cl, ok := classes[key]
		if !ok {
			cl = len(classes)
			classes[key] = cl
		}
		nodeClass[n] = cl
	}
	B := len(bins)
	if B > MaxExactBins {
		return Placement{}, 0, fmt.Errorf("%w: %d bins, limit %d", ErrTooLarge, B, MaxExactBins)
	}
	bw := make([]float64, B*B)
	best1 := make([]float64, B) // per bin: the best bandwidth to any bin, itself included when it holds two
	fastest := 0.0
	for i, a := range bins {
		for j, b := range bins {
			var x float64
			switch {
			case i == j && a.cap >= 2:
				x = a.intra
			case i == j:
				continue
			case a.node == b.node:
				x = pl.intraBW(a.node, a.gpu, b.gpu)
			default:
				x = pl.tree.path(a.node, b.node, c.BW.Inter)
			}
			bw[i*B+j] = x
			best1[i] = max(best1[i], x)
		}
		fastest = max(fastest, best1[i])
	}
	lb := 0.0
	for k, ck := range g.Compute {
		lb = max(lb, ck)
		for _, e := range g.Edges {
			if e.Stage == k && fastest > 0 {
				lb = max(lb, ck+e.Weight/fastest)
			}
		}
	}

	K := len(g.Compute)
	assign := make([]int, V)
	bestAssign := []int(nil)
	load := make([]int, B)
	nodeLoad := make([]int, free.Nodes())
	comm := make([]float64, (V+1)*K) // comm[v*K+k]: stage k's largest edge cost once v vertices are placed
	claimStamp := make([]int, len(classes))
	claimNode := make([]int, len(classes))
	stamp, steps := 0, 0
	const eps = 1e-12
	var dfs func(v int, cur float64) bool
	dfs = func(v int, cur float64) bool {
		if v == V {
			best = cur
			bestAssign = append(bestAssign[:0], assign...)
			return true
		}
		if steps++; steps > MaxExactSteps {
			return false
		}
		stamp++
		me := stamp
		// Symmetry of the job graph: the replicas of a stage with d ≤ 3
		// are interchangeable (complete ring, complete bipartite pipeline
		// edges), so their bins are taken non-decreasing; a longer ring is
		// fixed up to rotation (its first replica has the smallest bin) and
		// reflection (the second's bin ≤ the last's).
		lo := 0
		if k := g.StageOf[v]; v > g.First[k] {
			f, d := g.First[k], g.First[k+1]-g.First[k]
			if d <= 3 {
				lo = assign[v-1]
			} else {
				lo = assign[f]
				if v == f+d-1 {
					lo = max(lo, assign[f+1])
				}
			}
		}
		for b := lo; b < B; b++ {
			if load[b] >= bins[b].cap {
				continue
			}
			n := bins[b].node
			if nodeLoad[n] == 0 {
				cl := nodeClass[n]
				if claimStamp[cl] == me && claimNode[cl] != n {
					continue // an interchangeable unused node was tried already
				}
				claimStamp[cl], claimNode[cl] = me, n
			}
			src, dst := comm[v*K:(v+1)*K], comm[(v+1)*K:(v+2)*K]
			copy(dst, src)
			next := cur
			for _, ei := range g.adj[v] {
				e := &g.Edges[ei]
				u := e.U
				if u == v {
					u = e.V
				}
				if u > v {
					// Not placed yet: it costs at least w over the best
					// bandwidth out of bin b.
					if best1[b] > 0 {
						next = max(next, g.Compute[e.Stage]+e.Weight/best1[b])
					}
					continue
				}
				t := e.Weight / bw[b*B+assign[u]]
				if t > dst[e.Stage] {
					dst[e.Stage] = t
					next = max(next, g.Compute[e.Stage]+t)
				}
			}
			if max(next, lb) >= best*(1-eps) {
				continue
			}
			assign[v] = b
			load[b]++
			nodeLoad[n]++
			ok := dfs(v+1, next)
			load[b]--
			nodeLoad[n]--
			if !ok {
				return false
			}
		}
		return true
	}
	start := 0.0
	for _, ck := range g.Compute {
		start = max(start, ck)
	}
	if lb < best*(1-eps) && !dfs(0, start) {
		return Placement{}, 0, fmt.Errorf("%w: more than %d search steps", ErrTooLarge, MaxExactSteps)
	}
	if bestAssign == nil {
		return he, best, nil
	}

	// Turn bins into GPUs: whole-node bins take their lowest free indices in
	// vertex order.
	p := Placement{Vertex: make([]GPU, V)}
	taken := map[int]uint64{}
	for v, b := range bestAssign {
		n := bins[b].node
		i := bins[b].gpu
		if i < 0 {
			i = bits.TrailingZeros64(free.Mask(n) &^ taken[n])
		}
		taken[n] |= 1 << uint(i)
		p.Vertex[v] = GPU{Node: n, Index: i}
	}
	for n := 0; n < free.Nodes(); n++ {
		if m, ok := taken[n]; ok {
			p.Slots = append(p.Slots, Slot{Node: n, GPUs: m})
		}
	}
	return p, pl.alpha(g, p.Vertex), nil
}
