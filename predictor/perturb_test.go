package predictor

import (
	"math"
	"strconv"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// TestPerturb: every estimate is the wrapped one times a factor fixed by
// (seed, job id), within [exp(-scale), exp(scale)); Predict and Repredict
// agree; the wrapped predictor learns unchanged; scale 0 is the identity;
// a scale out of range is refused.
func TestPerturb(t *testing.T) {
	inner := &countingMean{Mean: NewMean()}
	const scale = 0.05
	p, err := Perturb(inner, scale, 7)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "mean" || Unwrap(p) != Predictor(inner) || Unwrap(WithArrays(p)) != Predictor(inner) {
		t.Fatalf("name %q, unwrap %T", p.Name(), Unwrap(p))
	}
	done := job.Job{ID: "1", User: "u", Name: "train", Submit: 0, RunTime: 1000, GPUs: 1}
	p.Observe(&done, 1000)
	if inner.observes != 1 {
		t.Fatalf("observes %d, want the wrapped predictor to learn", inner.observes)
	}
	other, _ := Perturb(NewMean(), scale, 8)
	other.Observe(&done, 1000)
	var lo, hi float64 = math.Inf(1), math.Inf(-1)
	differs := 0
	for i := range 200 {
		j := job.Job{ID: strconv.Itoa(100 + i), User: "u", Name: "train", Submit: 2000, GPUs: 1}
		want := inner.Mean.Predict(&j)
		got := p.Predict(&j)
		f := got.Seconds / want.Seconds
		if math.Abs(got.Median/want.Median-f) > 1e-12 {
			t.Fatalf("job %s: expected value ×%v, median ×%v: want one factor", j.ID, f, got.Median/want.Median)
		}
		if math.Abs(f-p.Factor(&j)) > 1e-12 || p.Repredict(&j, 3000) != got || p.Predict(&j) != got {
			t.Fatalf("job %s: factor %v, Factor %v: want it fixed per job", j.ID, f, p.Factor(&j))
		}
		if f < math.Exp(-scale) || f >= math.Exp(scale) {
			t.Fatalf("job %s: factor %v out of [exp(-%v), exp(%v))", j.ID, f, scale, scale)
		}
		lo, hi = math.Min(lo, f), math.Max(hi, f)
		if other.Factor(&j) != f {
			differs++
		}
	}
	if lo > math.Exp(-scale/2) || hi < math.Exp(scale/2) {
		t.Errorf("200 factors in [%v, %v]: want them spread over [exp(-%v), exp(%v))", lo, hi, scale, scale)
	}
	if differs < 190 {
		t.Errorf("seeds 7 and 8 gave %d of 200 factors apart: want the seed to draw them", differs)
	}

	zero, _ := Perturb(NewMean(), 0, 7)
	zero.Observe(&done, 1000)
	j := job.Job{ID: "5", User: "u", Name: "train", Submit: 2000, GPUs: 1}
	if zero.Predict(&j) != inner.Mean.Predict(&j) {
		t.Errorf("scale 0: %+v, want the wrapped estimate %+v", zero.Predict(&j), inner.Mean.Predict(&j))
	}
	for _, bad := range []float64{-0.01, MaxPerturbScale + 0.01, math.NaN(), math.Inf(1)} {
		if _, err := Perturb(NewMean(), bad, 1); err == nil {
			t.Errorf("scale %v: want an error", bad)
		}
	}
}
