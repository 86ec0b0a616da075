package predictor

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// replay drives p like the simulator: Predict at each submit, Observe at
// each end (Submit + RunTime), in time order (ends before submits at equal
// times), and returns the estimates by job index.
func replay(p Predictor, jobs []job.Job) []Estimate {
	type ev struct {
		t   float64
		end bool
		i   int
	}
	var evs []ev
	for i := range jobs {
		evs = append(evs, ev{jobs[i].Submit, false, i}, ev{End(&jobs[i]), true, i})
	}
	slices.SortStableFunc(evs, func(a, b ev) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if a.end != b.end {
			if a.end {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.i, b.i)
	})
	out := make([]Estimate, len(jobs))
	for _, e := range evs {
		if e.end {
			p.Observe(&jobs[e.i], e.t)
		} else {
			out[e.i] = p.Predict(&jobs[e.i])
		}
	}
	return out
}

func smallOnline() Config {
	c := DefaultConfig()
	c.Train.Forest.Trees, c.Train.Forest.MinSamplesLeaf = 10, 5
	c.RetrainEvery, c.MinTrainJobs = 6*3600, 50
	return c
}

func TestForestOnline(t *testing.T) {
	jobs := recurring(1500, 4)
	f, err := NewForest(smallOnline())
	if err != nil {
		t.Fatal(err)
	}
	est := replay(f, jobs)
	if f.Trainings() < 2 {
		t.Fatalf("trained %d times, want retraining", f.Trainings())
	}
	// The same calls give the same answers.
	g, _ := NewForest(smallOnline())
	if again := replay(g, jobs); !slices.Equal(est, again) {
		t.Fatal("two replays of the same trace differ")
	}
	// The online features equal the offline ones (no leakage either way).
	rows := BuildRows(jobs)
	var errForest, errLimit float64
	for i := range jobs {
		if est[i].Known != (rows[i].Group.Count > 0) {
			t.Fatalf("job %d: Known=%v with %d group runs", i, est[i].Known, rows[i].Group.Count)
		}
		if est[i].Seconds <= 0 || est[i].Seconds > jobs[i].TimeLimit {
			t.Fatalf("job %d: estimate %g outside (0, limit %g]", i, est[i].Seconds, jobs[i].TimeLimit)
		}
		if i > len(jobs)/2 {
			errForest += math.Abs(est[i].Seconds - jobs[i].RunTime)
			errLimit += math.Abs(jobs[i].TimeLimit - jobs[i].RunTime)
		}
	}
	if errForest > errLimit/10 {
		t.Errorf("forest error %g not well below the time limit's %g", errForest, errLimit)
	}
}

func TestForestFallback(t *testing.T) {
	f, _ := NewForest(smallOnline())
	seen := &job.Job{ID: "1", User: "alice", Name: "a-run1", Partition: "gpu", Submit: 0, RunTime: 100, State: "COMPLETED"}
	f.Predict(seen)
	f.Observe(seen, 100)
	for _, tc := range []struct {
		name  string
		j     job.Job
		known bool
		want  float64
	}{
		{"same group", job.Job{ID: "2", User: "alice", Name: "a-run2", Submit: 200}, true, 100},
		{"same group, capped at limit", job.Job{ID: "3", User: "alice", Name: "a-run3", Submit: 200, TimeLimit: 60}, true, 60},
		{"user known", job.Job{ID: "4", User: "alice", Name: "b", Submit: 200}, false, 100},
		{"partition known", job.Job{ID: "5", User: "bob", Partition: "gpu", Submit: 200}, false, 100},
		{"time limit", job.Job{ID: "6", User: "bob", Partition: "cpu", Submit: 200, TimeLimit: 500}, false, 500},
		{"nothing", job.Job{ID: "7", User: "bob", Partition: "cpu", Submit: 200}, false, DefaultLimit},
		// Finished at 100, not before 100: not yet history.
		{"ends at submit", job.Job{ID: "8", User: "alice", Name: "a", Submit: 100}, false, 0},
	} {
		if tc.name == "ends at submit" {
			g, _ := NewForest(smallOnline())
			g.Observe(seen, 100)
			if e := g.Predict(&tc.j); e.Known {
				t.Errorf("%s: a job that ended at the submit time counted as history", tc.name)
			}
			continue
		}
		e := f.Predict(&tc.j)
		if e.Known != tc.known || math.Abs(e.Seconds-tc.want) > 1e-9 {
			t.Errorf("%s: %+v, want {%g %v}", tc.name, e, tc.want, tc.known)
		}
	}
}

