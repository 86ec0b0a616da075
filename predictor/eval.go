package predictor

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
)

// EvalConfig sets a time-split evaluation.
type EvalConfig struct {
	// Split is the share, in (0, 1), of finished jobs (in submit order)
	// that forms the training part (default 0.8).
	Split float64
	// Forests are the forest settings to evaluate, by name; nil evaluates
	// one "forest" with DefaultTrainConfig.
	Forests []NamedTrainConfig
}

// NamedTrainConfig is a forest setting under a report name.
type NamedTrainConfig struct {
	Name   string
	Config TrainConfig
}

// EvalReport is the result of Evaluate.
type EvalReport struct {
	// Jobs is the number of jobs given; Finished of them finished.
	Jobs     int `json:"jobs"`
	Finished int `json:"finished"`
	// Train is the number of training jobs: the first Split of the
	// finished jobs by submit time that also ended by CutTime.
	Train int `json:"train"`
	// Test is the number of test jobs: the finished jobs submitted at or
	// after CutTime.
	Test int `json:"test"`
	// CutTime is the submit time of the first test job, Unix seconds.
	CutTime    float64           `json:"cut_time"`
	Predictors []PredictorResult `json:"predictors"`
}

// PredictorResult holds one predictor's errors on the test jobs. Relative
// error is (predicted − true) / true; true run times below 1 s count as 1 s.
// The fields up to Histogram score the median output (Estimate.Fit: what
// fits a job into a hole); the Expected fields and Calibration score the
// expected-value output (Estimate.Seconds: what ranks jobs). A predictor
// with one number gives the same number to both.
type PredictorResult struct {
	Name string `json:"name"`
	// MAE is the mean absolute error, seconds.
	MAE float64 `json:"mae_s"`
	// MedianAbsErr is the median absolute error, seconds.
	MedianAbsErr float64 `json:"median_abs_err_s"`
	// MedianRelErr is the median of |relative error|.
	MedianRelErr float64 `json:"median_rel_err"`
	// Within10, Within25 and Within50 are the shares of test jobs with
	// |relative error| ≤ 10%, 25%, 50%.
	Within10 float64 `json:"within_10pct"`
	Within25 float64 `json:"within_25pct"`
	Within50 float64 `json:"within_50pct"`
	// Bias is the median of predicted/true.
	Bias float64 `json:"median_ratio"`
	// Known is the share of test jobs whose own group (as the predictor
	// defines it) had history.
	Known float64 `json:"known_share"`
	// Histogram counts test jobs by relative error.
	Histogram []Bucket `json:"histogram"`
	// MeanErr is the mean of (median output − true), seconds.
	MeanErr float64 `json:"mean_err_s"`
	// RMSE is the root mean squared error of the median output, seconds.
	RMSE float64 `json:"rmse_s"`
	// ExpectedMAE is the mean absolute error of the expected output,
	// seconds.
	ExpectedMAE float64 `json:"expected_mae_s"`
	// ExpectedRMSE is its root mean squared error, seconds (the error a
	// mean minimises).
	ExpectedRMSE float64 `json:"expected_rmse_s"`
	// ExpectedBias is the mean of (expected output − true), seconds: 0
	// for an unbiased expected value.
	ExpectedBias float64 `json:"expected_bias_s"`
	// ExpectedRatio is Σ expected output / Σ true run time (1 when
	// unbiased).
	ExpectedRatio float64 `json:"expected_sum_ratio"`
	// Calibration compares the expected output with the truth over
	// calBuckets equal-count buckets of test jobs by expected output.
	Calibration []CalBucket `json:"calibration"`
	// SEPTExpected is the total completion time of the test jobs run one
	// after another on one machine, shortest expected output first,
	// divided by that of the true shortest-first order (1 = perfect
	// ranking): what ranking by the expected output is for.
	SEPTExpected float64 `json:"sept_ratio_expected"`
	// SEPTMedian is the same ratio with the jobs ranked by the median
	// output.
	SEPTMedian float64 `json:"sept_ratio_median"`
	// Estimators splits the test jobs by what gave their prediction
	// (prediction.Estimator; "all" for the statistics over every job),
	// most jobs first, with the errors of the median output on each part.
	Estimators []EstimatorScore `json:"estimators"`
}

