package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// synth returns n rows × nf features and a target that depends on a few
// of them (a step, a linear part and an interaction) plus noise; about 5%
// of the values of feature 3 are missing.
func synth(n, nf int, seed uint64) (*Matrix, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := &Matrix{Rows: n, Cols: nf, Data: make([]float64, n*nf)}
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		r := x.Row(i)
		for c := range r {
			if c%4 == 0 {
				r[c] = float64(rng.IntN(30)) // categorical-like
			} else {
				r[c] = rng.NormFloat64()
			}
		}
		if rng.Float64() < 0.05 {
			r[3] = math.NaN()
		}
		t := 5 + 2*r[1]
		if r[0] > 14 {
			t += 3
		}
		if r[2] > 0 && r[5] > 0 {
			t -= 2
		}
		if r[3] != r[3] {
			t += 1
		}
		y[i] = t + 0.3*rng.NormFloat64()
	}
	return x, y
}

func rmse(e *Ensemble, x *Matrix, y []float64) float64 {
	var s float64
	for i := 0; i < x.Rows; i++ {
		d := e.Predict(x.Row(i)) - y[i]
		s += d * d
	}
	return math.Sqrt(s / float64(x.Rows))
}

func TestFitLearnsSignal(t *testing.T) {
	xtr, ytr := synth(4000, 8, 1)
	xte, yte := synth(1000, 8, 2)
	var sd float64
	mean := 0.0
	for _, v := range yte {
		mean += v / float64(len(yte))
	}
	for _, v := range yte {
		sd += (v - mean) * (v - mean) / float64(len(yte))
	}
	sd = math.Sqrt(sd)
	for _, tc := range []struct {
		name string
		p    ForestParams
		max  float64 // largest acceptable test RMSE as a share of the target's SD
	}{
		{"median-leaf", ForestParams{Trees: 30, Seed: 3}, 0.3},
		{"mean-leaf-mean-combine", ForestParams{Trees: 30, Seed: 3, Leaf: LeafMean, Quantile: 0}, 0.3},
		{"one-tree", ForestParams{Trees: 1, Seed: 3, MaxFeatures: 8}, 0.4},
		{"stump", ForestParams{Trees: 20, Seed: 3, MaxDepth: 1}, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Fit(xtr, ytr, nil, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := rmse(e, xte, yte) / sd; got > tc.max {
				t.Errorf("test RMSE/SD = %.3f, want ≤ %.2f", got, tc.max)
			}
		})
	}
}

