package predictor

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
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