// EstimatorScore is the part of a predictor's test jobs that one
// estimator predicted: their count and share, and the MAE (seconds) and
// median |relative error| of the median output on them.
type EstimatorScore struct {
	Estimator    string  `json:"estimator"`
	Jobs         int     `json:"jobs"`
	Share        float64 `json:"share"`
	MAE          float64 `json:"mae_s"`
	MedianRelErr float64 `json:"median_rel_err"`
}

// CalBucket is a calibration bucket: the test jobs whose expected output
// is in [Lo, Hi] seconds (buckets hold equal counts, so ties may span
// two), with the mean of their expected outputs and of their true run
// times, seconds.
type CalBucket struct {
	Lo            float64 `json:"lo_s"`
	Hi            float64 `json:"hi_s"`
	Count         int     `json:"count"`
	MeanPredicted float64 `json:"mean_predicted_s"`
	MeanActual    float64 `json:"mean_actual_s"`
}

// calBuckets is the number of calibration buckets (deciles).
const calBuckets = 10

// Bucket is a histogram bucket: relative errors in (Lo, Hi] (the first
// bucket includes −1, the last +Inf; JSON gives ±Inf as ±1e308).
type Bucket struct {
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Count int     `json:"count"`
}

// bucketEdges are the relative-error histogram edges.
var bucketEdges = []float64{-1, -0.9, -0.5, -0.25, -0.1, 0.1, 0.25, 0.5, 1, 3, math.MaxFloat64}

