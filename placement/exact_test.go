package placement

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/asrpt/asrpt/cluster"
)

// bruteForce returns the smallest α over every injective map of the job's
// vertices to the free GPUs.
func bruteForce(pl *Placer, free *Free, prof *Profile) float64 {
	var gpus []GPU
	for n := 0; n < free.Nodes(); n++ {
		for m := free.Mask(n); m != 0; m &= m - 1 {
			gpus = append(gpus, GPU{Node: n, Index: bits.TrailingZeros64(m)})
		}
	}
	g := pl.Graph(prof)
	v := make([]GPU, g.Vertices)
	used := make([]bool, len(gpus))
	best := math.Inf(1)
	var rec func(i int)
	rec = func(i int) {
		if i == len(v) {
			best = min(best, pl.alpha(g, v))
			return
		}
		for j, x := range gpus {
			if !used[j] {
				used[j] = true
				v[i] = x
				rec(i + 1)
				used[j] = false
			}
		}
	}
	rec(0)
	return best
}

// TestExactMatchesBruteForce checks the branch and bound, symmetry breaking
// included, against plain enumeration on tiny instances.
func TestExactMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		c := &cluster.Cluster{BW: cluster.DefaultBandwidth()}
		tree := rng.IntN(2) == 0
		if tree {
			c.Switches = []cluster.Switch{{Name: "root", LinkSpeed: 10e9}, {Name: "a", Parent: "root"}, {Name: "b", Parent: "root"}}
		}
		for k := 0; k < 2+rng.IntN(2); k++ {
			g := 2 + rng.IntN(3)
			nd := cluster.Node{Name: string(rune('a' + k)), GPUs: g}
			if tree {
				nd.Switch = []string{"a", "b"}[rng.IntN(2)]
			}
			switch rng.IntN(3) {
			case 0:
				nd.IntraBW = cluster.DefaultNVLink
			case 1:
				nd.Links = linkMatrix(kindRandom, g, rng)
			}
			c.Nodes = append(c.Nodes, nd)
		}
		free := NewFree(c)
		if m := free.Mask(0) & rng.Uint64(); m != 0 && rng.IntN(2) == 0 {
			if err := free.Take(&Placement{Slots: []Slot{{Node: 0, GPUs: m}}}); err != nil {
				t.Fatal(err)
			}
		}
		prof := &Profile{Model: "tiny"}
		for v := 0; v < min(free.Total(), 5); {
			d := min(1+rng.IntN(4), min(free.Total(), 5)-v)
			prof.Stages = append(prof.Stages, Stage{Replicas: d, Compute: 0.1 * rng.Float64(), Activation: 1e9 * rng.Float64(), Gradient: 2e9 * rng.Float64()})
			v += d
		}
		prof.Stages[len(prof.Stages)-1].Activation = 0
		pl := NewPlacer(c)
		_, got, err := Exact(c, free, prof)
		if err != nil {
			t.Fatalf("instance %d: %v", i, err)
		}
		if want := bruteForce(pl, free, prof); math.Abs(got-want) > 1e-12*want {
			t.Fatalf("instance %d: Exact α %g, enumeration %g", i, got, want)
		}
	}
}

func TestExactLimits(t *testing.T) {
	c := pcieCluster(4, 8)
	free := NewFree(c)
	big := &Profile{Model: "big", Stages: []Stage{{Replicas: MaxExactVertices + 1}}}
	if _, _, err := Exact(c, free, big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d vertices: %v, want ErrTooLarge", MaxExactVertices+1, err)
	}
	linked := pcieCluster(8, 8)
	for i := range linked.Nodes {
		linked.Nodes[i].Links = dgx1
	}
	if _, _, err := Exact(linked, NewFree(linked), &Profile{Model: "m", Stages: []Stage{{Replicas: 2}}}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("64 single-GPU bins: %v, want ErrTooLarge", err)
	}
	small := pcieCluster(1, 2)
	if _, _, err := Exact(small, NewFree(small), &Profile{Model: "m", Stages: []Stage{{Replicas: 3}}}); !errors.Is(err, ErrNoFit) {
		t.Errorf("3 GPUs on 2: %v, want ErrNoFit", err)
	}
	if _, _, err := Exact(small, NewFree(small), &Profile{Model: "m"}); err == nil {
		t.Error("invalid profile accepted")
	}
}
