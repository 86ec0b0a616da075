package predictor

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// ForestParams are the settings of a random-forest regression.
type ForestParams struct {
	// Trees is the number of trees (default 100).
	Trees int
	// MaxDepth is the deepest level a node may have; the root is depth 0
	// (default 16).
	MaxDepth int
	// MinSamplesLeaf is the least number of (bootstrap) samples in a leaf
	// (default 5).
	MinSamplesLeaf int
	// MaxFeatures is the number of features tried at each split (default:
	// half of them, at least 1).
	MaxFeatures int
	// MaxSamples caps the bootstrap sample of each tree: a tree draws
	// min(MaxSamples, rows) rows with replacement (default 0: as many as
	// there are rows). Training time grows with it, not with the rows.
	MaxSamples int
	// Bins is the number of quantile bins per feature, 4..255 (default 255;
	// one more bin holds missing values).
	Bins int
	// Leaf is the value a leaf holds: LeafMedian (default) or LeafMean of
	// the weighted targets that reach it. Whatever it is, a leaf also
	// holds its expected-value output (see Ensemble.Means).
	Leaf LeafKind
	// Quantile is how the trees' leaf values are combined: 0 averages
	// them, a value in (0, 1) takes that quantile over trees (default 0.5,
	// the median; 0.8 gives a cautious estimate). The expected-value
	// output is always the mean over trees.
	Quantile float64
	// Seed seeds bootstrap samples and feature choices. Tree t uses its
	// own stream derived from (Seed, t), so the forest does not depend on
	// how trees are scheduled over goroutines.
	Seed uint64
	// Workers is the number of goroutines that train trees (default
	// GOMAXPROCS).
	Workers int
}

// LeafKind selects a leaf's value.
type LeafKind uint8

const (
	// LeafMedian: the weighted median of the targets in the leaf.
	LeafMedian LeafKind = iota
	// LeafMean: the weighted mean of the targets in the leaf.
	LeafMean
)

// String returns "median" or "mean".
func (k LeafKind) String() string {
	if k == LeafMean {
		return "mean"
	}
	return "median"
}

// DefaultForestParams returns the defaults described in ForestParams.
func DefaultForestParams() ForestParams {
	return ForestParams{Trees: 100, MaxDepth: 16, MinSamplesLeaf: 5, Bins: 255, Quantile: 0.5, Seed: 1}
}

// withDefaults fills zero fields with defaults for nf features.
func (p ForestParams) withDefaults(nf int) (ForestParams, error) {
	d := DefaultForestParams()
	if p.Trees == 0 {
		p.Trees = d.Trees
	}
	if p.MaxDepth == 0 {
		p.MaxDepth = d.MaxDepth
	}
	if p.MinSamplesLeaf == 0 {
		p.MinSamplesLeaf = d.MinSamplesLeaf
	}
	if p.MaxFeatures == 0 {
		p.MaxFeatures = max(1, (nf+1)/2)
	}
	if p.MaxFeatures > nf {
		p.MaxFeatures = nf
	}
	if p.Bins == 0 {
		p.Bins = d.Bins
	}
	if p.Workers <= 0 {
		p.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case p.Trees < 1 || p.Trees > 10000:
		return p, fmt.Errorf("trees %d out of range 1..10000", p.Trees)
	case p.MaxDepth < 1 || p.MaxDepth > 64:
		return p, fmt.Errorf("max depth %d out of range 1..64", p.MaxDepth)
	case p.MinSamplesLeaf < 1:
		return p, fmt.Errorf("min samples per leaf %d < 1", p.MinSamplesLeaf)
	case p.MaxSamples < 0:
		return p, fmt.Errorf("max samples %d < 0", p.MaxSamples)
	case p.MaxFeatures < 1:
		return p, fmt.Errorf("max features %d < 1", p.MaxFeatures)
	case p.Bins < 4 || p.Bins > 255:
		return p, fmt.Errorf("bins %d out of range 4..255", p.Bins)
	case !(p.Quantile >= 0 && p.Quantile < 1):
		return p, fmt.Errorf("quantile %g out of range [0, 1)", p.Quantile)
	case p.Leaf > LeafMean:
		return p, fmt.Errorf("unknown leaf kind %d", p.Leaf)
	}
	return p, nil
}

// node is one tree node, 16 bytes. A leaf has Feat < 0, its value in Thr
// and in Right its index among the tree's leaves in preorder (where its
// expected-value output is kept, Ensemble.Means). An inner node sends x to
// its left child (the next node) when x[Feat] ≤ Thr or x[Feat] is NaN,
// else to node Right.
type node struct {
	Thr   float64
	Right int32
	Feat  int32
}

// tree is a tree in preorder: node 0 is the root.
type tree []node