// Evaluate runs a time-split evaluation of the forest and the baselines on
// jobs: the finished jobs are ordered by submit time (never shuffled); the
// first Split of them, restricted to those that ended (Submit + RunTime)
// by the first test job's submit time, train the forest; the rest are the
// test jobs. Features of every job, train or test, come from all the jobs
// that ended strictly before its submit (online history), so the
// baselines and the forest see the same history. Baselines:
//
//   - limit: the job's time limit (DefaultLimit when it has none);
//   - last: the last run of the (user, family) group, else of the user;
//   - family-median: the median of the group's last Window runs, else the
//     user's; its expected output is the mean run time of those runs
//     (MeanSeconds), what the online forest uses before its first
//     training;
//   - user-median: the median of the user's last Window runs, and their
//     mean run time as the expected output.
//
// The window predictors by name (OnlineNames: mean, mean-gpus) are
// scored as the replay and the sidecar run them (ByName): each test job is
// predicted once every finished job that ended strictly before its submit
// time has been observed, the same history as the rows'.
//
// The first forest is scored twice: as trained, for every test job, and
// as "forest-online", the rule the online predictor follows (online.go's
// Forest): the forest for a job whose (user, family) group has history,
// the fallback (the user's, then the partition's statistics, then the
// time limit) for the others. Each result splits its test jobs by the
// estimator that predicted them (Estimators).
//
// limit and last have one number, scored as both outputs. A baseline with
// no history for the job falls back to the partition's median and mean,
// then those over all jobs. Every history-based estimate, the forest's
// included, is capped at the job's time limit.
func Evaluate(jobs []job.Job, cfg EvalConfig) (*EvalReport, error) {
	if cfg.Split == 0 {
		cfg.Split = 0.8
	}
	if !(cfg.Split > 0 && cfg.Split < 1) {
		return nil, fmt.Errorf("evaluate: split %g not in (0, 1)", cfg.Split)
	}
	if cfg.Forests == nil {
		cfg.Forests = []NamedTrainConfig{{"forest", DefaultTrainConfig()}}
	}
	if err := Validate(jobs); err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	var fin []int
	for _, i := range SubmitOrder(jobs) {
		if Finished(&jobs[i]) {
			fin = append(fin, i)
		}
	}
	if len(fin) == 0 {
		return nil, fmt.Errorf("evaluate: %w", ErrNoFinished)
	}
	nTrain := int(cfg.Split * float64(len(fin)))
	if nTrain < 1 || nTrain >= len(fin) {
		return nil, fmt.Errorf("evaluate: %d finished jobs cannot be split %g into non-empty train and test parts", len(fin), cfg.Split)
	}
	cut := jobs[fin[nTrain]].Submit
	// Jobs submitted at the cut time belong to the test part.
	for nTrain > 0 && jobs[fin[nTrain-1]].Submit == cut {
		nTrain--
	}
	rows := BuildRows(jobs)
	var trRows []Row
	var trY []float64
	var trFailed []bool
	for _, i := range fin[:nTrain] {
		if End(&jobs[i]) <= cut {
			trRows = append(trRows, rows[i])
			trY = append(trY, logRun(jobs[i].RunTime))
			trFailed = append(trFailed, Failed(jobs[i].State))
		}
	}
	if len(trRows) == 0 {
		return nil, fmt.Errorf("evaluate: no training job ended before the first test job was submitted (%g)", cut)
	}
	test := fin[nTrain:]
	if len(test) == 0 {
		return nil, fmt.Errorf("evaluate: no test job")
	}
	rep := &EvalReport{Jobs: len(jobs), Finished: len(fin), Train: len(trRows), Test: len(test), CutTime: cut}
	teRows := make([]Row, len(test))
	truth := make([]float64, len(test))
	for k, i := range test {
		teRows[k] = rows[i]
		truth[k] = math.Max(1, jobs[i].RunTime)
	}
	knownGroup := make([]bool, len(test))
	for k := range test {
		knownGroup[k] = teRows[k].Group.Count > 0
	}
	for f, fc := range cfg.Forests {
		m, err := TrainRows(trRows, trY, trFailed, fc.Config)
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", fc.Name, err)
		}
		exp, med := m.PredictRowsBoth(teRows)
		by := make([]prediction.Estimator, len(test))
		for k, i := range test {
			e := capLimit(Estimate{Seconds: exp[k], Median: med[k]}, &jobs[i])
			exp[k], med[k], by[k] = e.Seconds, e.Median, prediction.ByForest
		}
		rep.Predictors = append(rep.Predictors, score(fc.Name, med, exp, truth, knownGroup, by))
		if f > 0 {
			continue
		}
		onExp, onMed, onBy := slices.Clone(exp), slices.Clone(med), slices.Clone(by)
		for k, i := range test {
			if !knownGroup[k] {
				e := capLimit(fallback(&jobs[i], &teRows[k]), &jobs[i])
				onExp[k], onMed[k], onBy[k] = e.Seconds, e.Fit(), e.Estimator
			}
		}
		rep.Predictors = append(rep.Predictors, score(fc.Name+"-online", onMed, onExp, truth, knownGroup, onBy))
	}
	base := func(name string, f func(j *job.Job, r *Row) Estimate) {
		med := make([]float64, len(test))
		exp := make([]float64, len(test))
		known := make([]bool, len(test))
		by := make([]prediction.Estimator, len(test))
		for k, i := range test {
			e := f(&jobs[i], &teRows[k])
			if e.Seconds <= 0 {
				e = withKnown(baseFallback(&jobs[i], &teRows[k]), e.Known)
			}
			if name != "limit" {
				e = capLimit(e, &jobs[i])
			}
			med[k], exp[k], known[k], by[k] = e.Fit(), e.Seconds, e.Known, e.Estimator
		}
		rep.Predictors = append(rep.Predictors, score(name, med, exp, truth, known, by))
	}
	base("limit", func(j *job.Job, _ *Row) Estimate { return Limit{}.Predict(j) })
	base("last", func(_ *job.Job, r *Row) Estimate {
		switch {
		case r.Group.Count > 0:
			return Estimate{Seconds: math.Exp(r.Group.Last), Known: true, Estimator: prediction.ByGroup}
		case r.User.Count > 0:
			return Estimate{Seconds: math.Exp(r.User.Last), Estimator: prediction.ByUser}
		}
		return Estimate{}
	})
	base("family-median", func(_ *job.Job, r *Row) Estimate {
		switch {
		case r.Group.Count > 0:
			return statsEstimate(&r.Group, true, prediction.ByGroup)
		case r.User.Count > 0:
			return statsEstimate(&r.User, false, prediction.ByUser)
		}
		return Estimate{}
	})
	base("user-median", func(_ *job.Job, r *Row) Estimate {
		if r.User.Count > 0 {
			return statsEstimate(&r.User, true, prediction.ByUser)
		}
		return Estimate{}
	})
	for _, name := range OnlineNames {
		p, err := ByName(name, DefaultConfig())
		if err != nil {
			return nil, fmt.Errorf("evaluate %s: %w", name, err)
		}
		rep.Predictors = append(rep.Predictors, scoreOnline(name, p, jobs, fin, test, truth))
	}
	return rep, nil
}

