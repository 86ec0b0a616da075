package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/asrpt/asrpt/cluster"
)

// layout builds a cluster and its free state from a picture: one string per
// node, "leaf:xx..." where x is a busy GPU, . a free one, and the optional
// "leaf:" prefix names the node's leaf switch (all leaves then hang off one
// spine at spineBW bytes/s; 0 means Inter).
func layout(spineBW float64, nodes ...string) (*cluster.Cluster, *Free) {
	c := &cluster.Cluster{BW: cluster.DefaultBandwidth()}
	leaves := map[string]bool{}
	for i, s := range nodes {
		sw, gpus, ok := strings.Cut(s, ":")
		if !ok {
			sw, gpus = "", s
		}
		c.Nodes = append(c.Nodes, cluster.Node{Name: fmt.Sprintf("n%d", i), GPUs: len(gpus), Switch: sw, IntraBW: cluster.DefaultNVLink})
		if sw != "" && !leaves[sw] {
			leaves[sw] = true
			c.Switches = append(c.Switches, cluster.Switch{Name: sw, Parent: "spine"})
		}
	}
	if len(leaves) > 0 {
		c.Switches = append(c.Switches, cluster.Switch{Name: "spine", LinkSpeed: spineBW})
	}
	f := NewFree(c)
	for i, s := range nodes {
		_, gpus, ok := strings.Cut(s, ":")
		if !ok {
			gpus = s
		}
		var m uint64
		for b, ch := range gpus {
			if ch == 'x' {
				m |= 1 << uint(b)
			}
		}
		if m != 0 {
			if err := f.Take(&Placement{Slots: []Slot{{Node: i, GPUs: m}}}); err != nil {
				panic(err)
			}
		}
	}
	return c, f
}

// picture renders a placement's slots as node:mask pairs, e.g. "1:11000000".
func picture(p Placement, c *cluster.Cluster) string {
	var parts []string
	for _, s := range p.Slots {
		b := make([]byte, c.Nodes[s.Node].GPUs)
		for i := range b {
			b[i] = '0' + byte(s.GPUs>>uint(i)&1)
		}
		parts = append(parts, fmt.Sprintf("%d:%s", s.Node, b))
	}
	return strings.Join(parts, " ")
}

func TestPlacePlainCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []string
		gpus  int
		want  string
	}{
		// n0 [........]  n1 [xxxx....]  n2 [xxxxxx..]
		// 2 GPUs fit n2 exactly: best fit, not the emptiest node.
		{"best fit", []string{"........", "xxxx....", "xxxxxx.."}, 2, "2:00000011"},
		// n0 [xx......]  n1 [xx......]  ties on free count go to the lower index.
		{"tie by index", []string{"xx......", "xx......"}, 6, "0:00111111"},
		// n0 [........]  n1 [xxxx....]  n2 [xx......]  12 GPUs: n0 (most
		// free) takes 8, the remaining 4 go to n1 by best fit, not n2.
		{"spread best-fit remainder", []string{"........", "xxxx....", "xx......"}, 12, "0:11111111 1:00001111"},
		// Fewest nodes: 8+6 before 4.
		{"spread most free first", []string{"xxxx....", "........", "xx......"}, 14, "1:11111111 2:00111111"},
		//          spine
		//         /     \
		//     leaf0     leaf1
		//    n0   n1    n2   n3
		//   ....  ....  .... x...
		// 7 GPUs fit no node; leaf1 (7 free) holds them: stay under it
		// even though leaf0 has more free GPUs.
		{"leaf switch", []string{"leaf0:....", "leaf0:....", "leaf1:....", "leaf1:x..."}, 7, "2:1111 3:0111"},
		// 10 GPUs fit no leaf (7 and 6 free): spread over the whole
		// cluster, n0 and n2 (most free), the last 2 on n3 by best fit.
		{"across leaves", []string{"leaf0:....", "leaf0:x...", "leaf1:....", "leaf1:xx.."}, 10, "0:1111 2:1111 3:0011"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := layout(0, tc.nodes...)
			pl := NewPlacer(c)
			p, err := pl.Place(f, tc.gpus, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := picture(p, c); got != tc.want {
				t.Fatalf("placement %s, want %s", got, tc.want)
			}
			if p.Vertex != nil {
				t.Fatal("plain placement has a vertex map")
			}
		})
	}
}

