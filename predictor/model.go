package predictor

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/asrpt/asrpt/job"
)

// TrainConfig sets how a Model is trained.
type TrainConfig struct {
	// Forest holds the forest's settings.
	Forest ForestParams
	// FailWeight is the training weight of a job that ended in a failure
	// state (see Failed), relative to 1 for the others: 1 treats all jobs
	// alike, 0 trains on COMPLETED/TIMEOUT jobs only. It weights the
	// median output only: the expected run time counts every job at weight
	// 1, since a job that may fail really runs only until it fails. The
	// group statistics still see every job.
	FailWeight float64
	// Residual makes the forest learn the difference between a job's log
	// run time and its baseline (Offset: the group median, else the
	// user's, partition's or all jobs' median) rather than the log run
	// time itself, so a tree that finds nothing to add predicts the
	// family median.
	Residual bool
}

// DefaultTrainConfig returns the settings measured best in README.md.
func DefaultTrainConfig() TrainConfig {
	p := DefaultForestParams()
	p.MinSamplesLeaf = 50
	return TrainConfig{Forest: p, FailWeight: 1, Residual: true}
}

// Model is a trained run-time model: the category encoder and the forest,
// whose outputs are a log run time in seconds (a median, or the quantile
// of ForestParams.Quantile) and an expected run time (the mean over trees
// of their leaves' expectations); with Residual both are relative to the
// job's baseline exp(Offset). Safe for concurrent prediction.
type Model struct {
	Encoder *Encoder
	Forest  *Ensemble
	// Config is what the model was trained with (recorded in the file).
	Config TrainConfig
	// TrainRows is the number of jobs it was trained on.
	TrainRows int
}

// Train validates jobs and trains a model on their finished jobs, each
// with the features BuildRows gives it (history strictly before its submit
// time).
func Train(jobs []job.Job, cfg TrainConfig) (*Model, error) {
	if err := Validate(jobs); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	rows := BuildRows(jobs)
	var tr []Row
	var y []float64
	var failed []bool
	for i := range jobs {
		if Finished(&jobs[i]) {
			tr = append(tr, rows[i])
			y = append(y, logRun(jobs[i].RunTime))
			failed = append(failed, Failed(jobs[i].State))
		}
	}
	if len(tr) == 0 {
		return nil, fmt.Errorf("train: %w", ErrNoFinished)
	}
	return TrainRows(tr, y, failed, cfg)
}

// TrainRows trains a model on rows with log run time targets y; failed[i]
// says whether row i ended in a failure state (nil: none did).
func TrainRows(rows []Row, y []float64, failed []bool, cfg TrainConfig) (*Model, error) {
	if len(y) != len(rows) || failed != nil && len(failed) != len(rows) {
		return nil, fmt.Errorf("train: %d rows, %d targets, %d failure flags", len(rows), len(y), len(failed))
	}
	tr := make([]trainRow, len(rows))
	for i := range rows {
		tr[i] = compact(&rows[i])
		tr[i].y = y[i]
		tr[i].failed = failed != nil && failed[i]
	}
	return trainCompact(tr, cfg)
}

// trainRow is what training keeps of a Row: its features, its Offset,
// whether any job had finished before it (else Offset is a guess), and
// (once the job has finished) its log run time and failure flag.
type trainRow struct {
	cat [NumCat]string
	// num holds the numeric features of schema 1, followed by the command
	// columns when the row has a command (Optional.columns): a trainRow
	// stays 128 bytes, the most a map keeps inline (Forest.rows; a larger
	// value is allocated on its own, 120 MB more in a 1M-job replay).
	num       []float64
	offset    float64
	y         float64
	failed    bool
	noHistory bool
}

func compact(r *Row) trainRow {
	num := r.Num
	var buf [numCommandCols]float64
	if cmd := r.Opt.columns(&buf); cmd != nil {
		num = append(append(make([]float64, 0, len(r.Num)+len(cmd)), r.Num...), cmd...)
	}
	return trainRow{cat: r.Cat, num: num, offset: Offset(r), noHistory: r.All.Count == 0}
}

// trainData keeps the feature matrix of trainCompact between trainings:
// the forest keeps only its bins' edges, and the online forest retrains
// often.
var trainData sync.Pool

