package predictor

import (
	"fmt"
	"math"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
)

// Config sets the predictors that ByName builds.
type Config struct {
	// Train is how the forest is trained (default OnlineTrainConfig).
	Train TrainConfig
	// RetrainEvery is the simulated time, in seconds, between two
	// trainings of the online forest (default one day). Time is measured
	// by the end argument of Observe.
	RetrainEvery float64
	// MinTrainJobs is the least number of finished, predicted jobs before
	// the first training (default 200).
	MinTrainJobs int
	// MaxTrainRows caps the training set at the most recent finished jobs
	// (default 50,000).
	MaxTrainRows int
	// Select turns on estimator selection (select.go): each prediction is
	// the forest's or the group's window statistics', whichever has erred
	// less on the group's recent jobs (predictor "select").
	Select bool
}

// DefaultConfig returns the defaults described in Config.
func DefaultConfig() Config {
	return Config{Train: OnlineTrainConfig(), RetrainEvery: 86400, MinTrainJobs: 200, MaxTrainRows: 50000}
}

// OnlineTrainConfig is DefaultTrainConfig made cheap enough to retrain
// often inside a replay: 24 trees, each grown on a bootstrap sample of at
// most 10,000 rows. On the generated workload its online error is within
// 0.1% of the 100-tree, all-rows forest's (README.md, "Online use").
func OnlineTrainConfig() TrainConfig {
	c := DefaultTrainConfig()
	c.Forest.Trees, c.Forest.MaxSamples = 24, 10000
	return c
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
	fam string // Family(j.Name)
	end float64
}

// Forest is the online random-forest predictor. Predict computes a job's
// features from the jobs observed to have finished strictly before its
// submit time and remembers them; Observe adds a finished job to the
// history and, for a job it predicted, a training row. Every RetrainEvery
// seconds of simulated time (by Observe's end) it retrains, synchronously,
// on the newest MaxTrainRows training rows, so that the same calls always
// give the same answers. Its estimates carry both outputs of the model:
// Seconds the expected run time, Median the median. Before the first
// training they are the (user, family) group's mean run time (MeanSeconds)
// and median.
//
// Costs: Predict is O(trees·depth) plus O(1) map lookups (the group
// statistics are kept incrementally, over at most Window runs per group);
// Observe is O(Window); memory is O(groups·Window + MaxTrainRows +
// predicted unfinished jobs). A training costs about
// Trees·min(MaxSamples, rows)·depth histogram updates plus binning the
// window; Stats reports its wall time.
//
// A job with no finished run of its (user, family) group gets Known =
// false and the nearest known group's mean and median: the user's, then
// the partition's; then its time limit, then DefaultLimit (design §5,
// unseen = fallback). A prediction never exceeds the job's time limit.
type Forest struct {
	cfg     Config
	hist    *History
	pending []observed          // finished jobs not yet in hist
	rows    map[string]trainRow // features of predicted, unfinished jobs, by id
	// train holds the training rows of the last MaxTrainRows finished
	// predicted jobs, a ring whose next slot is trNext once full.
	train     []trainRow
	trNext    int
	trNew     int // rows added since the last training
	model     *Model
	lastTrain float64
	stats     OnlineStats
	num       []float64 // Repredict's numeric features, reused
	sel       *selector // nil: no estimator selection (Config.Select)
}

// OnlineStats counts the work of an online Forest. TrainSeconds is wall
// time measured with the process clock: it is reported, never used in a
// decision, so predictions stay deterministic.
type OnlineStats struct {
	// Trainings is the number of trainings so far.
	Trainings int
	// TrainRows is the number of rows summed over all trainings.
	TrainRows int
	// TrainSeconds is the wall time spent training, seconds.
	TrainSeconds float64
}

var _ Predictor = (*Forest)(nil)

// NewForest returns an online forest with cfg (zero fields take defaults).
func NewForest(cfg Config) (*Forest, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &Forest{cfg: c, hist: NewHistory(), rows: map[string]trainRow{}, lastTrain: math.Inf(-1)}
	if c.Select {
		f.sel = newSelector()
	}
	return f, nil
}

// Name implements Predictor: "forest", or "select" with estimator
// selection.
func (f *Forest) Name() string {
	if f.sel != nil {
		return "select"
	}
	return "forest"
}

// Picks returns how many predictions each estimator gave, by name (nil
// without estimator selection).
func (f *Forest) Picks() map[string]int {
	if f.sel == nil {
		return nil
	}
	m := make(map[string]int, numCandidates)
	for c, n := range f.sel.picks {
		m[candidate(c).String()] = n
	}
	return m
}

// Trainings returns how many times the forest has been trained.
func (f *Forest) Trainings() int { return f.stats.Trainings }

// Stats returns the work done so far.
func (f *Forest) Stats() OnlineStats { return f.stats }