// OnlineNames are the predictors Evaluate scores by name, online: those
// that learn from every finished job as it ends and need no training.
var OnlineNames = []string{"mean", "mean-gpus"}

// scoreOnline scores p on the test jobs (indices into jobs, in submit
// order; truth their run times): before each is predicted, every finished
// job (fin, in submit order) that ended strictly before its submit time
// has been observed, in end order. Estimates are capped at the job's time
// limit, as the other predictors' are. Costs: O(n log n) for the end
// order, then one Observe per finished job and one Predict per test job.
func scoreOnline(name string, p Predictor, jobs []job.Job, fin, test []int, truth []float64) PredictorResult {
	byEnd := slices.Clone(fin)
	slices.SortStableFunc(byEnd, func(a, b int) int { return cmp.Compare(End(&jobs[a]), End(&jobs[b])) })
	med := make([]float64, len(test))
	exp := make([]float64, len(test))
	known := make([]bool, len(test))
	by := make([]prediction.Estimator, len(test))
	next := 0
	for k, i := range test {
		for ; next < len(byEnd) && End(&jobs[byEnd[next]]) < jobs[i].Submit; next++ {
			d := &jobs[byEnd[next]]
			p.Observe(d, End(d))
		}
		e := capLimit(p.Predict(&jobs[i]), &jobs[i])
		med[k], exp[k], known[k], by[k] = e.Fit(), e.Seconds, e.Known, e.Estimator
	}
	return score(name, med, exp, truth, known, by)
}

// baseFallback is the baselines' estimate without user history: partition
// median and mean, then those over all jobs, then the time limit.
func baseFallback(j *job.Job, r *Row) Estimate {
	switch {
	case r.Partition.Count > 0:
		return statsEstimate(&r.Partition, false, prediction.ByPartition)
	case r.All.Count > 0:
		return statsEstimate(&r.All, false, "")
	}
	return Limit{}.Predict(j)
}

// withKnown returns e with Known set to k.
func withKnown(e Estimate, k bool) Estimate { e.Known = k; return e }