// trainCompact trains a model on tr (targets and failure flags set).
func trainCompact(tr []trainRow, cfg TrainConfig) (*Model, error) {
	if len(tr) == 0 {
		return nil, fmt.Errorf("train: %w", ErrNoFinished)
	}
	if !(cfg.FailWeight >= 0) || math.IsInf(cfg.FailWeight, 0) {
		return nil, fmt.Errorf("train: fail weight %g is not a finite number ≥ 0", cfg.FailWeight)
	}
	y := make([]float64, len(tr))
	for i := range tr {
		y[i] = tr[i].y
		if cfg.Residual {
			y[i] -= tr[i].offset
		}
	}
	enc := fitEncoder(len(tr), func(i int) (*[NumCat]string, bool) { return &tr[i].cat, len(tr[i].num) > NumNum }, y)
	nf := enc.NumFeatures()
	var data []float64
	if d, ok := trainData.Get().(*[]float64); ok {
		data = *d
	}
	x := &Matrix{Rows: len(tr), Cols: nf, Data: slices.Grow(data[:0], len(tr)*nf)}
	defer func() { trainData.Put(&x.Data) }()
	for i := range tr {
		num, cmd := tr[i].num, []float64(nil)
		if len(num) > NumNum {
			num, cmd = num[:NumNum], num[NumNum:]
		}
		x.Data = enc.encode(x.Data, &tr[i].cat, num, cmd)
	}
	var w []float64
	if cfg.FailWeight != 1 {
		w = make([]float64, len(tr))
		someOK := false
		for i := range w {
			w[i] = 1
			if tr[i].failed {
				w[i] = cfg.FailWeight
			} else {
				someOK = true
			}
		}
		if !someOK {
			// Only failures: learn from them rather than from nothing.
			w = nil
		}
	}
	// The expected output: every job counts (see FailWeight). Without
	// Residual, a leaf holds the mean run time in seconds of its jobs.
	// With it, a leaf holds Σ run time / Σ baseline (exp(Offset)) over its
	// jobs: the ratio z = run/baseline weighted by the baseline, so that
	// the expected run time is the job's baseline times a ratio estimated
	// mostly from the long jobs, and a tree that finds nothing gives the
	// family median times the mean/median ratio of the jobs. A job with
	// no history at all (its baseline is DefaultLimit, a guess) does not
	// count. README.md compares this with a plain mean of seconds and a
	// plain mean ratio.
	ex := Expectation{Z: make([]float64, len(tr))}
	if cfg.Residual {
		ex.W = make([]float64, len(tr))
	}
	for i := range tr {
		run := math.Exp(tr[i].y)
		ex.Z[i] = run
		if cfg.Residual {
			base := math.Exp(tr[i].offset)
			ex.Z[i], ex.W[i] = run/base, base
			if tr[i].noHistory {
				ex.W[i] = 0
			}
		}
	}
	f, err := FitBoth(x, y, w, ex, cfg.Forest)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return &Model{Encoder: enc, Forest: f, Config: cfg, TrainRows: len(tr)}, nil
}

// Predict returns the predicted median run time of the job with features
// r, in seconds (at least 1).
func (m *Model) Predict(r *Row) float64 {
	var buf [64]float64
	x := m.Encoder.Encode(buf[:0], r)
	v := m.Forest.Predict(x)
	if m.Config.Residual {
		v += Offset(r)
	}
	return math.Max(1, math.Exp(v))
}

// PredictBoth returns the expected and the median run time of the job
// with features r, in seconds (each at least 1); median is what Predict
// returns.
func (m *Model) PredictBoth(r *Row) (expected, median float64) {
	var buf [64]float64
	x := m.Encoder.Encode(buf[:0], r)
	v, mean := m.Forest.PredictBoth(x)
	return m.seconds(r, v, mean)
}

// seconds turns the forest's outputs for r into seconds: the median from
// the log output v, the expected value from the expectation mean.
func (m *Model) seconds(r *Row, v, mean float64) (expected, median float64) {
	if m.Config.Residual {
		off := Offset(r)
		v += off
		mean *= math.Exp(off)
	}
	return math.Max(1, mean), math.Max(1, math.Exp(v))
}

// MinCommandRuns is the number of finished runs of a job's command
// (job.Command) in its (user, family) group from which their median is
// the job's baseline (Offset) instead of the whole group's: the median of
// three runs is the first that one outlier does not move.
const MinCommandRuns = 3

// Offset is the baseline log run time of a job with features r: the
// median of its group's runs of its command once there are MinCommandRuns
// of them (only histories that carry commands have any), else the median
// of its (user, family) group, else of its user, partition, or all jobs,
// else log(DefaultLimit).
func Offset(r *Row) float64 {
	if r.Opt.Cmd.Count >= MinCommandRuns {
		return r.Opt.Cmd.Median
	}
	for _, s := range []*GroupStats{&r.Group, &r.User, &r.Partition, &r.All} {
		if s.Count > 0 {
			return s.Median
		}
	}
	return math.Log(DefaultLimit)
}

// PredictRows predicts the median run time of every row, in seconds (at
// least 1), using all cores; the result does not depend on their number
// and equals Predict's.
func (m *Model) PredictRows(rows []Row) []float64 {
	out := make([]float64, len(rows))
	m.Forest.PredictBatch(m.matrix(rows), out, 0)
	for i, v := range out {
		if m.Config.Residual {
			v += Offset(&rows[i])
		}
		out[i] = math.Max(1, math.Exp(v))
	}
	return out
}

// PredictRowsBoth returns the expected and the median run times of every
// row, in seconds (at least 1), as PredictBoth gives them, using all cores.
func (m *Model) PredictRowsBoth(rows []Row) (expected, median []float64) {
	median = make([]float64, len(rows))
	expected = make([]float64, len(rows))
	m.Forest.PredictBatchBoth(m.matrix(rows), median, expected, 0)
	for i := range rows {
		expected[i], median[i] = m.seconds(&rows[i], median[i], expected[i])
	}
	return expected, median
}

// matrix encodes rows into a feature matrix.
func (m *Model) matrix(rows []Row) *Matrix {
	nf := m.Encoder.NumFeatures()
	x := &Matrix{Rows: len(rows), Cols: nf, Data: make([]float64, 0, len(rows)*nf)}
	for i := range rows {
		x.Data = m.Encoder.Encode(x.Data, &rows[i])
	}
	return x
}