func TestPlaceHeavyEdgeCases(t *testing.T) {
	two := &Profile{Model: "two", Stages: []Stage{
		{Replicas: 4, Compute: 0.05, Activation: 1e6, Gradient: 1e9},
		{Replicas: 4, Compute: 0.05, Gradient: 1e9},
	}}
	for _, tc := range []struct {
		name  string
		nodes []string
		prof  *Profile
		want  string
		// stageNodes, when set, is the node of each stage's replicas.
		stageNodes []int
	}{
		// n0 [xxxx....]  n1 [........]  n2 [xxxx....]  8 GPUs, at most 8
		// on one node: n1 alone.
		{"one node", []string{"xxxx....", "........", "xxxx...."}, two, "1:11111111", []int{1, 1}},
		// n0 [....]  n1 [....]  n2 [xx..]: each stage's all-reduce ring
		// stays inside one node; only light pipeline edges cross.
		{"stage per node", []string{"....", "....", "xx.."}, two, "0:1111 1:1111", []int{0, 1}},
		// n0 [xx......]  n1 [xxxx....]  n2 [xxxxx...] (6, 4, 3 free): the
		// 4-replica stages take n1 and, by best fit, n0's 6 free GPUs.
		{"best fit groups", []string{"xx......", "xxxx....", "xxxxx..."}, two, "0:00111100 1:00001111", nil},
		//          spine (5 GB/s)
		//         /      \
		//     leaf0      leaf1
		//   n0    n1    n2    n3
		//  ....  xx..  ....  ....
		// leaf1 holds the job; leaf0 would cost the slow spine.
		{"leaf switch", []string{"leaf0:....", "leaf0:xx..", "leaf1:....", "leaf1:...."}, two, "2:1111 3:1111", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spine := 0.0
			if strings.Contains(tc.name, "leaf") {
				spine = 5e9
			}
			c, f := layout(spine, tc.nodes...)
			pl := NewPlacer(c)
			p, err := pl.Place(f, tc.prof.GPUs(), tc.prof)
			if err != nil {
				t.Fatal(err)
			}
			if got := picture(p, c); got != tc.want {
				t.Fatalf("placement %s, want %s", got, tc.want)
			}
			g := pl.Graph(tc.prof)
			for k, n := range tc.stageNodes {
				for v := g.First[k]; v < g.First[k+1]; v++ {
					if p.Vertex[v].Node != n {
						t.Fatalf("stage %d replica %d on node %d, want %d", k, v, p.Vertex[v].Node, n)
					}
				}
			}
		})
	}
}