// flush moves the pending jobs that finished strictly before t into the
// history, in the order they were observed.
func (f *Forest) flush(t float64) {
	k := 0
	for _, o := range f.pending {
		if o.end < t {
			f.hist.add(&o.j, o.fam, o.end)
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
	r := extract(j, Family(j.Name), f.hist)
	if j.ID != "" {
		f.rows[j.ID] = compact(&r)
	}
	return f.pick(j, &r, true)
}

// pick returns the estimate for j from its features r: the forest's, or
// with estimator selection the chosen candidate's (recording, when record
// is set, each candidate's median for scoring once j finishes).
func (f *Forest) pick(j *job.Job, r *Row, record bool) Estimate {
	e := capLimit(f.estimate(j, r), j)
	if f.sel == nil || f.model == nil || r.Group.Count == 0 {
		return e
	}
	g := capLimit(statsEstimate(&r.Group, true, prediction.ByGroup), j)
	if record && j.ID != "" {
		f.sel.made[j.ID] = [numCandidates]float64{candForest: logRun(medianOf(e)), candGroup: logRun(medianOf(g))}
	}
	c := f.sel.choose(j.User+"\x00"+r.Cat[CatFamily], j.User)
	f.sel.picks[c]++
	if c == candGroup {
		return g
	}
	return e
}

// Repredict implements Predictor: the features of j as of now (history
// of the jobs that finished at or before now); the training row kept
// for j is the one Predict took at submit.
func (f *Forest) Repredict(j *job.Job, now float64) Estimate {
	f.flush(math.Nextafter(math.Max(now, j.Submit), math.Inf(1)))
	fam := ""
	if kept, ok := f.rows[j.ID]; ok && j.ID != "" {
		fam = kept.cat[CatFamily] // Family(j.Name), computed by Predict
	} else {
		fam = Family(j.Name)
	}
	if f.num == nil {
		f.num = make([]float64, 0, NumNum)
	}
	r := extractInto(j, fam, f.hist, f.num)
	return f.pick(j, &r, false)
}

func (f *Forest) estimate(j *job.Job, r *Row) Estimate {
	if r.Group.Count == 0 {
		return fallback(j, r)
	}
	if f.model == nil {
		return statsEstimate(&r.Group, true, prediction.ByGroup)
	}
	exp, med := f.model.PredictBoth(r)
	return Estimate{Seconds: exp, Median: med, Known: true, Estimator: prediction.ByForest}
}

// statsEstimate is the estimate a group's statistics give: its mean run
// time (expected) and its median.
func statsEstimate(s *GroupStats, known bool, by prediction.Estimator) Estimate {
	return Estimate{Seconds: s.MeanSeconds, Median: math.Exp(s.Median), Known: known, Estimator: by}
}

// fallback is the unseen-job estimate: user, then partition mean and
// median, then the time limit, then DefaultLimit (these two with one
// number: Median 0); Known = false.
func fallback(j *job.Job, r *Row) Estimate {
	switch {
	case r.User.Count > 0:
		return statsEstimate(&r.User, false, prediction.ByUser)
	case r.Partition.Count > 0:
		return statsEstimate(&r.Partition, false, prediction.ByPartition)
	case j.TimeLimit > 0:
		return Estimate{Seconds: j.TimeLimit, Estimator: prediction.ByLimit}
	}
	return Estimate{Seconds: DefaultLimit, Estimator: prediction.ByDefault}
}

// capLimit keeps Seconds, and Median when there is one (> 0), within
// [1 s, the job's time limit].
func capLimit(e Estimate, j *job.Job) Estimate {
	clamp := func(s float64) float64 {
		if j.TimeLimit > 0 && s > j.TimeLimit {
			s = j.TimeLimit
		}
		return positive(s)
	}
	e.Seconds = clamp(e.Seconds)
	if e.Median > 0 {
		e.Median = clamp(e.Median)
	}
	return e
}

// Observe implements Predictor. A job that is not Finished (run time 0)
// adds nothing to the history.
func (f *Forest) Observe(j *job.Job, end float64) {
	r, predicted := f.rows[j.ID]
	predicted = predicted && j.ID != ""
	if predicted {
		delete(f.rows, j.ID)
	}
	if !Finished(j) {
		if f.sel != nil {
			delete(f.sel.made, j.ID)
		}
		return
	}
	f.flush(end)
	fam := r.cat[CatFamily]
	if !predicted {
		fam = Family(j.Name)
	}
	if f.sel != nil && predicted {
		f.sel.score(j.ID, j.User+"\x00"+fam, j.User, j.RunTime)
	}
	f.pending = append(f.pending, observed{*j, fam, end})
	if predicted {
		r.y, r.failed = logRun(j.RunTime), Failed(j.State)
		if len(f.train) < f.cfg.MaxTrainRows {
			f.train = append(f.train, r)
		} else {
			f.train[f.trNext] = r
			f.trNext = (f.trNext + 1) % len(f.train)
		}
		f.trNew++
	}
	if end-f.lastTrain >= f.cfg.RetrainEvery && len(f.train) >= f.cfg.MinTrainJobs && f.trNew > 0 {
		f.retrain()
		f.lastTrain = end
	}
}

// retrain trains on the ring of training rows (in ring order: the order
// only seeds the bootstrap, and it is the same for the same calls).
func (f *Forest) retrain() {
	start := time.Now()
	m, err := trainCompact(f.train, f.cfg.Train)
	f.stats.TrainSeconds += time.Since(start).Seconds()
	if err != nil {
		// Only invalid settings fail, and NewForest checked them; keep
		// the previous model.
		return
	}
	f.model = m
	f.stats.Trainings++
	f.stats.TrainRows += len(f.train)
	f.trNew = 0
}
