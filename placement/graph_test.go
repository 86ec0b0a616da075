package placement

import (
	"math"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/cluster"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *Profile
		want string // substring of the error; empty for a valid profile
	}{
		{"valid", &Profile{Model: "m", Stages: []Stage{{Replicas: 2, Compute: 1, Activation: 5}, {Replicas: 1}}}, ""},
		{"nil", nil, "nil profile"},
		{"no stages", &Profile{Model: "m"}, "no stages"},
		{"zero replicas", &Profile{Model: "m", Stages: []Stage{{Replicas: 0}}}, "stage 0: Replicas = 0"},
		{"negative compute", &Profile{Model: "m", Stages: []Stage{{Replicas: 1, Compute: -1}}}, "Compute = -1"},
		{"NaN gradient", &Profile{Model: "m", Stages: []Stage{{Replicas: 1, Gradient: math.NaN()}}}, "Gradient = NaN"},
		{"Inf activation", &Profile{Model: "m", Stages: []Stage{{Replicas: 1, Activation: math.Inf(1)}, {Replicas: 1}}}, "stage 0: Activation = +Inf"},
		{"last activation", &Profile{Model: "m", Stages: []Stage{{Replicas: 1}, {Replicas: 1, Activation: 3}}}, "stage 1: Activation = 3 on the last stage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestNewGraph(t *testing.T) {
	// Stage 0: 3 replicas (ring of 3 edges), stage 1: 2 replicas (one ring
	// edge), stage 2: 1 replica (no ring). Pipeline: 3·2 + 2·1 edges.
	p := &Profile{Model: "m", Stages: []Stage{
		{Replicas: 3, Compute: 1, Activation: 600, Gradient: 90},
		{Replicas: 2, Compute: 2, Activation: 100, Gradient: 40},
		{Replicas: 1, Compute: 3, Gradient: 1000},
	}}
	g := NewGraph(p)
	if g.Vertices != 6 || len(g.Edges) != 3+6+1+2 {
		t.Fatalf("graph: %d vertices, %d edges; want 6 and 12", g.Vertices, len(g.Edges))
	}
	want := map[[2]int]Edge{
		{0, 1}: {0, 1, 2.0 / 3 * 2 * 90, 0}, {1, 2}: {1, 2, 120, 0}, {0, 2}: {0, 2, 120, 0},
		{0, 3}: {0, 3, 100, 0}, {2, 4}: {2, 4, 100, 0},
		{3, 4}: {3, 4, 40, 1},
		{3, 5}: {3, 5, 50, 1}, {4, 5}: {4, 5, 50, 1},
	}
	for _, e := range g.Edges {
		if w, ok := want[[2]int{e.U, e.V}]; ok && (math.Abs(w.Weight-e.Weight) > 1e-9 || w.Stage != e.Stage) {
			t.Errorf("edge %d–%d = %+v, want %+v", e.U, e.V, e, w)
		}
	}
	if g.StageOf[5] != 2 || g.First[1] != 3 || g.First[3] != 6 {
		t.Errorf("StageOf/First wrong: %v %v", g.StageOf, g.First)
	}
	pl := NewPlacer(pcieCluster(2, 4))
	e := pl.entry(p)
	cut := func(i int) float64 { return g.Compute[g.Edges[i].Stage] + g.Edges[i].Weight/cluster.DefaultInter }
	for i := 1; i < len(e.order); i++ {
		if a, b := cut(e.order[i-1]), cut(e.order[i]); a < b || a == b && e.order[i-1] > e.order[i] {
			t.Fatalf("edge order not by decreasing cut cost at %d", i)
		}
	}
}

func TestTreeBandwidth(t *testing.T) {
	// Two pods under a core switch; pod0 has two leaves.
	//
	//	              core (10 GB/s)
	//	             /              \
	//	      pod0 (40 GB/s)     leaf2 (0 → Inter)
	//	       /        \           |
	//	   leaf0       leaf1        n3
	//	   n0 n1        n2
	//	n4 hangs off no switch.
	c := &cluster.Cluster{BW: cluster.DefaultBandwidth()}
	c.Switches = []cluster.Switch{
		{Name: "core", LinkSpeed: 10e9},
		{Name: "pod0", Parent: "core", LinkSpeed: 40e9},
		{Name: "leaf0", Parent: "pod0", LinkSpeed: 50e9},
		{Name: "leaf1", Parent: "pod0", LinkSpeed: 50e9},
		{Name: "leaf2", Parent: "core"},
	}
	for i, sw := range []string{"leaf0", "leaf0", "leaf1", "leaf2", ""} {
		c.Nodes = append(c.Nodes, cluster.Node{Name: string(rune('a' + i)), GPUs: 4, Switch: sw})
	}
	tr := newTree(c)
	for _, tc := range []struct {
		a, b int
		want float64
	}{
		{0, 1, 50e9}, // same leaf
		{0, 2, 40e9}, // leaf0 → pod0 → leaf1
		{0, 3, 10e9}, // through the core
		{2, 3, 10e9},
		{0, 4, cluster.DefaultInter}, // no switch
	} {
		if got := tr.path(tc.a, tc.b, c.BW.Inter); got != tc.want {
			t.Errorf("path(%d, %d) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
	if tr.level[0] != 2 || tr.level[1] != 1 || tr.level[2] != 0 {
		t.Errorf("levels = %v", tr.level)
	}
	if newTree(pcieCluster(3, 8)) != nil {
		t.Error("flat cluster has a tree")
	}
}

func TestTreeCutsCycles(t *testing.T) {
	c := &cluster.Cluster{BW: cluster.DefaultBandwidth(),
		Switches: []cluster.Switch{{Name: "a", Parent: "b"}, {Name: "b", Parent: "a"}, {Name: "c", Parent: "nowhere"}},
		Nodes:    []cluster.Node{{Name: "n0", GPUs: 2, Switch: "a"}, {Name: "n1", GPUs: 2, Switch: "c"}},
	}
	tr := newTree(c)
	roots := 0
	for _, p := range tr.parent {
		if p < 0 {
			roots++
		}
	}
	if roots != 2 {
		t.Fatalf("parents %v: want the cycle cut once and the unknown parent dropped", tr.parent)
	}
	if got := tr.path(0, 1, 7); got != 7 {
		t.Fatalf("path across two trees = %g, want Inter", got)
	}
}

func TestAlphaByHand(t *testing.T) {
	// Two nodes of 2 PCIe GPUs (24 GB/s), 25 GB/s between them.
	//
	//	n0 [g0 g1]   n1 [g0 g1]
	//
	// Stage 0 (2 replicas, c = 1 s, ring 2·½·48e9 = 48e9 bytes), stage 1
	// (2 replicas, c = 0.5 s, no gradient). Pipeline edges a/(2·2) = 25e9.
	c := pcieCluster(2, 2)
	pl := NewPlacer(c)
	p := &Profile{Model: "hand", Stages: []Stage{{Replicas: 2, Compute: 1, Activation: 100e9, Gradient: 48e9}, {Replicas: 2, Compute: 0.5}}}
	for _, tc := range []struct {
		name string
		v    []GPU
		want float64
	}{
		// Stage 0 together on n0: ring 48e9/24e9 = 2 s; pipeline edges
		// cross: 25e9/25e9 = 1 s. α = 1 + 2 = 3 s.
		{"stage per node", []GPU{{0, 0}, {0, 1}, {1, 0}, {1, 1}}, 3},
		// Stage 0 split: ring crosses, 48e9/25e9 = 1.92 s; pipeline edges
		// half cross (1 s), half inside (25e9/24e9 s). α = 1 + 1.92.
		{"stage split", []GPU{{0, 0}, {1, 0}, {0, 1}, {1, 1}}, 1 + 1.92},
	} {
		got := pl.Alpha(p, &Placement{Vertex: tc.v})
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: α = %g, want %g", tc.name, got, tc.want)
		}
	}
	amin, amax := pl.Bounds(p)
	if math.Abs(amax-(1+48e9/25e9)) > 1e-9 {
		t.Errorf("α_max = %g, want %g", amax, 1+48e9/25e9)
	}
	if amin > 1+1.92+1e-9 || amin < 1 {
		t.Errorf("α_min = %g, want the better of the two placements (≤ 2.92)", amin)
	}
	if pl.Alpha(nil, &Placement{}) != 0 {
		t.Error("Alpha(nil) != 0")
	}
	if a, b := pl.Bounds(nil); a != 0 || b != 0 || pl.CommHeavy(nil, 0) {
		t.Error("nil profile must have zero bounds and never be communication-heavy")
	}
	defer func() {
		if recover() == nil {
			t.Error("Alpha with a short vertex map did not panic")
		}
	}()
	pl.Alpha(p, &Placement{Vertex: []GPU{{0, 0}}})
}

func TestIntraBandwidth(t *testing.T) {
	c := pcieCluster(3, 4)
	c.Nodes[0].Links = [][]int{{-1, 2, 1, 0}, {2, -1, 0, 0}, {1, 0, -1, 0}, {0, 0, 0, -1}}
	c.Nodes[1].Links = [][]int{{-1, 12, 12, 12}, {12, -1, 12, 12}, {12, 12, -1, 12}, {12, 12, 12, -1}}
	c.Nodes[2].IntraBW = 50e9
	pl := NewPlacer(c)
	nv := cluster.DefaultNVLink
	for _, tc := range []struct {
		a, b GPU
		want float64
	}{
		{GPU{0, 0}, GPU{0, 1}, nv},     // 2 of at most 2 links
		{GPU{0, 0}, GPU{0, 2}, nv / 2}, // 1 of 2
		{GPU{0, 0}, GPU{0, 3}, cluster.DefaultPCIe},
		{GPU{1, 2}, GPU{1, 3}, nv}, // NVSwitch-like: uniform
		{GPU{2, 0}, GPU{2, 1}, 50e9},
		{GPU{0, 0}, GPU{2, 1}, cluster.DefaultInter},
	} {
		if got := pl.bw(tc.a, tc.b); got != tc.want {
			t.Errorf("bw(%v, %v) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
	if !math.IsInf(pl.bw(GPU{0, 1}, GPU{0, 1}), 1) {
		t.Error("same GPU must have infinite bandwidth")
	}
}

// pcieCluster is cluster.Uniform with PCIe-only nodes (no NVSwitch): the
// hand-computed cases in these tests assume two GPUs of a node talk at
// Bandwidth.Intra.
func pcieCluster(n, g int) *cluster.Cluster {
	c := cluster.Uniform(n, g)
	for i := range c.Nodes {
		c.Nodes[i].IntraBW = 0
	}
	return c
}