func TestPlaceNVLinkAware(t *testing.T) {
	// One node with NVLink bridges between GPU pairs 0–1 and 2–3:
	//
	//	g0 ══ g1   g2 ══ g3
	//
	// With g0 busy, a 2-GPU job must take the bridged pair g2, g3.
	c := pcieCluster(2, 4)
	bridges := [][]int{{-1, 4, 0, 0}, {4, -1, 0, 0}, {0, 0, -1, 4}, {0, 0, 4, -1}}
	c.Nodes[0].Links, c.Nodes[1].Links = bridges, bridges
	f := NewFree(c)
	if err := f.Take(&Placement{Slots: []Slot{{Node: 0, GPUs: 0b0001}}, Vertex: nil}); err != nil {
		t.Fatal(err)
	}
	pl := NewPlacer(c)
	prof := &Profile{Model: "pair", Stages: []Stage{{Replicas: 2, Compute: 0.01, Gradient: 1e9}}}
	p, err := pl.Place(f, 2, prof)
	if err != nil {
		t.Fatal(err)
	}
	if got := picture(p, c); got != "0:0011" {
		t.Fatalf("placement %s, want 0:0011 (the bridged pair)", got)
	}
	// Node 0 now has only g1, g3 free after g2 is taken: no bridged pair
	// left there, so node 1 (best fit would pick node 0) is better.
	if err := f.Take(&Placement{Slots: []Slot{{Node: 0, GPUs: 0b0100}}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Take(&Placement{Slots: []Slot{{Node: 1, GPUs: 0b0001}}}); err != nil {
		t.Fatal(err)
	}
	p, err = pl.Place(f, 2, prof)
	if err != nil {
		t.Fatal(err)
	}
	if got := picture(p, c); got != "1:0011" {
		t.Fatalf("placement %s, want 1:0011", got)
	}
}

func TestPlaceErrors(t *testing.T) {
	c, f := layout(0, "xx..", "....")
	pl := NewPlacer(c)
	prof := &Profile{Model: "m", Stages: []Stage{{Replicas: 2, Gradient: 1}}}
	for _, tc := range []struct {
		name  string
		free  *Free
		gpus  int
		prof  *Profile
		noFit bool
		want  string
	}{
		{"too many", f, 7, nil, true, ""},
		{"too many profiled", f, 7, &Profile{Model: "m", Stages: []Stage{{Replicas: 7}}}, true, ""},
		{"zero", f, 0, nil, false, "want at least 1"},
		{"mismatch", f, 3, prof, false, "has 2 GPUs, job asks for 3"},
		{"invalid", f, 1, &Profile{Model: "bad", Stages: []Stage{{Replicas: 1, Compute: -2}}}, false, "Compute = -2"},
		{"other cluster", NewFree(pcieCluster(3, 4)), 1, nil, false, "has 3 nodes, cluster has 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pl.Place(tc.free, tc.gpus, tc.prof)
			if got := errors.Is(err, ErrNoFit); got != tc.noFit {
				t.Fatalf("errors.Is(%v, ErrNoFit) = %v, want %v", err, got, tc.noFit)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// checkPlacement asserts the invariants every placement must hold.
func checkPlacement(t *testing.T, pl *Placer, f *Free, gpus int, prof *Profile, p Placement) {
	t.Helper()
	if p.GPUs() != gpus {
		t.Fatalf("placement uses %d GPUs, want %d", p.GPUs(), gpus)
	}
	for i, s := range p.Slots {
		if i > 0 && p.Slots[i-1].Node >= s.Node {
			t.Fatalf("slots not in increasing node order: %+v", p.Slots)
		}
		if s.GPUs == 0 || f.Mask(s.Node)&s.GPUs != s.GPUs {
			t.Fatalf("slot %+v uses GPUs that are not free (free %b)", s, f.Mask(s.Node))
		}
	}
	if prof == nil {
		if p.Vertex != nil {
			t.Fatal("plain placement with a vertex map")
		}
		return
	}
	if len(p.Vertex) != pl.Graph(prof).Vertices {
		t.Fatalf("vertex map has %d entries, graph %d vertices", len(p.Vertex), pl.Graph(prof).Vertices)
	}
	seen := map[GPU]bool{}
	for _, v := range p.Vertex {
		if seen[v] {
			t.Fatalf("GPU %v used twice", v)
		}
		seen[v] = true
		ok := false
		for _, s := range p.Slots {
			ok = ok || s.Node == v.Node && s.GPUs>>uint(v.Index)&1 == 1
		}
		if !ok {
			t.Fatalf("vertex GPU %v not in the slots %+v", v, p.Slots)
		}
	}
}

func TestPlaceProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 600; i++ {
		in := genInstance(rng, i%2 == 1)
		pl := NewPlacer(in.c)
		before := in.free.Clone()
		for _, prof := range []*Profile{nil, in.prof} {
			gpus := in.prof.GPUs()
			if prof == nil {
				gpus = 1 + rng.IntN(in.free.Total())
			}
			p, err := pl.Place(in.free, gpus, prof)
			if err != nil {
				t.Fatalf("instance %d: %v", i, err)
			}
			checkPlacement(t, pl, in.free, gpus, prof, p)
			again, _ := NewPlacer(in.c).Place(in.free.Clone(), gpus, prof)
			if !reflect.DeepEqual(p, again) {
				t.Fatalf("instance %d: same input, different placements:\n%+v\n%+v", i, p, again)
			}
			if !reflect.DeepEqual(in.free, before) {
				t.Fatalf("instance %d: Place modified free", i)
			}
			if err := in.free.Clone().Take(&p); err != nil {
				t.Fatalf("instance %d: Take of the placement: %v", i, err)
			}
		}
		if _, err := pl.Place(in.free, in.free.Total()+1, nil); !errors.Is(err, ErrNoFit) {
			t.Fatalf("instance %d: one GPU too many: %v", i, err)
		}
	}
}

// TestPlacerConcurrent runs Place, Alpha and Bounds from several goroutines
// on one Placer (run with -race).
func TestPlacerConcurrent(t *testing.T) {
	c, f := busyCluster(64, 8, 0.4, 1)
	pl := NewPlacer(c)
	var wg sync.WaitGroup
	results := make([][]Placement, 4)
	for w := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range Models() {
				for _, g := range []int{2, 8, 16, 64} {
					prof, err := Lookup(m, g)
					if err != nil {
						continue
					}
					p, err := pl.Place(f, g, prof)
					if err != nil {
						t.Error(err)
						return
					}
					pl.Alpha(prof, &p)
					pl.CommHeavy(prof, 1.5)
					results[w] = append(results[w], p)
				}
			}
		}()
	}
	wg.Wait()
	for w := 1; w < len(results); w++ {
		if !reflect.DeepEqual(results[0], results[w]) {
			t.Fatalf("goroutine %d placed differently", w)
		}
	}
}