func TestByName(t *testing.T) {
	for _, n := range Names() {
		p, err := ByName(n, Config{})
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if p.Name() != n {
			t.Errorf("ByName(%q).Name() = %q", n, p.Name())
		}
	}
	if _, err := ByName("oracle2", Config{}); err == nil || !strings.Contains(err.Error(), "known: oracle, limit, mean, mean-gpus, mean-gpus-running, forest") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := ByName("forest", Config{RetrainEvery: -1}); err == nil {
		t.Error("negative retrain interval accepted")
	}
}

func TestEvaluate(t *testing.T) {
	jobs := recurring(2000, 6)
	cfg := DefaultTrainConfig()
	cfg.Forest.Trees = 20
	rep, err := Evaluate(jobs, EvalConfig{Split: 0.75, Forests: []NamedTrainConfig{{"forest", cfg}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Test < 400 || rep.Train < 1000 {
		t.Fatalf("train %d, test %d", rep.Train, rep.Test)
	}
	by := map[string]PredictorResult{}
	for _, p := range rep.Predictors {
		by[p.Name] = p
		n := 0
		for _, b := range p.Histogram {
			n += b.Count
		}
		if n != rep.Test {
			t.Errorf("%s: histogram holds %d jobs, want %d", p.Name, n, rep.Test)
		}
		if !(p.Within10 <= p.Within25 && p.Within25 <= p.Within50) {
			t.Errorf("%s: within shares not monotone", p.Name)
		}
		n = 0
		for k, c := range p.Calibration {
			n += c.Count
			if c.Lo > c.Hi || k > 0 && c.Lo < p.Calibration[k-1].Hi || !(c.MeanPredicted >= c.Lo && c.MeanPredicted <= c.Hi) {
				t.Errorf("%s: calibration bucket %d: %+v", p.Name, k, c)
			}
		}
		if len(p.Calibration) != calBuckets || n != rep.Test {
			t.Errorf("%s: %d calibration buckets hold %d jobs, want %d and %d", p.Name, len(p.Calibration), n, calBuckets, rep.Test)
		}
		if !(p.ExpectedMAE > 0 && p.ExpectedRMSE >= p.ExpectedMAE && p.RMSE >= p.MAE && p.ExpectedRatio > 0) {
			t.Errorf("%s: expected-output errors %+v", p.Name, p)
		}
		if !(p.SEPTExpected >= 1 && p.SEPTMedian >= 1) {
			t.Errorf("%s: SEPT ratios %g, %g below the true order's", p.Name, p.SEPTExpected, p.SEPTMedian)
		}
		t.Logf("%s: SEPT ratio %.3f by expected output, %.3f by median", p.Name, p.SEPTExpected, p.SEPTMedian)
		// The estimators split the test jobs, and their MAEs average to
		// the predictor's.
		n, share, mae := 0, 0.0, 0.0
		for _, e := range p.Estimators {
			n += e.Jobs
			share += e.Share
			mae += e.MAE * float64(e.Jobs) / float64(rep.Test)
			if e.Estimator == "" || e.Jobs == 0 {
				t.Errorf("%s: estimator part %+v", p.Name, e)
			}
		}
		if n != rep.Test || math.Abs(share-1) > 1e-9 || math.Abs(mae-p.MAE) > 1e-6*p.MAE {
			t.Errorf("%s: estimators hold %d jobs (share %g, MAE %g), want %d (1, %g)", p.Name, n, share, mae, rep.Test, p.MAE)
		}
	}
	// forest-online is the forest where the group has history and the
	// fallback elsewhere; family-median is the group's median there.
	online, fm := by["forest-online"], by["family-median"]
	parts := func(p PredictorResult) map[string]int {
		m := map[string]int{}
		for _, e := range p.Estimators {
			m[e.Estimator] = e.Jobs
		}
		return m
	}
	known := int(math.Round(fm.Known * float64(rep.Test)))
	if po, pf := parts(online), parts(fm); po["forest"] != known || pf["group"] != known || parts(by["forest"])["forest"] != rep.Test ||
		po["forest"]+po["user"]+po["partition"]+po["limit"]+po["default"] != rep.Test {
		t.Errorf("forest-online %v, family-median %v, forest %v; %d of %d test jobs have group history", po, pf, parts(by["forest"]), known, rep.Test)
	}
	// The runs here are skewed left (20% fail early): the median output
	// overestimates on average, the expected output much less.
	fo := by["forest"]
	t.Logf("forest: median output mean error %.0f s, expected output %.0f s (Σ ratio %.3f)", fo.MeanErr, fo.ExpectedBias, fo.ExpectedRatio)
	if !(fo.MeanErr > 0 && math.Abs(fo.ExpectedBias) < fo.MeanErr/2 && math.Abs(fo.ExpectedRatio-1) < 0.1) {
		t.Errorf("forest: median output mean error %g s, expected output %g s (Σ ratio %g)", fo.MeanErr, fo.ExpectedBias, fo.ExpectedRatio)
	}
	if l := by["limit"]; l.ExpectedMAE != l.MAE || l.ExpectedBias != l.MeanErr {
		t.Errorf("limit has one number, scored differently as median (%g, %g) and expected (%g, %g)", l.MAE, l.MeanErr, l.ExpectedMAE, l.ExpectedBias)
	}
	for _, n := range []string{"forest", "forest-online", "limit", "last", "family-median", "user-median", "mean", "mean-gpus"} {
		if _, ok := by[n]; !ok {
			t.Fatalf("no result for %s", n)
		}
	}
	// On this workload families have distinct run times: history beats the
	// limit by far, and the forest does at least as well as the user median.
	if by["forest"].MAE > by["user-median"].MAE || by["family-median"].MAE > by["limit"].MAE/5 {
		t.Errorf("MAE forest %g, user median %g, family median %g, limit %g", by["forest"].MAE, by["user-median"].MAE,
			by["family-median"].MAE, by["limit"].MAE)
	}
	var sb strings.Builder
	if err := rep.WriteText(&sb); err != nil || !strings.Contains(sb.String(), "family-median") || !strings.Contains(sb.String(), "forest: expected output by decile") ||
		!strings.Contains(sb.String(), "median |rel err|") {
		t.Errorf("text report: %v\n%s", err, sb.String())
	}
	if _, err := Evaluate(jobs[:1], EvalConfig{}); err == nil {
		t.Error("a single job was split")
	}
	if _, err := Evaluate(jobs, EvalConfig{Split: 1.5}); err == nil {
		t.Error("split 1.5 accepted")
	}
}

// historyRecorder is a Predictor that records, per job predicted, the
// jobs observed before it, in order.
type historyRecorder struct {
	seen []string
	at   map[string][]string
}

func (h *historyRecorder) Name() string { return "recorder" }
func (h *historyRecorder) Predict(j *job.Job) Estimate {
	h.at[j.ID] = slices.Clone(h.seen)
	return Estimate{Seconds: 100, Median: 100, Known: true}
}
func (h *historyRecorder) Repredict(j *job.Job, _ float64) Estimate { return h.Predict(j) }
func (h *historyRecorder) Observe(j *job.Job, end float64) {
	if end != End(j) {
		panic("observed at another time than its end")
	}
	h.seen = append(h.seen, j.ID)
}

// TestScoreOnlineHistory: a window predictor scored by name sees, before
// each test job, exactly the finished jobs that ended strictly before its
// submit time, in end order; never the job itself or a later one.
func TestScoreOnlineHistory(t *testing.T) {
	jobs := []job.Job{
		{ID: "a", Submit: 0, RunTime: 60, State: "COMPLETED"},  // ends 60
		{ID: "b", Submit: 10, RunTime: 40, State: "COMPLETED"}, // ends 50
		{ID: "c", Submit: 50, RunTime: 10, State: "COMPLETED"}, // ends 60; b ended at 50, not before
		{ID: "d", Submit: 60, RunTime: 500, State: "FAILED"},   // ends 560; b is history, a and c ended at 60
		{ID: "e", Submit: 61, RunTime: 5, State: "COMPLETED"},  // ends 66
		{ID: "f", Submit: 70, RunTime: 5, State: "COMPLETED"},
	}
	fin := []int{0, 1, 2, 3, 4, 5}
	test := []int{2, 3, 4, 5}
	truth := []float64{10, 500, 5, 5}
	h := &historyRecorder{at: map[string][]string{}}
	res := scoreOnline("recorder", h, jobs, fin, test, truth)
	want := map[string][]string{"c": nil, "d": {"b"}, "e": {"b", "a", "c"}, "f": {"b", "a", "c", "e"}}
	for id, w := range want {
		if !slices.Equal(h.at[id], w) {
			t.Errorf("job %s predicted after %v, want %v", id, h.at[id], w)
		}
	}
	// Every prediction is 100 s: MAE over |100-10|, |100-500|, |100-5|, |100-5|.
	if res.Name != "recorder" || math.Abs(res.MAE-(90+400+95+95)/4.0) > 1e-9 || res.Known != 1 {
		t.Errorf("result %+v", res)
	}
}

func TestForestTrainingWindow(t *testing.T) {
	jobs := recurring(1500, 5)
	for _, tc := range []struct {
		name    string
		maxRows int
	}{{"window smaller than history", 120}, {"window larger than history", 5000}} {
		cfg := smallOnline()
		cfg.MaxTrainRows = tc.maxRows
		f, err := NewForest(cfg)
		if err != nil {
			t.Fatal(err)
		}
		replay(f, jobs)
		st := f.Stats()
		if st.Trainings < 2 {
			t.Fatalf("%s: %d trainings", tc.name, st.Trainings)
		}
		if len(f.train) > tc.maxRows {
			t.Errorf("%s: %d training rows kept, cap %d", tc.name, len(f.train), tc.maxRows)
		}
		if st.TrainRows > st.Trainings*tc.maxRows || st.TrainRows < st.Trainings*cfg.MinTrainJobs {
			t.Errorf("%s: %d rows over %d trainings, want %d..%d each", tc.name, st.TrainRows, st.Trainings, cfg.MinTrainJobs, tc.maxRows)
		}
		if !(st.TrainSeconds > 0) {
			t.Errorf("%s: training time %g s", tc.name, st.TrainSeconds)
		}
		if len(f.rows) != 0 {
			t.Errorf("%s: %d predicted jobs still held after all finished", tc.name, len(f.rows))
		}
	}
	// The ring keeps the newest rows: with a window of 120 the last
	// training's rows are the last 120 finished predicted jobs.
	cfg := smallOnline()
	cfg.MaxTrainRows = 120
	f, _ := NewForest(cfg)
	replay(f, jobs)
	ends := make([]float64, 0, len(jobs))
	for i := range jobs {
		if Finished(&jobs[i]) {
			ends = append(ends, End(&jobs[i]))
		}
	}
	slices.Sort(ends)
	var ys, want []float64
	for _, r := range f.train {
		ys = append(ys, r.y)
	}
	byEnd := slices.Clone(jobs)
	slices.SortStableFunc(byEnd, func(a, b job.Job) int { return cmp.Compare(End(&a), End(&b)) })
	for _, j := range byEnd[len(byEnd)-120:] {
		want = append(want, logRun(j.RunTime))
	}
	slices.Sort(ys)
	slices.Sort(want)
	if !slices.Equal(ys, want) {
		t.Error("the training window does not hold the last 120 finished jobs")
	}
}

func TestForestForgetsUnfinished(t *testing.T) {
	f, _ := NewForest(smallOnline())
	j := &job.Job{ID: "1", User: "u", Name: "n", Submit: 10, State: "CANCELLED"} // run time 0: never ran
	f.Predict(j)
	f.Observe(j, 10)
	if len(f.rows) != 0 || len(f.pending) != 0 || len(f.train) != 0 {
		t.Errorf("a job that never ran is kept: %d rows, %d pending, %d training", len(f.rows), len(f.pending), len(f.train))
	}
	if e := f.Predict(&job.Job{ID: "2", User: "u", Name: "n", Submit: 20}); e.Known {
		t.Error("a job that never ran became history")
	}
}

// BenchmarkForestPredict measures one online Predict (features from the
// history, then the 24-tree model's two outputs) after a history of n
// finished jobs with a trained model, in rows/s and µs/row: its cost must
// not grow with n (group statistics are kept incrementally, never
// recomputed).
func BenchmarkForestPredict(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			jobs := recurring(n+1000, 8)
			f, err := NewForest(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			replay(f, jobs[:n])
			if f.Trainings() == 0 {
				b.Fatal("no model trained")
			}
			probe := jobs[n:]
			last := probe[len(probe)-1].Submit
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := probe[i%len(probe)]
				j.ID = "" // not remembered
				j.Submit = last
				f.Predict(&j)
			}
			reportRows(b, b.N)
		})
	}
}