// score computes a predictor's errors: pred is its median output, exp
// its expected output (seconds, by test job), by what gave each.
func score(name string, pred, exp, truth []float64, known []bool, by []prediction.Estimator) PredictorResult {
	n := len(pred)
	res := PredictorResult{Name: name}
	var se, seExp, sumExp, sumTrue float64
	for i := range pred {
		d := pred[i] - truth[i]
		res.MeanErr += d / float64(n)
		se += d * d
		de := exp[i] - truth[i]
		res.ExpectedMAE += math.Abs(de) / float64(n)
		res.ExpectedBias += de / float64(n)
		seExp += de * de
		sumExp += exp[i]
		sumTrue += truth[i]
	}
	res.RMSE, res.ExpectedRMSE = math.Sqrt(se/float64(n)), math.Sqrt(seExp/float64(n))
	res.ExpectedRatio = sumExp / sumTrue
	res.Calibration = calibrate(exp, truth)
	best := sequence(truth, truth)
	res.SEPTExpected, res.SEPTMedian = sequence(exp, truth)/best, sequence(pred, truth)/best
	absErr := make([]float64, n)
	rel := make([]float64, n)
	absRel := make([]float64, n)
	ratio := make([]float64, n)
	nk := 0
	for i := range pred {
		absErr[i] = math.Abs(pred[i] - truth[i])
		res.MAE += absErr[i] / float64(n)
		rel[i] = (pred[i] - truth[i]) / truth[i]
		absRel[i] = math.Abs(rel[i])
		ratio[i] = pred[i] / truth[i]
		if known[i] {
			nk++
		}
	}
	share := func(lim float64) float64 {
		c := 0
		for _, a := range absRel {
			if a <= lim+1e-12 {
				c++
			}
		}
		return float64(c) / float64(n)
	}
	res.Within10, res.Within25, res.Within50 = share(0.10), share(0.25), share(0.50)
	res.Known = float64(nk) / float64(n)
	slices.Sort(absErr)
	slices.Sort(absRel)
	slices.Sort(ratio)
	res.MedianAbsErr = quantileSorted(absErr, 0.5)
	res.MedianRelErr = quantileSorted(absRel, 0.5)
	res.Bias = quantileSorted(ratio, 0.5)
	for b := 0; b+1 < len(bucketEdges); b++ {
		res.Histogram = append(res.Histogram, Bucket{Lo: bucketEdges[b], Hi: bucketEdges[b+1]})
	}
	for _, r := range rel {
		b := 0
		for b+2 < len(bucketEdges) && r > bucketEdges[b+1] {
			b++
		}
		res.Histogram[b].Count++
	}
	res.Estimators = byEstimator(pred, truth, by)
	return res
}

// byEstimator splits the test jobs by estimator (empty: "all") and scores
// the median output pred on each part; most jobs first, then by name.
func byEstimator(pred, truth []float64, by []prediction.Estimator) []EstimatorScore {
	parts := map[string][]int{}
	for i, e := range by {
		name := string(e)
		if name == "" {
			name = "all"
		}
		parts[name] = append(parts[name], i)
	}
	out := make([]EstimatorScore, 0, len(parts))
	for name, idx := range parts {
		s := EstimatorScore{Estimator: name, Jobs: len(idx), Share: float64(len(idx)) / float64(len(pred))}
		rel := make([]float64, 0, len(idx))
		for _, i := range idx {
			s.MAE += math.Abs(pred[i]-truth[i]) / float64(len(idx))
			rel = append(rel, math.Abs(pred[i]-truth[i])/truth[i])
		}
		slices.Sort(rel)
		s.MedianRelErr = quantileSorted(rel, 0.5)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b EstimatorScore) int {
		if a.Jobs != b.Jobs {
			return b.Jobs - a.Jobs
		}
		return strings.Compare(a.Estimator, b.Estimator)
	})
	return out
}

// sequence returns the total completion time, seconds, of jobs with run
// times truth run back to back on one machine in increasing order of key
// (ties in index order).
func sequence(key, truth []float64) float64 {
	idx := make([]int, len(key))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(key[a], key[b]) })
	var t, total float64
	for _, i := range idx {
		t += truth[i]
		total += t
	}
	return total
}

