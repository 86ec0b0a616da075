package placement

import (
	"math/bits"
	"slices"
)

// Limits of the local search.
const (
	// maxImproveVertices is the largest job graph improve works on; larger
	// jobs keep Heavy-Edge's construction (their all-reduce rings span
	// several nodes anyway).
	maxImproveVertices = 256
	// maxImproveMoves bounds the moves improve makes.
	maxImproveMoves = 32
)

// improve is the local search that follows Heavy-Edge's construction
// (ours): while the placement's critical edge (the one that sets α) can be
// shortened, it moves one of its endpoints to a GPU that is free on a node
// the placement already uses, or swaps it with another vertex, taking the
// move that lowers α the most (ties: the first found, in vertex and GPU
// order). It stops when no such move lowers α, or after V+8 moves. Nodes
// outside the placement are never added, so the set of nodes and the GPU
// count per node stay what Heavy-Edge chose, or shrink.
//
// Cost per move: sorting the edges by cost (E log E) plus, for each of the
// two endpoints, one evaluation of its incident edges per candidate GPU and
// per other vertex.
func (pl *Placer) improve(g *Graph, vtx []GPU, free *Free, nodes []int, s *scratch) {
	E := len(g.Edges)
	if E == 0 || g.Vertices > maxImproveVertices {
		return
	}
	deg := 0
	for _, a := range g.adj {
		deg = max(deg, len(a))
	}
	top := 2*deg + 1
	floor := 0.0
	for _, c := range g.Compute {
		floor = max(floor, c)
	}
	s.val = slices.Grow(s.val[:0], E)[:E]
	// spare lists the free GPUs of the used nodes that the placement does
	// not take.
	s.spare = s.spare[:0]
	for _, n := range nodes {
		m := free.Mask(n)
		for _, v := range vtx {
			if v.Node == n {
				m &^= 1 << uint(v.Index)
			}
		}
		for ; m != 0; m &= m - 1 {
			s.spare = append(s.spare, GPU{Node: n, Index: bits.TrailingZeros64(m)})
		}
	}
	cost := func(e *Edge, a, b GPU) float64 {
		return g.Compute[e.Stage] + e.Weight/pl.bw(a, b)
	}
	// rest is the largest cost of the edges that touch neither x nor y; the
	// top list holds more edges than x and y touch together.
	rest := func(x, y int) float64 {
		for _, ei := range s.ord {
			e := &g.Edges[ei]
			if e.U != x && e.V != x && e.U != y && e.V != y {
				return max(floor, s.val[ei])
			}
		}
		return floor
	}
	// around is the largest cost of the edges incident to x or y once x
	// sits on gx and y (if ≥ 0) on gy.
	around := func(x int, gx GPU, y int, gy GPU) float64 {
		at := func(v int) GPU {
			switch v {
			case x:
				return gx
			case y:
				return gy
			}
			return vtx[v]
		}
		worst := 0.0
		for _, ei := range g.adj[x] {
			e := &g.Edges[ei]
			worst = max(worst, cost(e, at(e.U), at(e.V)))
		}
		if y >= 0 {
			for _, ei := range g.adj[y] {
				e := &g.Edges[ei]
				worst = max(worst, cost(e, at(e.U), at(e.V)))
			}
		}
		return worst
	}
	for iter := 0; iter < maxImproveMoves; iter++ {
		// Costs, and the top costliest edges by decreasing cost, ties by
		// index.
		s.ord = s.ord[:0]
		for i := range g.Edges {
			e := &g.Edges[i]
			v := cost(e, vtx[e.U], vtx[e.V])
			s.val[i] = v
			if len(s.ord) == top && v <= s.val[s.ord[top-1]] {
				continue
			}
			j := len(s.ord)
			for j > 0 && s.val[s.ord[j-1]] < v {
				j--
			}
			if len(s.ord) < top {
				s.ord = append(s.ord, 0)
			}
			copy(s.ord[j+1:], s.ord[j:len(s.ord)-1])
			s.ord[j] = i
		}
		crit := g.Edges[s.ord[0]]
		cur := max(floor, s.val[s.ord[0]])
		if s.val[s.ord[0]] <= floor {
			return
		}
		best, bx, by, bspare := cur, -1, -1, -1
		for _, x := range [2]int{crit.U, crit.V} {
			r := rest(x, -1)
			if r >= best {
				continue
			}
			for i, t := range s.spare {
				if a := max(r, around(x, t, -1, GPU{})); a < best {
					best, bx, by, bspare = a, x, -1, i
				}
			}
			for y := 0; y < g.Vertices; y++ {
				if y == x || vtx[y] == vtx[x] {
					continue
				}
				r := rest(x, y)
				if r >= best {
					continue
				}
				if a := max(r, around(x, vtx[y], y, vtx[x])); a < best {
					best, bx, by, bspare = a, x, y, -1
				}
			}
		}
		if bx < 0 || best >= cur*(1-1e-12) {
			return
		}
		if by >= 0 {
			vtx[bx], vtx[by] = vtx[by], vtx[bx]
		} else {
			vtx[bx], s.spare[bspare] = s.spare[bspare], vtx[bx]
		}
	}
}
