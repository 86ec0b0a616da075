package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
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
			for i := range out {
				if want := en.Predict(m.Row(i)); out[i] != want {
					t.Fatalf("row %d: batch %g, single %g", i, out[i], want)
				}
			}
		}
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
		})
	}
}

// BenchmarkPredict predicts with a 100-tree forest trained on 50,000 rows
// × 20 features and reports rows per second.
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
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ed.PredictBatch(xt, out, 0)
		}
		b.ReportMetric(float64(b.N*xt.Rows)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64(ed.Nodes())/float64(len(ed.Trees)), "nodes/tree")
	})
	b.Run("batch", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			e.PredictBatch(xt, out, 0)
		}
		b.ReportMetric(float64(b.N*xt.Rows)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("single", func(b *testing.B) {
		var s float64
		for i := 0; i < b.N; i++ {
			s += e.Predict(xt.Row(i % xt.Rows))
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		_ = s
	})
}
