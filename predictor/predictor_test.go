package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
)

func TestSimplePredictorsBothOutputs(t *testing.T) {
	m := NewMean()
	for i, rt := range []float64{100, 200, 10000} {
		j := &job.Job{ID: string(rune('a' + i)), User: "u", Name: "train-run1", RunTime: rt}
		m.Observe(j, rt)
	}
	for _, tc := range []struct {
		name string
		p    Predictor
		j    job.Job
		want Estimate
	}{
		{"oracle", Oracle{}, job.Job{RunTime: 420}, Estimate{Seconds: 420, Median: 420, Known: true}},
		{"oracle, under 1 s", Oracle{}, job.Job{RunTime: 0}, Estimate{Seconds: 1, Median: 1, Known: true}},
		{"limit: one number", Limit{}, job.Job{TimeLimit: 3600}, Estimate{Seconds: 3600, Known: true}},
		{"limit, none", Limit{}, job.Job{}, Estimate{Seconds: DefaultLimit}},
		// Mean: the running mean and the window's median (log space,
		// so the middle value of three).
		{"mean: group", m, job.Job{User: "u", Name: "train-run7"}, Estimate{Seconds: 3433.333333333333, Median: 200, Known: true}},
		{"mean: user", m, job.Job{User: "u", Name: "other"}, Estimate{Seconds: 3433.333333333333, Median: 200}},
		{"mean: unseen, limit", m, job.Job{User: "v", TimeLimit: 50}, Estimate{Seconds: 50}},
	} {
		got := tc.p.Predict(&tc.j)
		if math.Abs(got.Seconds-tc.want.Seconds) > 1e-9 || math.Abs(got.Median-tc.want.Median) > 1e-9 || got.Known != tc.want.Known {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if r := tc.p.Repredict(&tc.j, 1e6); r != got {
			t.Errorf("%s: Repredict %+v, Predict %+v", tc.name, r, got)
		}
		if got.Fit() != map[bool]float64{true: got.Median, false: got.Seconds}[got.Median > 0] {
			t.Errorf("%s: Fit %g", tc.name, got.Fit())
		}
	}
}

// TestMeanSeconds checks a group's mean run time over its window against
// a sum over the last Window runs, across many laps of the ring, with run
// times spread over seven orders of magnitude.
func TestMeanSeconds(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var g groupAcc
	var runs []float64
	for i := 0; i < 1000; i++ {
		rt := math.Round(math.Exp(rng.Float64() * 16))
		if i%97 == 0 {
			rt = 1e7
		}
		runs = append(runs, rt)
		g.add(logRun(rt), float64(i), i%5 == 0)
		last := runs[max(0, len(runs)-Window):]
		var want float64
		for _, r := range last {
			want += math.Max(r, 1)
		}
		want /= float64(len(last))
		if got := g.stats().MeanSeconds; math.Abs(got/want-1) > 1e-9 {
			t.Fatalf("after %d runs: MeanSeconds %g, want %g", i+1, got, want)
		}
	}
	if s := emptyStats(); !math.IsNaN(s.MeanSeconds) {
		t.Errorf("empty group: MeanSeconds %g, want NaN", s.MeanSeconds)
	}
}

// TestMeanRepredictGroup: once a job of a group has finished and been
// observed, RepredictGroup gives what Repredict gives each job of its
// group (GroupKey), whatever its own number, GPUs or limit.
func TestMeanRepredictGroup(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	m := NewMean()
	names := []string{"train-01", "train-02", "train_7", "eval", "eval-3"}
	compared := 0
	for i := range 500 {
		done := job.Job{ID: fmt.Sprint(i), User: fmt.Sprintf("u%d", rng.IntN(4)), Name: names[rng.IntN(len(names))],
			GPUs: 1 << rng.IntN(4), RunTime: float64(1 + rng.IntN(5000)), TimeLimit: 7200}
		m.Observe(&done, float64(i))
		shared, _ := m.RepredictGroup(&done, float64(i))
		if !shared.Known {
			t.Fatalf("job %d: group estimate %+v not known after its own finish", i, shared)
		}
		for k, name := range names {
			w := job.Job{ID: fmt.Sprint("w", k), User: done.User, Name: name, GPUs: 1 + k, TimeLimit: float64(60 * (k + 1))}
			if GroupKey(&w) != GroupKey(&done) {
				continue
			}
			compared++
			if got := m.Repredict(&w, float64(i)); got != shared {
				t.Fatalf("job %d (%s): waiting %s predicted %+v, the group %+v", i, done.Name, name, got, shared)
			}
		}
	}
	if compared < 1000 {
		t.Errorf("%d waiting jobs compared, want the names to share families", compared)
	}
}

// TestMeanByGPUs: mean-gpus sizes a job from its (user, family, GPU
// count) group, its expected value shrunk towards the (user, family)
// group's mean by GPUGroupPrior runs and its median the GPU group's own,
// else its (user, family) group, then its user's runs; it asks every
// waiting job again after a finish, since the jobs of one (user, family)
// group no longer share one estimate.
func TestMeanByGPUs(t *testing.T) {
	m := NewMeanByGPUs()
	for i, r := range []struct {
		gpus int
		run  float64
	}{{1, 100}, {1, 300}, {8, 10000}} {
		j := job.Job{ID: fmt.Sprint(i), User: "u", Name: "train-run1", GPUs: r.gpus, RunTime: r.run}
		m.Observe(&j, float64(i))
	}
	for _, tc := range []struct {
		name      string
		j         job.Job
		mean      float64
		known     bool
		estimator prediction.Estimator
	}{
		// (2·200 + 10·3466.67) / 12 and (1·10000 + 10·3466.67) / 11.
		{"its GPU count", job.Job{User: "u", Name: "train-run9", GPUs: 1}, (2*200 + GPUGroupPrior*10400.0/3) / (2 + GPUGroupPrior), true, prediction.ByGroup},
		{"the other GPU count", job.Job{User: "u", Name: "train-run9", GPUs: 8}, (10000 + GPUGroupPrior*10400.0/3) / (1 + GPUGroupPrior), true, prediction.ByGroup},
		{"a GPU count not seen: the family", job.Job{User: "u", Name: "train-run9", GPUs: 4}, 3466.6666666666665, true, prediction.ByGroup},
		{"another family: the user", job.Job{User: "u", Name: "eval", GPUs: 1}, 3466.6666666666665, false, prediction.ByUser},
	} {
		got := m.Predict(&tc.j)
		if math.Abs(got.Seconds-tc.mean) > 1e-9 || got.Known != tc.known || got.Estimator != tc.estimator {
			t.Errorf("%s: %+v, want mean %g, known %v, by %s", tc.name, got, tc.mean, tc.known, tc.estimator)
		}
	}
	// The median is the GPU group's own: of 100 and 300 s, 173 s (the
	// window's median of log run times).
	if got := m.Predict(&job.Job{User: "u", Name: "train-run9", GPUs: 1}).Median; math.Abs(got-math.Sqrt(100*300)) > 1 {
		t.Errorf("median of the GPU group: %g, want about %g", got, math.Sqrt(100*300))
	}
	if m.Name() != "mean-gpus" || NewMean().Name() != "mean" {
		t.Errorf("names %q, %q", m.Name(), NewMean().Name())
	}
	done := job.Job{User: "u", Name: "train-run1", GPUs: 1, RunTime: 200}
	if _, shared := m.RepredictGroup(&done, 10); shared {
		t.Error("mean-gpus: one estimate for every GPU count of a (user, family) group")
	}
}

// TestMeanByGPUsPartition: a job of a user without history is sized by
// mean-gpus from its partition's runs, else its time limit; mean keeps
// the time limit (the family median's own rule, the reference).
func TestMeanByGPUsPartition(t *testing.T) {
	m, plain := NewMeanByGPUs(), NewMean()
	for i, r := range []struct {
		partition string
		run       float64
	}{{"gpu", 100}, {"gpu", 300}, {"debug", 50}} {
		j := job.Job{ID: fmt.Sprint(i), User: "u", Name: "train", GPUs: 1, Partition: r.partition, RunTime: r.run}
		m.Observe(&j, float64(i))
		plain.Observe(&j, float64(i))
	}
	for _, tc := range []struct {
		name      string
		p         Predictor
		partition string
		seconds   float64
		estimator prediction.Estimator
	}{
		{"mean-gpus, a partition with runs", m, "gpu", 200, prediction.ByPartition},
		{"mean-gpus, the other partition", m, "debug", 50, prediction.ByPartition},
		{"mean-gpus, a partition without runs", m, "cpu", 7200, prediction.ByLimit},
		{"mean, a partition with runs", plain, "gpu", 7200, prediction.ByLimit},
	} {
		got := tc.p.Predict(&job.Job{User: "new", Name: "eval", GPUs: 1, Partition: tc.partition, TimeLimit: 7200})
		if math.Abs(got.Seconds-tc.seconds) > 1e-9 || got.Known || got.Estimator != tc.estimator {
			t.Errorf("%s: %+v, want %g s by %s, not known", tc.name, got, tc.seconds, tc.estimator)
		}
	}
}

// TestEstimatorNamed: every estimate names what gave it, whichever
// predictor and fallback.
func TestEstimatorNamed(t *testing.T) {
	m := NewMean()
	f, err := NewForest(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	done := job.Job{ID: "1", User: "ann", Name: "train-1", GPUs: 1, RunTime: 600, Submit: 0, State: "COMPLETED"}
	if got := m.Predict(&job.Job{User: "ann", Name: "x"}).Estimator; got != prediction.ByDefault {
		t.Errorf("mean, nothing known: %q, want default", got)
	}
	if got := f.Predict(&job.Job{ID: "9", User: "ann", Name: "x", TimeLimit: 3600, Submit: 1}).Estimator; got != prediction.ByLimit {
		t.Errorf("forest, nothing known, a limit: %q, want limit", got)
	}
	m.Observe(&done, 600)
	f.Observe(&done, 600)
	for _, tc := range []struct {
		p    Predictor
		j    job.Job
		want prediction.Estimator
	}{
		{m, job.Job{ID: "2", User: "ann", Name: "train-2", Submit: 700}, prediction.ByGroup},
		{m, job.Job{ID: "3", User: "ann", Name: "eval", Submit: 700}, prediction.ByUser},
		{m, job.Job{ID: "4", User: "bob", Name: "eval", TimeLimit: 60, Submit: 700}, prediction.ByLimit},
		{f, job.Job{ID: "5", User: "ann", Name: "train-2", Submit: 700}, prediction.ByGroup}, // no model yet
		{f, job.Job{ID: "6", User: "ann", Name: "eval", Submit: 700}, prediction.ByUser},
		{f, job.Job{ID: "7", User: "bob", Name: "eval", Submit: 700}, prediction.ByPartition},
		{Oracle{}, job.Job{RunTime: 5}, prediction.ByOracle},
	} {
		if got := tc.p.Predict(&tc.j).Estimator; got != tc.want || !got.Valid() {
			t.Errorf("%s, job %+v: %q, want %q", tc.p.Name(), tc.j, got, tc.want)
		}
	}
}