// skewed returns n jobs of one user alternating two families: "right"
// runs are log-normal (σ = 1, median 600 s: mean e^0.5 ≈ 1.65 × median),
// "left" runs take about 1,000 s but 30% fail after 10 s (mean ≈ 703 s,
// below the median).
func skewed(n int, seed uint64) []job.Job {
	rng := rand.New(rand.NewPCG(seed, 9))
	jobs := make([]job.Job, n)
	for i := range jobs {
		j := job.Job{ID: fmt.Sprint(i + 1), User: "u", Partition: "gpu", Submit: 1.7e9 + 300*float64(i), GPUs: 1, Nodes: 1,
			TimeLimit: 86400, State: "COMPLETED"}
		if i%2 == 0 {
			j.Name = "right"
			j.RunTime = math.Round(600 * math.Exp(rng.NormFloat64()))
		} else {
			j.Name = "left"
			j.RunTime = math.Round(1000 * math.Exp(0.05*rng.NormFloat64()))
			if rng.Float64() < 0.3 {
				j.RunTime, j.State = 10, "FAILED"
			}
		}
		j.RunTime = min(max(j.RunTime, 1), j.TimeLimit)
		jobs[i] = j
	}
	return jobs
}

// TestForestBothOutputs checks that the online forest's expected value
// lies above its median where run times are skewed right and below where
// failures skew them left, before the first training (group statistics)
// and after (the model), and that Repredict gives both outputs too.
func TestForestBothOutputs(t *testing.T) {
	jobs := skewed(1600, 1)
	cfg := smallOnline()
	// Leaves of 50 as in the defaults: leaves of 5 overfit the i.i.d.
	// failures and put the median of some jobs at the failures' 10 s.
	cfg.Train.Forest.MinSamplesLeaf = 50
	f, err := NewForest(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ n, ok int }
	count := map[string]*tally{}
	trainedAt := -1
	for i := range jobs {
		j := &jobs[i]
		// Observe every job that ended by this submit, then predict.
		for k := 0; k < i; k++ {
			if e := End(&jobs[k]); e <= j.Submit && e > jobs[i-1].Submit {
				f.Observe(&jobs[k], e)
			}
		}
		before := f.Trainings() == 0
		if !before && trainedAt < 0 {
			trainedAt = i
		}
		e := f.Predict(j)
		if !e.Known || !(e.Median > 0) || !(e.Seconds > 0) {
			continue
		}
		if r := f.Repredict(j, j.Submit+60); !(r.Median > 0) || !(r.Seconds > 0) || !r.Known {
			t.Fatalf("job %d: Repredict %+v", i, r)
		}
		phase := "trained"
		if before {
			phase = "untrained"
		}
		key := phase + "/" + j.Name
		if count[key] == nil {
			count[key] = &tally{}
		}
		c := count[key]
		c.n++
		if (j.Name == "right") == (e.Seconds > e.Median) {
			c.ok++
		}
	}
	if trainedAt < 0 || f.Trainings() < 3 {
		t.Fatalf("%d trainings", f.Trainings())
	}
	for _, key := range []string{"untrained/right", "untrained/left", "trained/right", "trained/left"} {
		c := count[key]
		if c == nil || c.n < 10 {
			t.Fatalf("%s: too few known estimates (%v)", key, c)
		}
		t.Logf("%s: expected value on the skewed side of the median in %d of %d estimates", key, c.ok, c.n)
		if float64(c.ok) < 0.9*float64(c.n) {
			t.Errorf("%s: expected value on the skewed side of the median in %d of %d estimates", key, c.ok, c.n)
		}
	}
}

