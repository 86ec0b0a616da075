package placement

// Edge is one edge of the job graph Ω.
type Edge struct {
	// U and V are the endpoint vertices, U < V.
	U, V int
	// Weight is the bytes the edge carries per iteration.
	Weight float64
	// Stage is the stage whose time the edge's communication adds to: the
	// stage of both endpoints for an all-reduce edge, the sending stage k for
	// a pipeline edge between stages k and k+1.
	Stage int
}

// Graph is the job graph Ω of a profile (design §1). Vertices are the stage
// replicas in stage order: stage 0's d_0 replicas are vertices 0..d_0−1,
// and so on. Edges:
//
//   - pipeline: every replica u of stage k to every replica v of stage k+1,
//     weight a_k/(d_k·d_{k+1}) (u sends its 1/d_k share of a_k, spread evenly
//     over the d_{k+1} receivers);
//   - all-reduce: a ring over the replicas of stage k in replica order (one
//     edge for d_k = 2, none for d_k = 1), weight 2(d_k−1)/d_k · m_k, the
//     bytes each replica sends to its ring neighbour in a ring all-reduce.
//
// A Graph is safe for concurrent use; callers must not modify it (Placer
// caches and shares them).
type Graph struct {
	// Vertices is the number of vertices (GPUs), Σ d_k.
	Vertices int
	// StageOf is, per vertex, its stage index.
	StageOf []int
	// First is, per stage, its first vertex; First[K] == Vertices.
	First []int
	// Compute is, per stage, c_k in seconds.
	Compute []float64
	// Edges lists the edges stage by stage: the ring of stage k, then the
	// pipeline edges from k to k+1.
	Edges []Edge
	// adj lists, per vertex, the indices of its edges.
	adj [][]int
}

// NewGraph builds the job graph of p. p must be valid (see Validate);
// edges of weight 0 are left out.
func NewGraph(p *Profile) *Graph {
	K := len(p.Stages)
	g := &Graph{First: make([]int, K+1), Compute: make([]float64, K)}
	for k, s := range p.Stages {
		g.First[k] = g.Vertices
		g.Vertices += s.Replicas
		g.Compute[k] = s.Compute
	}
	g.First[K] = g.Vertices
	g.StageOf = make([]int, g.Vertices)
	for k := range p.Stages {
		for v := g.First[k]; v < g.First[k+1]; v++ {
			g.StageOf[v] = k
		}
	}
	for k, s := range p.Stages {
		d := s.Replicas
		lo := g.First[k]
		if d >= 2 && s.Gradient > 0 {
			w := 2 * float64(d-1) / float64(d) * s.Gradient
			for j := 0; j < d; j++ {
				u, v := lo+j, lo+(j+1)%d
				if d == 2 && j == 1 {
					break
				}
				g.Edges = append(g.Edges, Edge{U: min(u, v), V: max(u, v), Weight: w, Stage: k})
			}
		}
		if k+1 < K && s.Activation > 0 {
			next := p.Stages[k+1].Replicas
			w := s.Activation / float64(d*next)
			for u := lo; u < lo+d; u++ {
				for v := g.First[k+1]; v < g.First[k+2]; v++ {
					g.Edges = append(g.Edges, Edge{U: u, V: v, Weight: w, Stage: k})
				}
			}
		}
	}
	g.adj = make([][]int, g.Vertices)
	for i, e := range g.Edges {
		g.adj[e.U] = append(g.adj[e.U], i)
		g.adj[e.V] = append(g.adj[e.V], i)
	}
	return g
}