// Ensemble is a trained random forest over NumFeatures features with two
// outputs. Predict's is in the units of the training target y (log
// seconds here): the trees' leaf values (medians or means of y) combined
// by Quantile. The expected-value output (PredictBoth) estimates E[z], z
// the expectation target (Expectation; by default exp(y)): the mean over
// trees of the leaves' weighted means of z. Averaging expectations keeps
// them unbiased, which a median of medians is not. Safe for concurrent
// prediction.
type Ensemble struct {
	NumFeatures int
	Quantile    float64
	Trees       []tree
	// Means[t][k] is the expected-value output of leaf k (in preorder) of
	// tree t: the weighted mean of z over the bootstrap samples that
	// reached it (see Expectation).
	Means [][]float64

	flatOnce sync.Once
	flat     []flatTree // Trees laid out for PredictBatch, built on first use
	ranks    rankTable  // the thresholds flat's ranks refer to

	rowOnce sync.Once
	row     []rowTree // Trees laid out for Predict, built on first use
}

// Matrix is a dense row-major matrix of feature values (NaN = missing).
type Matrix struct {
	Rows, Cols int
	Data       []float64
}

// Row returns row i.
func (m *Matrix) Row(i int) []float64 { return m.Data[i*m.Cols : (i+1)*m.Cols] }

// binned is the training matrix as per-column bin codes: code 0 is
// missing, code b ≥ 1 holds the values in (edges[b-2], edges[b-1]].
type binned struct {
	rows, ncols int
	data        []uint8 // row-major: data[i*ncols+c] is row i's bin of column c
	edges       [][]float64
}

// binData keeps binned.data between trainings (FitBoth gives it back
// when the trees are grown): the online forest retrains often.
var binData sync.Pool

// binSample is the most values per column from which binMatrix takes bin
// edges; a larger column is sampled at an even stride (deterministic).
const binSample = 1 << 15