func TestForestCapsBoth(t *testing.T) {
	f, _ := NewForest(smallOnline())
	for i, rt := range []float64{100, 100, 10000} {
		j := &job.Job{ID: fmt.Sprint(i), User: "alice", Name: "a", Partition: "gpu", Submit: float64(i), RunTime: rt, State: "COMPLETED"}
		f.Predict(j)
		f.Observe(j, float64(i)+rt)
	}
	at := 20000.0
	for _, tc := range []struct {
		name           string
		j              job.Job
		known          bool
		seconds, media float64
	}{
		{"group: mean and median", job.Job{User: "alice", Name: "a", Submit: at}, true, 3400, 100},
		{"group, limit between median and mean", job.Job{User: "alice", Name: "a", Submit: at, TimeLimit: 1000}, true, 1000, 100},
		{"group, limit below both", job.Job{User: "alice", Name: "a", Submit: at, TimeLimit: 50}, true, 50, 50},
		{"user fallback", job.Job{User: "alice", Name: "b", Submit: at}, false, 3400, 100},
		{"partition fallback", job.Job{User: "bob", Name: "b", Partition: "gpu", Submit: at}, false, 3400, 100},
		{"time limit only: one number", job.Job{User: "bob", Partition: "cpu", Submit: at, TimeLimit: 500}, false, 500, 0},
		{"nothing: one number", job.Job{User: "bob", Partition: "cpu", Submit: at}, false, DefaultLimit, 0},
	} {
		e := f.Predict(&tc.j)
		if e.Known != tc.known || math.Abs(e.Seconds-tc.seconds) > 1e-6 || math.Abs(e.Median-tc.media) > 1e-6 {
			t.Errorf("%s: %+v, want {Seconds: %g, Median: %g, Known: %v}", tc.name, e, tc.seconds, tc.media, tc.known)
		}
		if r := f.Repredict(&tc.j, at+10); r != e {
			t.Errorf("%s: Repredict %+v, Predict %+v", tc.name, r, e)
		}
	}
	// capLimit keeps both at least 1 s and leaves "no median" alone.
	for _, tc := range []struct{ in, want Estimate }{
		{Estimate{Seconds: 0.2, Median: 0.5}, Estimate{Seconds: 1, Median: 1}},
		{Estimate{Seconds: 0.2}, Estimate{Seconds: 1}},
		{Estimate{Seconds: 5000, Median: 7000, Known: true}, Estimate{Seconds: 3600, Median: 3600, Known: true}},
	} {
		if got := capLimit(tc.in, &job.Job{TimeLimit: 3600}); got != tc.want {
			t.Errorf("capLimit(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestSequenceAndCalibrate(t *testing.T) {
	truth := []float64{1, 2, 3}
	for _, tc := range []struct {
		name string
		key  []float64
		want float64
	}{
		{"true order", []float64{1, 2, 3}, 1 + 3 + 6},
		{"reversed", []float64{3, 2, 1}, 3 + 5 + 6},
		{"ties in index order", []float64{5, 5, 5}, 1 + 3 + 6},
		{"middle first", []float64{2, 1, 3}, 2 + 3 + 6},
	} {
		if got := sequence(tc.key, truth); got != tc.want {
			t.Errorf("%s: total completion time %g, want %g", tc.name, got, tc.want)
		}
	}
	exp := []float64{10, 1, 5, 7, 3}
	act := []float64{20, 1, 5, 9, 3}
	c := calibrate(exp, act)
	if len(c) != 5 || c[0] != (CalBucket{Lo: 1, Hi: 1, Count: 1, MeanPredicted: 1, MeanActual: 1}) ||
		c[4] != (CalBucket{Lo: 10, Hi: 10, Count: 1, MeanPredicted: 10, MeanActual: 20}) {
		t.Errorf("calibration of five jobs: %+v", c)
	}
	many := make([]float64, 95)
	for i := range many {
		many[i] = float64(95 - i)
	}
	n := 0
	for k, b := range calibrate(many, many) {
		n += b.Count
		if b.Count < 9 || b.Count > 10 || b.MeanPredicted != b.MeanActual || k > 0 && b.Lo <= calibrate(many, many)[k-1].Hi {
			t.Errorf("bucket %d: %+v", k, b)
		}
	}
	if n != 95 {
		t.Errorf("buckets hold %d jobs, want 95", n)
	}
}

// BenchmarkWindowPredict measures one Predict of the window predictors
// (mean and mean-gpus, the default) after a history of 20,000 finished
// jobs, in rows/s and µs/row: a few map lookups, no allocation.
func BenchmarkWindowPredict(b *testing.B) {
	for _, m := range []*Mean{NewMean(), NewMeanByGPUs()} {
		b.Run(m.Name(), func(b *testing.B) {
			jobs := recurring(21000, 8)
			replay(m, jobs[:20000])
			probe := jobs[20000:]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Predict(&probe[i%len(probe)])
			}
			reportRows(b, b.N)
		})
	}
}
