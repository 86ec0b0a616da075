package predictor

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ensembleHash is an FNV-1a hash of every node and leaf expectation of e,
// bit for bit.
func ensembleHash(e *Ensemble) string {
	h := fnv.New64a()
	var b [8]byte
	put := func(u uint64) {
		binary.LittleEndian.PutUint64(b[:], u)
		h.Write(b[:])
	}
	for t, tr := range e.Trees {
		for _, n := range tr {
			put(math.Float64bits(n.Thr))
			put(uint64(uint32(n.Right))<<32 | uint64(uint32(n.Feat)))
		}
		for _, m := range e.Means[t] {
			put(math.Float64bits(m))
		}
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestFitGolden pins the forests Fit and FitBoth grow, bit for bit: a
// change of the training code that changes any threshold, leaf value or
// leaf expectation changes every prediction after it, and must be a
// decision, not an accident of an optimisation.
func TestFitGolden(t *testing.T) {
	x, y := synth(6000, 20, 5)
	w := make([]float64, len(y))
	z := make([]float64, len(y))
	we := make([]float64, len(y))
	for i := range w {
		w[i] = float64(i%4) * 0.5 // a quarter of the rows at weight 0
		z[i] = math.Exp(y[i] / 4)
		we[i] = float64(i % 3)
	}
	for _, tc := range []struct {
		name string
		fit  func() (*Ensemble, error)
		want string
	}{
		{"default", func() (*Ensemble, error) { return Fit(x, y, nil, ForestParams{Trees: 8, Seed: 3}) }, "f23806da83127ce5"},
		{"weighted-mean-leaf", func() (*Ensemble, error) {
			return Fit(x, y, w, ForestParams{Trees: 8, Seed: 4, Leaf: LeafMean, MinSamplesLeaf: 20, MaxDepth: 9})
		}, "ab8ec980da276718"},
		{"both-maxsamples-bins", func() (*Ensemble, error) {
			return FitBoth(x, y, w, Expectation{Z: z, W: we}, ForestParams{Trees: 8, Seed: 5, MaxSamples: 2000, Bins: 16, MaxFeatures: 3})
		}, "172df7fd973680dd"},
		{"trainconfig", func() (*Ensemble, error) { p := DefaultTrainConfig().Forest; p.Trees = 8; return Fit(x, y, nil, p) }, "e0eb55008e2ad6ef"},
	} {
		e, err := tc.fit()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ensembleHash(e); got != tc.want {
			t.Errorf("%s: forest hash %s, want %s (%d nodes)", tc.name, got, tc.want, e.Nodes())
		}
	}
}

// walk is the plain walk of a tree: the leaf node x reaches.
func (t tree) walk(x []float64) *node {
	i := 0
	for {
		n := &t[i]
		if n.Feat < 0 {
			return n
		}
		if v := x[n.Feat]; v <= n.Thr || v != v {
			i++
		} else {
			i = int(n.Right)
		}
	}
}

// TestPredictMatchesPlainWalk checks Predict and PredictBoth, which walk
// several trees at once, against walking the trees one by one, on rows
// with missing, infinite and threshold-equal values, for forests of fewer
// trees than a walk's lanes, and of a number not a multiple of them.
func TestPredictMatchesPlainWalk(t *testing.T) {
	x, y := synth(3000, 9, 7)
	xt, _ := synth(500, 9, 8)
	for r := 0; r < xt.Rows; r++ {
		row := xt.Row(r)
		switch r % 5 {
		case 1:
			row[r%9] = math.NaN()
		case 2:
			row[r%9] = math.Inf(1 - 2*(r%2))
		case 3:
			row[(r+1)%9] = x.Data[r*9+(r+1)%9] // a training value: maybe a threshold
		}
	}
	for _, trees := range []int{1, 3, 8, 13} {
		e, err := Fit(x, y, nil, ForestParams{Trees: trees, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []float64{0, 0.5, 0.8} {
			e.Quantile = q
			for r := 0; r < xt.Rows; r++ {
				row := xt.Row(r)
				vals := make([]float64, trees)
				var s float64
				for k, tr := range e.Trees {
					n := tr.walk(row)
					vals[k] = n.Thr
					s += e.Means[k][n.Right]
				}
				want, wantMean := combine(vals, q), s/float64(trees)
				v, mean := e.PredictBoth(row)
				if p := e.Predict(row); math.Float64bits(p) != math.Float64bits(want) || math.Float64bits(v) != math.Float64bits(want) ||
					math.Float64bits(mean) != math.Float64bits(wantMean) {
					t.Fatalf("%d trees, q %g, row %d: Predict %g, PredictBoth %g, %g; plain walk %g, %g", trees, q, r, p, v, mean, want, wantMean)
				}
			}
		}
	}
}

// TestBucketSearch checks binMatrix's bucketed search against a binary
// search over all edges, for evenly spread, clustered, tiny and huge
// edges and values between, on and beyond them.
func TestBucketSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	gens := map[string]func() float64{
		"uniform":   func() float64 { return rng.Float64() * 100 },
		"lognormal": func() float64 { return math.Exp(3 * rng.NormFloat64()) },
		"clustered": func() float64 { return float64(rng.IntN(3)) + 1e-9*rng.Float64() },
		"tiny":      func() float64 { return 5e-324 * float64(rng.IntN(1000)) },
		"huge":      func() float64 { return (rng.Float64() - 0.5) * math.MaxFloat64 },
		"integers":  func() float64 { return float64(rng.IntN(40) - 20) },
	}
	for name, gen := range gens {
		for _, n := range []int{0, 1, 7, 8, 9, 50, 254} {
			var edges []float64
			for range 4 * n {
				edges = append(edges, gen())
			}
			slices.Sort(edges)
			edges = slices.Compact(edges)
			edges = edges[:min(n, len(edges))]
			bs := newBucketSearch(edges)
			probe := slices.Clone(edges)
			for range 2000 {
				probe = append(probe, gen())
			}
			for _, e := range edges {
				probe = append(probe, math.Nextafter(e, math.Inf(-1)), math.Nextafter(e, math.Inf(1)))
			}
			probe = append(probe, math.Inf(-1), math.Inf(1), -math.MaxFloat64, math.MaxFloat64, 0, math.Copysign(0, -1))
			for _, v := range probe {
				if got, want := bs.lowerBound(v), lowerBound(edges, v); got != want {
					t.Fatalf("%s, %d edges: place of %g is %d, want %d", name, len(edges), v, got, want)
				}
			}
		}
	}
}