// calibrate buckets the test jobs by expected output exp into calBuckets
// equal-count buckets (fewer when there are fewer jobs) and averages exp
// and truth in each.
func calibrate(exp, truth []float64) []CalBucket {
	n := len(exp)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(exp[a], exp[b]) })
	nb := min(calBuckets, n)
	out := make([]CalBucket, 0, nb)
	for b := 0; b < nb; b++ {
		lo, hi := b*n/nb, (b+1)*n/nb
		c := CalBucket{Lo: exp[idx[lo]], Hi: exp[idx[hi-1]], Count: hi - lo}
		for _, i := range idx[lo:hi] {
			c.MeanPredicted += exp[i]
			c.MeanActual += truth[i]
		}
		c.MeanPredicted /= float64(c.Count)
		c.MeanActual /= float64(c.Count)
		out = append(out, c)
	}
	return out
}

// WriteText writes the report as aligned tables: the errors of the median
// output per predictor, then the relative-error histogram (share of test
// jobs per bucket), then the errors of the expected output, then the
// test jobs by estimator, then the calibration of every forest's expected
// output.
func (r *EvalReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "jobs %d, finished %d, train %d, test %d (cut at %.0f)\n", r.Jobs, r.Finished, r.Train, r.Test, r.CutTime)
	fmt.Fprintln(tw, "predictor\tMAE s\tmedian abs err s\tmedian |rel err|\twithin 10%\twithin 25%\twithin 50%\tmedian pred/true\tknown\t")
	for _, p := range r.Predictors {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", p.Name, p.MAE, p.MedianAbsErr, p.MedianRelErr,
			p.Within10, p.Within25, p.Within50, p.Bias, p.Known)
	}
	fmt.Fprintln(tw)
	fmt.Fprint(tw, "rel err\t")
	if len(r.Predictors) > 0 {
		for _, b := range r.Predictors[0].Histogram {
			fmt.Fprintf(tw, "%s\t", bucketLabel(b))
		}
	}
	fmt.Fprintln(tw)
	for _, p := range r.Predictors {
		fmt.Fprintf(tw, "%s\t", p.Name)
		for _, b := range p.Histogram {
			fmt.Fprintf(tw, "%.3f\t", float64(b.Count)/float64(r.Test))
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "predictor\tmedian out: mean err s\tRMSE s\tSEPT ratio\texpected out: MAE s\tmean err s\tRMSE s\tΣpred/Σtrue\tSEPT ratio\t")
	for _, p := range r.Predictors {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t%.0f\t%.0f\t%.0f\t%.3f\t%.3f\t\n", p.Name, p.MeanErr, p.RMSE, p.SEPTMedian,
			p.ExpectedMAE, p.ExpectedBias, p.ExpectedRMSE, p.ExpectedRatio, p.SEPTExpected)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "predictor\testimator\tjobs\tshare\tMAE s\tmedian |rel err|\t")
	for _, p := range r.Predictors {
		for _, e := range p.Estimators {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.0f\t%.3f\t\n", p.Name, e.Estimator, e.Jobs, e.Share, e.MAE, e.MedianRelErr)
		}
	}
	for _, p := range r.Predictors {
		if !strings.HasPrefix(p.Name, "forest") {
			continue
		}
		fmt.Fprintln(tw)
		fmt.Fprintf(tw, "%s: expected output by decile\tfrom s\tto s\tjobs\tmean predicted s\tmean actual s\tactual/predicted\t\n", p.Name)
		for k, c := range p.Calibration {
			fmt.Fprintf(tw, "%d\t%.0f\t%.0f\t%d\t%.0f\t%.0f\t%.3f\t\n", k+1, c.Lo, c.Hi, c.Count, c.MeanPredicted, c.MeanActual, c.MeanActual/c.MeanPredicted)
		}
	}
	return tw.Flush()
}

func bucketLabel(b Bucket) string {
	pct := func(x float64) string { return fmt.Sprintf("%+.0f%%", 100*x) }
	if b.Hi >= math.MaxFloat64 {
		return ">" + pct(b.Lo)
	}
	return pct(b.Lo) + ".." + pct(b.Hi)
}
