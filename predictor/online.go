package predictor

import (
	"fmt"
	"math"

	"github.com/asrpt/asrpt/job"
)

// Config sets the predictors that ByName builds.
type Config struct {
	// Train is how the forest is trained.
	Train TrainConfig
	// RetrainEvery is the simulated time, in seconds, between two
	// trainings of the online forest (default one day). Time is measured
	// by the end argument of Observe.
	RetrainEvery float64
	// MinTrainJobs is the least number of finished, predicted jobs before
	// the first training (default 200).
	MinTrainJobs int
	// MaxTrainRows caps the training set at the most recent finished jobs
	// (default 200,000).
	MaxTrainRows int
}

// DefaultConfig returns the defaults described in Config.
func DefaultConfig() Config {
	return Config{Train: DefaultTrainConfig(), RetrainEvery: 86400, MinTrainJobs: 200, MaxTrainRows: 200000}
}

func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.Train == (TrainConfig{}) {
		c.Train = d.Train
	}
	if c.RetrainEvery == 0 {
		c.RetrainEvery = d.RetrainEvery
	}
	if c.MinTrainJobs == 0 {
		c.MinTrainJobs = d.MinTrainJobs
	}
	if c.MaxTrainRows == 0 {
		c.MaxTrainRows = d.MaxTrainRows
	}
	switch {
	case !(c.RetrainEvery > 0) || math.IsInf(c.RetrainEvery, 0):
		return c, fmt.Errorf("predictor: retrain interval %g s is not a positive number", c.RetrainEvery)
	case c.MinTrainJobs < 1:
		return c, fmt.Errorf("predictor: min train jobs %d < 1", c.MinTrainJobs)
	case c.MaxTrainRows < c.MinTrainJobs:
		return c, fmt.Errorf("predictor: max train rows %d < min train jobs %d", c.MaxTrainRows, c.MinTrainJobs)
	}
	if _, err := c.Train.Forest.withDefaults(NumCat + NumNum); err != nil {
		return c, fmt.Errorf("predictor: %w", err)
	}
	return c, nil
}

type observed struct {
	j   job.Job
	end float64
}

// Forest is the online random-forest predictor. Predict computes a job's
// features from the jobs observed to have finished strictly before its
// submit time and remembers them; Observe adds a finished job to the
// history and, for a job it predicted, a training row. Every RetrainEvery
// seconds of simulated time (by Observe's end) it retrains on the finished
// jobs so far, synchronously, so that the same calls always give the same
// answers. Before the first training it predicts the (user, family)
// median.
//
// A job with no finished run of its (user, family) group gets Known =
// false and the nearest known group's median: the user's, then the
// partition's; then its time limit, then DefaultLimit (design §5,
// unseen = fallback). A prediction never exceeds the job's time limit.
type Forest struct {
	cfg       Config
	hist      *History
	pending   []observed     // finished jobs not yet in hist
	rows      map[string]Row // features of predicted jobs, by id
	trRows    []Row
	trY       []float64
	trFailed  []bool
	model     *Model
	lastTrain float64
	trainings int
}

var _ Predictor = (*Forest)(nil)

// NewForest returns an online forest with cfg (zero fields take defaults).
func NewForest(cfg Config) (*Forest, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Forest{cfg: c, hist: NewHistory(), rows: map[string]Row{}, lastTrain: math.Inf(-1)}, nil
}

// Name implements Predictor.
func (*Forest) Name() string { return "forest" }

// Trainings returns how many times the forest has been trained.
func (f *Forest) Trainings() int { return f.trainings }

// flush moves the pending jobs that finished strictly before t into the
// history, in the order they were observed.
func (f *Forest) flush(t float64) {
	k := 0
	for _, o := range f.pending {
		if o.end < t {
			f.hist.Add(&o.j, o.end)
		} else {
			f.pending[k] = o
			k++
		}
	}
	clear(f.pending[k:])
	f.pending = f.pending[:k]
}

// Predict implements Predictor.
func (f *Forest) Predict(j *job.Job) Estimate {
	f.flush(j.Submit)
	r := Extract(j, f.hist)
	if j.ID != "" {
		f.rows[j.ID] = r
	}
	return capLimit(f.estimate(j, &r), j)
}

func (f *Forest) estimate(j *job.Job, r *Row) Estimate {
	if r.Group.Count == 0 {
		return fallback(j, r)
	}
	if f.model == nil {
		return Estimate{Seconds: math.Exp(r.Group.Median), Known: true}
	}
	return Estimate{Seconds: f.model.Predict(r), Known: true}
}

// fallback is the unseen-job estimate: user, then partition median, then
// the time limit, then DefaultLimit; Known = false.
func fallback(j *job.Job, r *Row) Estimate {
	switch {
	case r.User.Count > 0:
		return Estimate{Seconds: math.Exp(r.User.Median)}
	case r.Partition.Count > 0:
		return Estimate{Seconds: math.Exp(r.Partition.Median)}
	case j.TimeLimit > 0:
		return Estimate{Seconds: j.TimeLimit}
	}
	return Estimate{Seconds: DefaultLimit}
}

// capLimit keeps an estimate within [1 s, the job's time limit].
func capLimit(e Estimate, j *job.Job) Estimate {
	if j.TimeLimit > 0 && e.Seconds > j.TimeLimit {
		e.Seconds = j.TimeLimit
	}
	e.Seconds = positive(e.Seconds)
	return e
}

// Observe implements Predictor. A job that is not Finished (run time 0)
// is ignored.
func (f *Forest) Observe(j *job.Job, end float64) {
	if !Finished(j) {
		return
	}
	f.flush(end)
	f.pending = append(f.pending, observed{*j, end})
	if r, ok := f.rows[j.ID]; ok && j.ID != "" {
		delete(f.rows, j.ID)
		f.trRows = append(f.trRows, r)
		f.trY = append(f.trY, logRun(j.RunTime))
		f.trFailed = append(f.trFailed, Failed(j.State))
		if n := len(f.trRows); n > 2*f.cfg.MaxTrainRows {
			cut := n - f.cfg.MaxTrainRows
			f.trRows = append([]Row(nil), f.trRows[cut:]...)
			f.trY = append([]float64(nil), f.trY[cut:]...)
			f.trFailed = append([]bool(nil), f.trFailed[cut:]...)
		}
	}
	if end-f.lastTrain >= f.cfg.RetrainEvery && len(f.trRows) >= f.cfg.MinTrainJobs {
		f.retrain()
		f.lastTrain = end
	}
}

func (f *Forest) retrain() {
	lo := max(0, len(f.trRows)-f.cfg.MaxTrainRows)
	m, err := TrainRows(f.trRows[lo:], f.trY[lo:], f.trFailed[lo:], f.cfg.Train)
	if err != nil {
		// Only invalid settings fail, and NewForest checked them; keep
		// the previous model.
		return
	}
	f.model = m
	f.trainings++
}