func TestFitDeterministicAcrossWorkers(t *testing.T) {
	x, y := synth(3000, 10, 5)
	var ref *Ensemble
	for _, w := range []int{1, 2, 7} {
		e, err := Fit(x, y, nil, ForestParams{Trees: 12, Seed: 42, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = e
			continue
		}
		for ti := range e.Trees {
			if len(e.Trees[ti]) != len(ref.Trees[ti]) {
				t.Fatalf("workers=%d: tree %d has %d nodes, want %d", w, ti, len(e.Trees[ti]), len(ref.Trees[ti]))
			}
			for k := range e.Trees[ti] {
				if e.Trees[ti][k] != ref.Trees[ti][k] {
					t.Fatalf("workers=%d: tree %d node %d differs", w, ti, k)
				}
			}
		}
	}
	// Another seed gives another forest.
	e, _ := Fit(x, y, nil, ForestParams{Trees: 12, Seed: 43})
	if e.Predict(x.Row(0)) == ref.Predict(x.Row(0)) && e.Predict(x.Row(1)) == ref.Predict(x.Row(1)) && len(e.Trees[0]) == len(ref.Trees[0]) {
		t.Error("seed 43 gave the same forest as seed 42")
	}
}

// TestFitMaxSamples checks that capped bootstrap samples still learn the
// signal, give smaller trees, and stay independent of the worker count.
func TestFitMaxSamples(t *testing.T) {
	x, y := synth(20000, 8, 3)
	xt, yt := synth(2000, 8, 4)
	mae := func(e *Ensemble) float64 {
		var s float64
		for i := 0; i < xt.Rows; i++ {
			s += math.Abs(e.Predict(xt.Row(i)) - yt[i])
		}
		return s / float64(xt.Rows)
	}
	full, err := Fit(x, y, nil, ForestParams{Trees: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ref *Ensemble
	for _, w := range []int{1, 3} {
		e, err := Fit(x, y, nil, ForestParams{Trees: 10, Seed: 1, MaxSamples: 2000, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = e
		} else if e.Nodes() != ref.Nodes() || e.Predict(xt.Row(0)) != ref.Predict(xt.Row(0)) {
			t.Fatalf("workers=%d: another forest", w)
		}
	}
	if ref.Nodes() >= full.Nodes()/3 {
		t.Errorf("2,000-sample trees have %d nodes, full ones %d: the cap did not bound them", ref.Nodes(), full.Nodes())
	}
	// The capped forest is worse, but not by much on this signal.
	if m, f := mae(ref), mae(full); m > 1.5*f {
		t.Errorf("MAE with 2,000 samples per tree %g, with all %g", m, f)
	}
}

func TestFitRespectsLimits(t *testing.T) {
	x, y := synth(2000, 6, 9)
	e, err := Fit(x, y, nil, ForestParams{Trees: 5, MaxDepth: 3, MinSamplesLeaf: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for ti, tr := range e.Trees {
		if len(tr) > 15 {
			t.Errorf("tree %d: %d nodes, more than a depth-3 tree can have", ti, len(tr))
		}
	}
}

func TestMedianLeafResistsLowOutliers(t *testing.T) {
	// One feature, one group; 30% of the rows are "failures" far below the
	// typical value. A mean leaf is pulled down, a median leaf is not.
	n := 1000
	x := &Matrix{Rows: n, Cols: 1, Data: make([]float64, n)}
	y := make([]float64, n)
	for i := range y {
		y[i] = 8
		if i%10 < 3 {
			y[i] = 2
		}
	}
	med, _ := Fit(x, y, nil, ForestParams{Trees: 10, Seed: 1})
	mean, _ := Fit(x, y, nil, ForestParams{Trees: 10, Seed: 1, Leaf: LeafMean, Quantile: 0})
	if got := med.Predict([]float64{0}); got != 8 {
		t.Errorf("median leaves: %g, want 8", got)
	}
	if got := mean.Predict([]float64{0}); math.Abs(got-6.2) > 0.2 {
		t.Errorf("mean leaves: %g, want about 6.2", got)
	}
	// Zero weights on the failures remove them even from mean leaves.
	w := make([]float64, n)
	for i := range w {
		if y[i] == 8 {
			w[i] = 1
		}
	}
	wm, _ := Fit(x, y, w, ForestParams{Trees: 10, Seed: 1, Leaf: LeafMean, Quantile: 0})
	if got := wm.Predict([]float64{0}); got != 8 {
		t.Errorf("weighted mean leaves: %g, want 8", got)
	}
}

func TestQuantileCombine(t *testing.T) {
	vals := []float64{5, 1, 4, 2, 3}
	for _, tc := range []struct{ q, want float64 }{{0, 3}, {0.5, 3}, {0.75, 4}, {0.8, 4.2}} {
		if got := combine(append([]float64{}, vals...), tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("combine(q=%g) = %g, want %g", tc.q, got, tc.want)
		}
	}
}

func TestFitRejectsBadInput(t *testing.T) {
	x, y := synth(10, 6, 1)
	bad := append([]float64{}, y...)
	bad[3] = math.NaN()
	for _, tc := range []struct {
		name string
		x    *Matrix
		y, w []float64
		p    ForestParams
	}{
		{"no rows", &Matrix{Cols: 6}, nil, nil, ForestParams{}},
		{"short targets", x, y[:5], nil, ForestParams{}},
		{"NaN target", x, bad, nil, ForestParams{}},
		{"negative weight", x, y, []float64{-1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, ForestParams{}},
		{"quantile 1", x, y, nil, ForestParams{Quantile: 1}},
		{"bins 300", x, y, nil, ForestParams{Bins: 300}},
		{"negative max samples", x, y, nil, ForestParams{MaxSamples: -1}},
	} {
		if _, err := Fit(tc.x, tc.y, tc.w, tc.p); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestPredictBatchMatchesPredict(t *testing.T) {
	x, y := synth(1500, 7, 11)
	e, err := Fit(x, y, nil, ForestParams{Trees: 9, Seed: 2, Quantile: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	// The batch path ranks values against the trees' thresholds: check it
	// on the training rows (values equal to thresholds), with missing and
	// infinite values mixed in, and on a model with missing-only splits.
	odd := &Matrix{Rows: x.Rows, Cols: x.Cols, Data: append([]float64(nil), x.Data...)}
	for i := range odd.Data {
		switch i % 11 {
		case 3:
			odd.Data[i] = math.NaN()
		case 5:
			odd.Data[i] = math.Inf(1)
		case 7:
			odd.Data[i] = math.Inf(-1)
		}
	}
	withNaN, err := Fit(odd, y, nil, ForestParams{Trees: 9, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Matrix{x, odd} {
		for _, en := range []*Ensemble{e, withNaN} {
			out := make([]float64, m.Rows)
			en.PredictBatch(m, out, 3)
			both, mean := make([]float64, m.Rows), make([]float64, m.Rows)
			en.PredictBatchBoth(m, both, mean, 2)
			for i := range out {
				want := en.Predict(m.Row(i))
				v, wantMean := en.PredictBoth(m.Row(i))
				if out[i] != want || both[i] != want || v != want {
					t.Fatalf("row %d: batch %g, batch of both %g, single %g, single of both %g", i, out[i], both[i], want, v)
				}
				if mean[i] != wantMean || !(wantMean > 0) {
					t.Fatalf("row %d: expected output %g in batch, %g single", i, mean[i], wantMean)
				}
			}
		}
	}
}

// TestLeafOutputs checks both outputs on data whose mean and median
// differ: 70% of the runs take 100 s, 30% take 10,000 s (log targets), so
// the median is 100 s and the mean 3,070 s; then the same with the long
// runs at weight 0 for the splits and leaf values but counted in the
// expectation (failed jobs), and counted in neither; and with targets
// shifted and run times as the expectation targets.
func TestLeafOutputs(t *testing.T) {
	n := 2000
	x := &Matrix{Rows: n, Cols: 2, Data: make([]float64, 2*n)}
	y := make([]float64, n)
	w := make([]float64, n)
	for i := range y {
		// Nothing to split on: every tree is one leaf, and only the
		// bootstrap moves its outputs.
		x.Data[2*i+1] = math.NaN()
		y[i], w[i] = math.Log(100), 1
		if i%10 < 3 {
			y[i], w[i] = math.Log(10000), 0
		}
	}
	// The same targets less 1 (relative to a baseline, as Train with
	// Residual gives them), with the run times as expectation targets.
	shifted := make([]float64, n)
	runs := make([]float64, n)
	for i := range y {
		shifted[i], runs[i] = y[i]-1, math.Exp(y[i])
	}
	for _, tc := range []struct {
		name          string
		y             []float64
		w             []float64
		ex            Expectation
		p             ForestParams
		median, mean  float64
		tolMed, tolMn float64 // relative tolerances
	}{
		{"median leaves", y, nil, Expectation{}, ForestParams{Trees: 50, Seed: 1, MinSamplesLeaf: 400}, 100, 3070, 1e-9, 0.03},
		{"mean-of-log leaves", y, nil, Expectation{}, ForestParams{Trees: 50, Seed: 1, MinSamplesLeaf: 400, Leaf: LeafMean, Quantile: 0},
			math.Exp(0.7*math.Log(100) + 0.3*math.Log(10000)), 3070, 0.05, 0.03},
		{"long runs only in the expectation", y, w, Expectation{}, ForestParams{Trees: 50, Seed: 1, MinSamplesLeaf: 200}, 100, 3070, 1e-9, 0.03},
		{"long runs left out", y, w, Expectation{W: w}, ForestParams{Trees: 50, Seed: 1, MinSamplesLeaf: 200}, 100, 100, 1e-9, 1e-9},
		{"shifted targets, run times expected", shifted, nil, Expectation{Z: runs}, ForestParams{Trees: 50, Seed: 1, MinSamplesLeaf: 400},
			100 / math.E, 3070, 1e-9, 0.03},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := FitBoth(x, tc.y, tc.w, tc.ex, tc.p)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range [][]float64{{0, 0}, {-2, math.NaN()}} {
				v, mean := e.PredictBoth(row)
				if got := math.Exp(v); math.Abs(got/tc.median-1) > tc.tolMed {
					t.Errorf("median output %g s, want %g", got, tc.median)
				}
				if math.Abs(mean/tc.mean-1) > tc.tolMn {
					t.Errorf("expected output %g s, want %g", mean, tc.mean)
				}
			}
		})
	}
}

// TestFitBothKeepsTrees checks that the expectation changes no split: with
// no zero weight, FitBoth(w, Expectation{}) grows the trees Fit(w) grows;
// and that bad expectation inputs are refused.
func TestFitBothKeepsTrees(t *testing.T) {
	x, y := synth(2000, 6, 12)
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 1 + float64(i%3)
	}
	a, _ := Fit(x, y, w, ForestParams{Trees: 4, Seed: 5})
	b, _ := FitBoth(x, y, w, Expectation{}, ForestParams{Trees: 4, Seed: 5})
	for ti := range a.Trees {
		if !slices.Equal(a.Trees[ti], b.Trees[ti]) {
			t.Fatalf("tree %d differs", ti)
		}
		if slices.Equal(a.Means[ti], b.Means[ti]) {
			t.Errorf("tree %d: the expectation ignores its weights", ti)
		}
	}
	if _, err := FitBoth(x, y, nil, Expectation{W: make([]float64, 3)}, ForestParams{}); err == nil {
		t.Error("short expectation weights accepted")
	}
	bad := make([]float64, len(y))
	bad[4] = math.Inf(1)
	if _, err := FitBoth(x, y, nil, Expectation{W: bad}, ForestParams{}); err == nil {
		t.Error("infinite expectation weight accepted")
	}
	z := make([]float64, len(y))
	for i := range z {
		z[i] = 1
	}
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		z[7] = v
		if _, err := FitBoth(x, y, nil, Expectation{Z: z}, ForestParams{}); err == nil {
			t.Errorf("expectation target %g accepted", v)
		}
	}
	if _, err := FitBoth(x, y, nil, Expectation{Z: z[:5]}, ForestParams{}); err == nil {
		t.Error("short expectation targets accepted")
	}
	big := slices.Clone(y)
	big[2] = 800 // exp overflows
	if _, err := Fit(x, big, nil, ForestParams{}); err == nil {
		t.Error("a target too large for exp(y) accepted as the default expectation")
	}
}

// BenchmarkTrain trains 100 trees with the default settings on rows × 20
// features. The 500k case is the target (≤ 60 s, ≤ 2 GiB on two
// cores); run it alone: go test -run '^$' -bench 'Train/rows=500000' -benchtime 1x ./predictor
func BenchmarkTrain(b *testing.B) {
	for _, n := range []int{50000, 500000} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) {
			x, y := synth(n, 20, 1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e, err := Fit(x, y, nil, ForestParams{Trees: 100, Seed: uint64(i)})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(e.Nodes())/100, "nodes/tree")
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/train")
		})
	}
}

// BenchmarkPredict predicts with a 100-tree forest trained on 50,000 rows
// × 20 features and reports rows per second (rows/s) and, for one row at
// a time, microseconds per row (µs/row). Each forest predicts a block
// before the timer starts: the first prediction lays its trees out for
// the batch or the one-row walk, once per forest.
func BenchmarkPredict(b *testing.B) {
	x, y := synth(50000, 20, 1)
	e, err := Fit(x, y, nil, ForestParams{Trees: 100, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	xt, _ := synth(100000, 20, 2)
	out := make([]float64, xt.Rows)
	// The forest as `asrpt train` grows it (DefaultTrainConfig: leaves of
	// at least 50 jobs), on 500k rows: the shipped model's throughput.
	b.Run("batch-trainconfig", func(b *testing.B) {
		xl, yl := synth(500000, 20, 3)
		ed, err := Fit(xl, yl, nil, DefaultTrainConfig().Forest)
		if err != nil {
			b.Fatal(err)
		}
		ed.PredictBatch(&Matrix{Rows: 1, Cols: xt.Cols, Data: xt.Row(0)}, out, 0)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ed.PredictBatch(xt, out, 0)
		}
		b.ReportMetric(float64(b.N*xt.Rows)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(ed.Nodes())/float64(len(ed.Trees)), "nodes/tree")
	})
	e.PredictBatch(&Matrix{Rows: 1, Cols: xt.Cols, Data: xt.Row(0)}, out, 0)
	e.Predict(xt.Row(0))
	b.Run("batch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.PredictBatch(xt, out, 0)
		}
		b.ReportMetric(float64(b.N*xt.Rows)/b.Elapsed().Seconds(), "rows/s")
	})
	// Both outputs, as Model.PredictRowsBoth asks for them.
	b.Run("batch-both", func(b *testing.B) {
		mean := make([]float64, xt.Rows)
		for i := 0; i < b.N; i++ {
			e.PredictBatchBoth(xt, out, mean, 0)
		}
		b.ReportMetric(float64(b.N*xt.Rows)/b.Elapsed().Seconds(), "rows/s")
	})
	// One row at a time, as the online forest predicts: the median output
	// (Predict) and both outputs (PredictBoth).
	b.Run("single", func(b *testing.B) {
		var s float64
		for i := 0; i < b.N; i++ {
			s += e.Predict(xt.Row(i % xt.Rows))
		}
		reportRows(b, b.N)
		_ = s
	})
	b.Run("single-both", func(b *testing.B) {
		var s float64
		for i := 0; i < b.N; i++ {
			v, m := e.PredictBoth(xt.Row(i % xt.Rows))
			s += v + m
		}
		reportRows(b, b.N)
		_ = s
	})
}

// reportRows reports rows predicted per second and microseconds per row.
func reportRows(b *testing.B, rows int) {
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(rows)/sec, "rows/s")
	b.ReportMetric(sec/float64(rows)*1e6, "µs/row")
}
