package placement

import (
	"cmp"
	"math/bits"
	"slices"
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
	if E == 0 {
		return
	}
	floor := 0.0
	for _, c := range g.Compute {
		floor = max(floor, c)
	}
	s.val = slices.Grow(s.val[:0], E)[:E]
	s.ord = grow(s.ord, E)
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
	// rest is the largest cost of the edges that touch neither x nor y.
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
	for iter := 0; iter < g.Vertices+8; iter++ {
		for i := range g.Edges {
			e := &g.Edges[i]
			s.val[i] = cost(e, vtx[e.U], vtx[e.V])
			s.ord[i] = i
		}
		slices.SortFunc(s.ord, func(a, b int) int {
			if c := cmp.Compare(s.val[b], s.val[a]); c != 0 {
				return c
			}
			return a - b
		})
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