// binMatrix quantile-bins every column of x into at most bins-1 value bins.
// The edges are the column's distinct values when it has at most bins-1 of
// them, else quantiles of its values (of an even-stride sample of
// binSample values when the column holds more).
func binMatrix(x *Matrix, bins, workers int) *binned {
	var data []uint8
	if d, ok := binData.Get().(*[]uint8); ok {
		data = *d
	}
	data = slices.Grow(data[:0], x.Rows*x.Cols)[:x.Rows*x.Cols]
	clear(data)
	b := &binned{rows: x.Rows, ncols: x.Cols, data: data, edges: make([][]float64, x.Cols)}
	stride := max(1, (x.Rows+binSample-1)/binSample)
	parallel(x.Cols, workers, func(c int) {
		vals := make([]float64, 0, x.Rows/stride+1)
		for i := 0; i < x.Rows; i += stride {
			if v := x.Data[i*x.Cols+c]; v == v {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		nb := bins - 1
		distinct := 0
		for i, v := range vals {
			if i == 0 || v != vals[i-1] {
				distinct++
				if distinct > nb {
					break
				}
			}
		}
		var edges []float64
		if distinct <= nb {
			if len(vals) > 0 {
				u := slices.Compact(slices.Clone(vals))
				edges = u[:len(u)-1]
			}
		} else {
			// Quantiles of the distinct values would ignore frequency;
			// take quantiles of the data instead.
			for k := 1; k < nb; k++ {
				e := vals[k*len(vals)/nb]
				if len(edges) == 0 || e > edges[len(edges)-1] {
					edges = append(edges, e)
				}
			}
			// The largest value needs no edge.
			if len(edges) > 0 && edges[len(edges)-1] == vals[len(vals)-1] {
				edges = edges[:len(edges)-1]
			}
		}
		edges = slices.Clip(edges)
		bk := newBucketSearch(edges)
		for i := 0; i < x.Rows; i++ {
			v := x.Data[i*x.Cols+c]
			if v != v {
				continue
			}
			b.data[i*x.Cols+c] = uint8(1 + bk.lowerBound(v))
		}
		b.edges[c] = edges
	})
	return b
}

// bucketSearch finds a value's place among sorted edges faster than a
// binary search over all of them: [min, max] of the edges is cut into
// equal buckets, and start[k] counts the edges whose bucket is below k.
// The bucket of a value is monotone in it (a subtraction and a product
// by a positive number round monotonically), so an edge of a lower
// bucket is below the value and one of a higher bucket above it: the
// value's place lies in start[k]..start[k+1], where a binary search over
// a few edges finds it.
type bucketSearch struct {
	edges    []float64
	min, inv float64 // buckets per unit of value
	start    []int32 // len buckets+1
}

// searchBuckets is the number of buckets per edge of a bucketSearch.
const searchBuckets = 4

func newBucketSearch(edges []float64) bucketSearch {
	bs := bucketSearch{edges: edges}
	if len(edges) < 8 || !(edges[len(edges)-1] > edges[0]) || math.IsInf(edges[0], 0) || math.IsInf(edges[len(edges)-1], 0) {
		return bs // a plain binary search
	}
	nb := searchBuckets * len(edges)
	bs.min = edges[0]
	bs.inv = float64(nb) / (edges[len(edges)-1] - edges[0])
	if math.IsInf(bs.inv, 0) || math.IsNaN(bs.inv) {
		return bs
	}
	bs.start = make([]int32, nb+1)
	for _, e := range edges {
		bs.start[bs.bucket(e)+1]++
	}
	for k := 1; k <= nb; k++ {
		bs.start[k] += bs.start[k-1]
	}
	return bs
}

// bucket returns v's bucket, 0..len(start)-2; v is not NaN.
func (bs *bucketSearch) bucket(v float64) int {
	f := (v - bs.min) * bs.inv
	switch last := len(bs.start) - 2; {
	case !(f > 0):
		return 0
	case f >= float64(last):
		return last
	default:
		return int(f)
	}
}

// lowerBound returns lowerBound(edges, v) for v not NaN.
func (bs *bucketSearch) lowerBound(v float64) int {
	if bs.start == nil {
		return lowerBound(bs.edges, v)
	}
	k := bs.bucket(v)
	lo, hi := int(bs.start[k]), int(bs.start[k+1])
	return lo + lowerBound(bs.edges[lo:hi], v)
}

// parallel runs f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Expectation is what the leaves' expected-value output averages: the
// mean of Z weighted by W (and by the bootstrap counts) over the samples
// that reach a leaf.
type Expectation struct {
	// Z is the expectation target, finite and > 0 (nil: exp(y)).
	Z []float64
	// W are the expectation weights, finite and ≥ 0 (nil: all 1). A row
	// with training weight 0 and W > 0 reaches its leaf without counting
	// in any split or leaf value (nor in MinSamplesLeaf): so failed jobs
	// can be left out of the median yet count in the expected run time.
	W []float64
}

// Fit trains a forest on x with targets y and per-row weights w (nil: all
// 1; a zero weight drops the row), the same weights for both outputs:
// FitBoth(x, y, w, Expectation{W: w}, p).
func Fit(x *Matrix, y, w []float64, p ForestParams) (*Ensemble, error) {
	return FitBoth(x, y, w, Expectation{W: w}, p)
}

// FitBoth trains a forest on x with targets y. The weights w (nil: all 1)
// drive the splits and the leaf values; ex says what the leaves'
// expected-value outputs average. A leaf whose samples all have
// expectation weight 0 holds their mean z by bootstrap count alone. Rows
// with a NaN or infinite target or weight, or a bad expectation target,
// are an error.
func FitBoth(x *Matrix, y, w []float64, ex Expectation, p ForestParams) (*Ensemble, error) {
	if x.Rows == 0 || x.Cols == 0 {
		return nil, errors.New("fit: no training rows or no features")
	}
	we := ex.W
	if len(y) != x.Rows || w != nil && len(w) != x.Rows || we != nil && len(we) != x.Rows || ex.Z != nil && len(ex.Z) != x.Rows ||
		len(x.Data) != x.Rows*x.Cols {
		return nil, fmt.Errorf("fit: %d rows × %d cols, %d data, %d targets, %d weights, %d expectation targets, %d expectation weights",
			x.Rows, x.Cols, len(x.Data), len(y), len(w), len(ex.Z), len(we))
	}
	ey := ex.Z
	if ey == nil {
		ey = make([]float64, len(y))
	}
	for i := range y {
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("fit: target of row %d is %g", i, y[i])
		}
		if w != nil && (!(w[i] >= 0) || math.IsInf(w[i], 0)) {
			return nil, fmt.Errorf("fit: weight of row %d is %g", i, w[i])
		}
		if we != nil && (!(we[i] >= 0) || math.IsInf(we[i], 0)) {
			return nil, fmt.Errorf("fit: expectation weight of row %d is %g", i, we[i])
		}
		if ex.Z == nil {
			ey[i] = math.Exp(y[i])
		}
		if !(ey[i] > 0) || math.IsInf(ey[i], 0) {
			return nil, fmt.Errorf("fit: expectation target of row %d is %g (target %g)", i, ey[i], y[i])
		}
	}
	p, err := p.withDefaults(x.Cols)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	b := binMatrix(x, p.Bins, p.Workers)
	defer binData.Put(&b.data)
	e := &Ensemble{NumFeatures: x.Cols, Quantile: p.Quantile, Trees: make([]tree, p.Trees), Means: make([][]float64, p.Trees)}
	parallel(p.Trees, p.Workers, func(t int) {
		e.Trees[t], e.Means[t] = growTree(b, y, ey, w, we, p, t)
	})
	return e, nil
}

// hbin is one histogram bin: weight, weighted target sum, sample count.
type hbin struct {
	w, wy float64
	n     int64
}

// ubins is the length of one feature's ubin histogram: 256 bins and a
// 64-byte pad, so that the same bin of two features is not 4 KiB apart
// (a store to one would then stall loads from the other).
const ubins = 256 + 4

// ubin is a histogram bin when every row weighs 1: a sample's weight is
// its bootstrap count, so a bin's weight is float64(n) exactly (integers
// below 2⁵³ add without rounding) and needs no field of its own; the
// histograms then take two thirds of the cache.
type ubin struct {
	wy float64
	n  int64
}

// sample is one bootstrap row as the grower keeps it: kept in the same
// order as idx so that the histogram loop reads it sequentially. A row
// kept only for the expected-value output has w = wy = 0 and n = 0.
type sample struct {
	w, wy float64 // bootstrap count × row weight, and that times the target
	n     int32   // bootstrap count counted towards MinSamplesLeaf
	row   int32
}

// grower holds one tree's working state.
type grower struct {
	b     *binned
	y, ey []float64 // targets and expectation targets
	we    []float64 // expectation weights (nil: all 1)
	cnt   []int32   // bootstrap count by row
	s     []sample
	// recs holds the bin codes of s[k]'s row in recs[k*nc:(k+1)*nc],
	// moved along with s so that the histogram and partition loops read
	// them in sequence instead of gathering them from the whole matrix.
	recs    []uint8
	p       ForestParams
	rng     *rand.Rand
	feats   []int
	hist    [][256]hbin
	uhist   [][ubins]ubin // instead of hist when unit
	unit    bool          // every row weighs 1 (no weights given)
	out     tree
	means   []float64
	scratch []leafSample
}

type leafSample struct{ y, w float64 }

// growers keeps growers between trees and trainings: a tree's working
// buffers (bootstrap counts, samples, bin records, histograms) are large,
// and the online forest trains often.
var growers sync.Pool

func growTree(b *binned, y, ey, w, we []float64, p ForestParams, t int) (tree, []float64) {
	g, _ := growers.Get().(*grower)
	if g == nil {
		g = &grower{}
	}
	defer func() {
		*g = grower{cnt: g.cnt[:0], s: g.s[:0], recs: g.recs[:0], feats: g.feats[:0], hist: g.hist[:0], uhist: g.uhist[:0], scratch: g.scratch[:0]}
		growers.Put(g)
	}()
	g.b, g.y, g.ey, g.we, g.p = b, y, ey, we, p
	g.rng = rand.New(rand.NewPCG(p.Seed, uint64(t)+0x9e3779b97f4a7c15))
	n := b.rows
	draws := n
	if p.MaxSamples > 0 && p.MaxSamples < n {
		draws = p.MaxSamples
	}
	cnt := slices.Grow(g.cnt[:0], n)[:n]
	clear(cnt)
	for k := 0; k < draws; k++ {
		cnt[g.rng.IntN(n)]++
	}
	g.cnt = cnt
	g.s = slices.Grow(g.s[:0], min(n, draws)*2/3+1)
	weighted := false
	for i := 0; i < n; i++ {
		wi := 1.0
		if w != nil {
			wi = w[i]
		}
		switch {
		case cnt[i] > 0 && wi > 0:
			sw := float64(cnt[i]) * wi
			g.s = append(g.s, sample{w: sw, wy: sw * y[i], n: cnt[i], row: int32(i)})
			weighted = true
		case cnt[i] > 0 && (we == nil || we[i] > 0):
			// Drawn, but only for the expected-value output.
			g.s = append(g.s, sample{row: int32(i)})
		}
	}
	g.feats = slices.Grow(g.feats[:0], b.ncols)[:b.ncols]
	for i := range g.feats {
		g.feats[i] = i
	}
	g.unit = w == nil
	if g.unit {
		g.uhist = slices.Grow(g.uhist[:0], p.MaxFeatures)[:p.MaxFeatures]
	} else {
		g.hist = slices.Grow(g.hist[:0], p.MaxFeatures)[:p.MaxFeatures]
	}
	if !weighted {
		// Nothing to learn from: one leaf of value 0.
		return tree{{Thr: 0, Feat: -1}}, []float64{g.leafMean(0, len(g.s))}
	}
	nc := b.ncols
	g.recs = slices.Grow(g.recs[:0], len(g.s)*nc)[:len(g.s)*nc]
	for k, sm := range g.s {
		copy(g.recs[k*nc:(k+1)*nc], b.data[int(sm.row)*nc:])
	}
	g.grow(0, len(g.s), 0)
	return g.out, g.means
}

// leaf appends a leaf for s[lo:hi] (total weight tw, weighted target sum
// twy) to the tree.
func (g *grower) leaf(lo, hi int, tw, twy float64) {
	v := g.leafValue(lo, hi, tw, twy)
	g.out = append(g.out, node{Thr: v, Right: int32(len(g.means)), Feat: -1})
	g.means = append(g.means, g.leafMean(lo, hi))
}

// leafMean is the expected-value output of a leaf over s[lo:hi]: the mean
// of z weighted by bootstrap count × expectation weight; by bootstrap
// count alone when those weights are all 0; 1 without samples.
func (g *grower) leafMean(lo, hi int) float64 {
	var sw, swz, sn, snz float64
	for _, sm := range g.s[lo:hi] {
		c := float64(g.cnt[sm.row])
		sn += c
		snz += c * g.ey[sm.row]
		if g.we != nil {
			c *= g.we[sm.row]
		}
		sw += c
		swz += c * g.ey[sm.row]
	}
	switch {
	case sw > 0:
		return swz / sw
	case sn > 0:
		return snz / sn
	}
	return 1
}

// grow builds the subtree over s[lo:hi] at depth d and returns its index.
func (g *grower) grow(lo, hi, d int) int32 {
	var tw, twy float64
	var tn int64
	for k := lo; k < hi; k++ {
		tw += g.s[k].w
		twy += g.s[k].wy
		tn += int64(g.s[k].n)
	}
	me := int32(len(g.out))
	minLeaf := int64(g.p.MinSamplesLeaf)
	if d >= g.p.MaxDepth || tn < 2*minLeaf || hi-lo < 2 {
		g.leaf(lo, hi, tw, twy)
		return me
	}
	// Choose MaxFeatures features by a partial Fisher–Yates shuffle, then
	// build their histograms in one pass over the node's rows.
	nf, mf := len(g.feats), g.p.MaxFeatures
	for k := 0; k < mf; k++ {
		r := k + g.rng.IntN(nf-k)
		g.feats[k], g.feats[r] = g.feats[r], g.feats[k]
		if nb := len(g.b.edges[g.feats[k]]) + 2; g.unit {
			clear(g.uhist[k][:nb])
		} else {
			clear(g.hist[k][:nb])
		}
	}
	// Every bin sums its samples in the order of s.
	feats, hist, uhist, nc, unit := g.feats[:mf], g.hist, g.uhist, g.b.ncols, g.unit
	recs := g.recs[lo*nc : hi*nc]
	if unit {
		for i, sm := range g.s[lo:hi] {
			rec := recs[i*nc : i*nc+nc]
			for k, f := range feats {
				hb := &uhist[k][rec[f]]
				hb.wy += sm.wy
				hb.n += int64(sm.n)
			}
		}
	} else {
		for i, sm := range g.s[lo:hi] {
			rec := recs[i*nc : i*nc+nc]
			for k, f := range feats {
				hb := &hist[k][rec[f]]
				hb.w += sm.w
				hb.wy += sm.wy
				hb.n += int64(sm.n)
			}
		}
	}
	bestScore := twy * twy / tw * (1 + 1e-12)
	bestF, bestB := -1, 0
	for k, f := range feats {
		nb := len(g.b.edges[f]) + 2
		var lw, lwy float64
		var ln int64
		for bb := 0; bb < nb-1; bb++ {
			var bw, bwy float64
			var bn int64
			if unit {
				u := &uhist[k][bb]
				bw, bwy, bn = float64(u.n), u.wy, u.n
			} else {
				h := &hist[k][bb]
				bw, bwy, bn = h.w, h.wy, h.n
			}
			if bn == 0 && bw == 0 {
				// An empty bin (or one of samples kept only for the
				// expected output, whose w, wy and n are 0) changes no
				// sum, so its split scores as the previous bin's did.
				continue
			}
			lw += bw
			lwy += bwy
			ln += bn
			if ln < minLeaf {
				continue
			}
			if tn-ln < minLeaf {
				break
			}
			rw := tw - lw
			if lw <= 0 || rw <= 0 {
				continue
			}
			rwy := twy - lwy
			if s := lwy*lwy/lw + rwy*rwy/rw; s > bestScore {
				bestScore, bestF, bestB = s, f, bb
			}
		}
	}
	if bestF < 0 {
		g.leaf(lo, hi, tw, twy)
		return me
	}
	// Partition s[lo:hi]: bin ≤ bestB to the left.
	i, j := lo, hi-1
	for i <= j {
		if int(g.recs[i*nc+bestF]) <= bestB {
			i++
		} else {
			g.s[i], g.s[j] = g.s[j], g.s[i]
			ri, rj := g.recs[i*nc:i*nc+nc], g.recs[j*nc:j*nc+nc]
			for c := range ri {
				ri[c], rj[c] = rj[c], ri[c]
			}
			j--
		}
	}
	thr := math.Inf(-1)
	if bestB >= 1 {
		thr = g.b.edges[bestF][bestB-1]
	}
	g.out = append(g.out, node{Thr: thr, Feat: int32(bestF)})
	g.grow(lo, i, d+1)
	right := g.grow(i, hi, d+1)
	g.out[me].Right = right
	return me
}

// leafValue is the value of a leaf over s[lo:hi]: the weighted mean or
// median of the targets of its samples of positive weight (tw > 0).
func (g *grower) leafValue(lo, hi int, tw, twy float64) float64 {
	if g.p.Leaf == LeafMean {
		return twy / tw
	}
	s := g.scratch[:0]
	for _, sm := range g.s[lo:hi] {
		if sm.w > 0 {
			s = append(s, leafSample{g.y[sm.row], sm.w})
		}
	}
	g.scratch = s
	if len(s) == 1 {
		return twy / tw
	}
	return weightedMedian(s, tw)
}

// weightedMedian returns the smallest y whose cumulative weight reaches
// half of total (the lower weighted median); it reorders s.
func weightedMedian(s []leafSample, total float64) float64 {
	slices.SortFunc(s, func(a, b leafSample) int { return cmp.Compare(a.y, b.y) })
	half := total / 2
	var c float64
	for k, v := range s {
		c += v.w
		if c >= half {
			// Exactly half: average with the next value, like an
			// unweighted median of an even count.
			if c == half && k+1 < len(s) {
				return (v.y + s[k+1].y) / 2
			}
			return v.y
		}
	}
	return s[len(s)-1].y
}

// Predict returns the forest's output for feature vector x (length
// NumFeatures), in the units of the target.
func (e *Ensemble) Predict(x []float64) float64 {
	var buf [128]float64
	vals := buf[:0]
	if len(e.Trees) > len(buf) {
		vals = make([]float64, 0, len(e.Trees))
	}
	e.walkRow(x, func(_ int, p *leafPair) { vals = append(vals, p.v) })
	return combine(vals, e.Quantile)
}

// PredictBoth returns both outputs for x: v as Predict gives it, and the
// expected-value output mean, an estimate of E[z] (the mean over trees of
// their leaves' Means; see Expectation).
func (e *Ensemble) PredictBoth(x []float64) (v, mean float64) {
	var buf [128]float64
	vals := buf[:0]
	if len(e.Trees) > len(buf) {
		vals = make([]float64, 0, len(e.Trees))
	}
	var s float64
	e.walkRow(x, func(_ int, p *leafPair) {
		vals = append(vals, p.v)
		s += p.mean
	})
	return combine(vals, e.Quantile), s / float64(len(e.Trees))
}

// rowTree is a tree laid out for one row's walk (Predict): a leaf becomes
// a node that reads an extra feature slot holding 0, has threshold −Inf
// and sends every row to itself, so a walk may take more steps than the
// leaf's depth, and rowLanes trees can be walked in step without a branch
// per node. Inner nodes are as in tree: x goes right exactly when
// x[feat] > thr (NaN goes left).
type rowTree struct {
	nodes []rowNode
	both  []leafPair // by node: a leaf's value and expected-value output
}

type rowNode struct {
	thr   float64
	feat  int32
	right int32
}

// rowLanes is the number of trees a row walks at once: their walks are
// independent, so the processor overlaps them.
const rowLanes = 8

func (e *Ensemble) rowTrees() []rowTree {
	e.rowOnce.Do(func() {
		e.row = make([]rowTree, len(e.Trees))
		for t, tr := range e.Trees {
			rt := rowTree{nodes: make([]rowNode, len(tr)), both: make([]leafPair, len(tr))}
			for i, n := range tr {
				if n.Feat < 0 {
					rt.nodes[i] = rowNode{thr: math.Inf(-1), feat: int32(e.NumFeatures), right: int32(i)}
					rt.both[i] = leafPair{n.Thr, e.Means[t][n.Right]}
					continue
				}
				rt.nodes[i] = rowNode{thr: n.Thr, feat: n.Feat, right: n.Right}
			}
			e.row[t] = rt
		}
	})
	return e.row
}

// walkRow calls leaf(t, p) for every tree t in order with the value and
// expected-value output of the leaf x reaches in it.
func (e *Ensemble) walkRow(x []float64, leaf func(t int, p *leafPair)) {
	trees := e.rowTrees()
	var xbuf [64]float64
	var xx []float64
	if e.NumFeatures < len(xbuf) {
		xx = xbuf[:e.NumFeatures+1]
	} else {
		xx = make([]float64, e.NumFeatures+1)
	}
	copy(xx, x[:e.NumFeatures])
	xx[e.NumFeatures] = 0 // what leaves read: 0 > −Inf, so they stay
	for t0 := 0; t0 < len(trees); t0 += rowLanes {
		group := trees[t0:min(t0+rowLanes, len(trees))]
		var cur [rowLanes]int32
		for {
			moved := int32(0)
			for k := range group {
				c := cur[k]
				n := &group[k].nodes[c]
				// As in evalLanes: a flag-to-integer move, not a branch.
				var right int32
				if xx[n.feat] > n.thr {
					right = 1
				}
				next := c + 1 + right*(n.right-c-1)
				moved |= next ^ c
				cur[k] = next
			}
			if moved == 0 {
				break
			}
		}
		for k := range group {
			leaf(t0+k, &group[k].both[cur[k]])
		}
	}
}

// combine averages vals (q = 0) or takes their q-quantile; it reorders vals.
func combine(vals []float64, q float64) float64 {
	if q == 0 {
		var s float64
		for _, v := range vals {
			s += v
		}
		return s / float64(len(vals))
	}
	p := q * float64(len(vals)-1)
	i := int(p)
	lo := selectK(vals, i)
	if f := p - float64(i); f > 0 && i+1 < len(vals) {
		// After selectK, vals[i+1:] holds the larger values.
		hi := vals[i+1]
		for _, v := range vals[i+2:] {
			hi = min(hi, v)
		}
		return lo*(1-f) + hi*f
	}
	return lo
}

// selectK reorders v so that v[k] is its k-th smallest value (0-based),
// v[:k] ≤ v[k] ≤ v[k+1:], and returns it (Hoare's quickselect with a
// median-of-three pivot; deterministic).
func selectK(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for hi > lo {
		if hi-lo < 16 {
			for a := lo + 1; a <= hi; a++ {
				for b := a; b > lo && v[b] < v[b-1]; b-- {
					v[b], v[b-1] = v[b-1], v[b]
				}
			}
			break
		}
		m := lo + (hi-lo)/2
		if v[m] < v[lo] {
			v[m], v[lo] = v[lo], v[m]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[m] {
			v[hi], v[m] = v[m], v[hi]
		}
		pivot := v[m]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return v[k]
		}
	}
	return v[k]
}

// lanes is the number of rows one tree walks at once: their walks are
// independent, so the processor overlaps their cache misses.
const lanes = 16

// flatTree is a tree laid out for branch-free batch evaluation on ranked
// rows. Every feature value is first replaced by its rank among the
// thresholds the ensemble uses on that feature (see rankTable); node i then
// sends a row left (to i+1) when its rank ≤ thr, else to right. Ranks and
// thresholds fit in 16 bits (the forest splits on at most 255 bin edges per
// feature), so a node takes 8 bytes instead of 16 and far more of a tree
// stays in cache. A leaf points to itself with threshold −1, which every
// rank exceeds, so every row can take the same number of steps.
type flatTree struct {
	nodes []flatNode
	value []float64 // leaf values (0 for inner nodes)
	// both holds the leaf values and expected-value outputs side by side
	// (zeros for inner nodes): one cache line gives both.
	both  []leafPair
	depth int
}

type leafPair struct{ v, mean float64 }

type flatNode struct {
	thr   int16
	feat  uint16
	right int32
}

// rankTable holds, per feature, the sorted distinct thresholds of the
// ensemble's inner nodes (−Inf, "only missing goes left", left out). A
// value's rank is 0 when missing or −Inf, else 1 + the number of thresholds
// below it; then value ≤ thresholds[k] exactly when rank ≤ k+1, and rank 0
// goes left at every split, as in eval.
type rankTable [][]float64

// maxRank bounds the thresholds per feature that fit a flatNode.
const maxRank = math.MaxInt16 - 1

func newRankTable(trees []tree, nf int) (rankTable, bool) {
	rt := make(rankTable, nf)
	for _, t := range trees {
		for _, n := range t {
			if n.Feat >= 0 && !math.IsInf(n.Thr, -1) {
				rt[n.Feat] = append(rt[n.Feat], n.Thr)
			}
		}
	}
	for f := range rt {
		slices.Sort(rt[f])
		rt[f] = slices.Compact(rt[f])
		if len(rt[f]) > maxRank {
			return nil, false
		}
	}
	return rt, true
}

// rank returns v's rank on feature f. −Inf ranks with the missing values:
// eval sends it left at every split, "missing only" (−Inf) ones included.
func (rt rankTable) rank(f int, v float64) int16 {
	if v != v || math.IsInf(v, -1) {
		return 0
	}
	k, _ := slices.BinarySearch(rt[f], v) // thresholds < v
	return int16(k + 1)
}

func flatten(t tree, means []float64, rt rankTable) flatTree {
	f := flatTree{nodes: make([]flatNode, len(t)), value: make([]float64, len(t)), both: make([]leafPair, len(t))}
	depth := make([]int, len(t))
	for i, n := range t {
		if n.Feat < 0 {
			f.nodes[i] = flatNode{thr: -1, right: int32(i)}
			f.value[i] = n.Thr
			f.both[i] = leafPair{n.Thr, means[n.Right]}
			f.depth = max(f.depth, depth[i])
			continue
		}
		thr := int16(0) // −Inf: only missing values go left
		if !math.IsInf(n.Thr, -1) {
			k, _ := slices.BinarySearch(rt[n.Feat], n.Thr)
			thr = int16(k + 1)
		}
		f.nodes[i] = flatNode{thr: thr, right: n.Right, feat: uint16(n.Feat)}
		depth[i+1], depth[n.Right] = depth[i]+1, depth[i]+1
	}
	return f
}

// evalLanes evaluates t on the ranked rows of xb (row-major, cols wide) and
// stores row k's value at out[k*stride]; unless msum is nil, it also adds
// row k's expected-value output to msum[k].
func (t *flatTree) evalLanes(xb []int16, cols int, out []float64, stride int, msum []float64) {
	n := len(xb) / cols
	var cur [lanes]int32
	nodes := t.nodes
	for d := 0; d < t.depth; d++ {
		moved := int32(0)
		for k := 0; k < n; k++ {
			c := cur[k]
			nd := &nodes[c]
			v := xb[k*cols+int(nd.feat)]
			// A branch here is mispredicted half the time; the compiler
			// turns this into a flag-to-integer move instead.
			var right int32
			if v > nd.thr {
				right = 1
			}
			next := c + 1 + right*(nd.right-c-1)
			moved |= next ^ c
			cur[k] = next
		}
		if moved == 0 {
			break
		}
	}
	if msum == nil {
		for k := 0; k < n; k++ {
			out[k*stride] = t.value[cur[k]]
		}
		return
	}
	msum = msum[:n]
	for k := range msum {
		p := &t.both[cur[k]]
		out[k*stride] = p.v
		msum[k] += p.mean
	}
}

// predictBlock is the number of rows PredictBatch evaluates tree by tree,
// so that one tree stays in cache while it sees many rows.
const predictBlock = 256

// PredictBatch predicts every row of x into out (len x.Rows) using up to
// workers goroutines (≤ 0: GOMAXPROCS), as Predict does row by row. The
// result does not depend on workers.
func (e *Ensemble) PredictBatch(x *Matrix, out []float64, workers int) {
	e.PredictBatchBoth(x, out, nil, workers)
}

// PredictBatchBoth is PredictBatch that also stores the expected-value
// output of row r (PredictBoth's mean) in mean[r] unless mean is nil.
func (e *Ensemble) PredictBatchBoth(x *Matrix, out, mean []float64, workers int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nblk := (x.Rows + predictBlock - 1) / predictBlock
	nt := len(e.Trees)
	e.flatOnce.Do(func() {
		rt, ok := newRankTable(e.Trees, e.NumFeatures)
		if !ok {
			return // too many thresholds for 16-bit ranks: per-row path
		}
		e.ranks = rt
		e.flat = make([]flatTree, nt)
		for i, t := range e.Trees {
			e.flat[i] = flatten(t, e.Means[i], rt)
		}
	})
	if e.flat == nil {
		parallel(nblk, workers, func(blk int) {
			for r := blk * predictBlock; r < min((blk+1)*predictBlock, x.Rows); r++ {
				if mean != nil {
					out[r], mean[r] = e.PredictBoth(x.Row(r))
				} else {
					out[r] = e.Predict(x.Row(r))
				}
			}
		})
		return
	}
	type buf struct {
		vals []float64
		msum []float64 // by row: the sum over trees, in tree order, of the expected outputs
		xb   []int16
	}
	pool := sync.Pool{New: func() any {
		b := &buf{vals: make([]float64, predictBlock*nt), xb: make([]int16, predictBlock*x.Cols)}
		if mean != nil {
			b.msum = make([]float64, predictBlock)
		}
		return b
	}}
	parallel(nblk, workers, func(blk int) {
		lo := blk * predictBlock
		hi := min(lo+predictBlock, x.Rows)
		b := pool.Get().(*buf)
		xb := b.xb[:(hi-lo)*x.Cols]
		for i, v := range x.Data[lo*x.Cols : hi*x.Cols] {
			xb[i] = e.ranks.rank(i%x.Cols, v)
		}
		clear(b.msum)
		for t := range e.flat {
			ft := &e.flat[t]
			for r := 0; r < hi-lo; r += lanes {
				var ms []float64
				if mean != nil {
					ms = b.msum[r:]
				}
				ft.evalLanes(xb[r*x.Cols:min(r+lanes, hi-lo)*x.Cols], x.Cols, b.vals[r*nt+t:], nt, ms)
			}
		}
		for r := lo; r < hi; r++ {
			out[r] = combine(b.vals[(r-lo)*nt:(r-lo+1)*nt], e.Quantile)
			if mean != nil {
				mean[r] = b.msum[r-lo] / float64(nt)
			}
		}
		pool.Put(b)
	})
}

// Nodes returns the total number of nodes over all trees.
func (e *Ensemble) Nodes() int {
	n := 0
	for _, t := range e.Trees {
		n += len(t)
	}
	return n
}
