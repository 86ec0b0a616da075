// Package predictor predicts how long a job will run from accounting history.
// Predictions enter the policies through the Predictor interface; this file
// holds the interface and the simple predictors (oracle, time limit, running
// mean of the job's group).
package predictor

import (
	"github.com/asrpt/asrpt/prediction"
	"math"

	"github.com/asrpt/asrpt/job"
)

// Estimate is prediction.Estimate: a predicted run time, expected value
// and median (design §5.4).
type Estimate = prediction.Estimate

// Predictor predicts run times. Implementations are deterministic: the same
// sequence of calls gives the same answers. Not safe for concurrent use
// unless an implementation says so.
type Predictor interface {
	// Name is the registry name (oracle, limit, mean, forest, select).
	Name() string
	// Predict returns the estimate for j, which has not finished yet. It
	// uses only what is known at submit time and what Observe was given.
	Predict(j *job.Job) Estimate
	// Repredict returns a fresh estimate for j, still waiting at now ≥
	// its submit time, from what is known at now (design §5.3: a job
	// may wait while jobs like it finish). Unlike Predict it records
	// nothing: the training row of a job stays the one taken at submit.
	Repredict(j *job.Job, now float64) Estimate
	// Observe adds a finished job to the history; end is its end time in
	// Unix seconds and j.RunTime its true run time.
	Observe(j *job.Job, end float64)
}

// DefaultLimit is prediction.DefaultLimit: the run time in seconds assumed
// for a job with neither history nor a time limit (one day).
const DefaultLimit = prediction.DefaultLimit

// Oracle predicts each job's true run time (perfect predictions), as both
// the expected value and the median.
type Oracle struct{}

// Name implements Predictor.
func (Oracle) Name() string { return "oracle" }

// Predict implements Predictor.
func (Oracle) Predict(j *job.Job) Estimate {
	s := positive(j.RunTime)
	return Estimate{Seconds: s, Median: s, Known: true, Estimator: prediction.ByOracle}
}

// Repredict implements Predictor.
func (o Oracle) Repredict(j *job.Job, _ float64) Estimate { return o.Predict(j) }

// Observe implements Predictor.
func (Oracle) Observe(*job.Job, float64) {}

// Limit predicts the user's time limit, as Slurm's backfill does: one
// number (Median 0).
type Limit struct{}

// Name implements Predictor.
func (Limit) Name() string { return "limit" }

// Predict implements Predictor. A job without a limit gets DefaultLimit.
func (Limit) Predict(j *job.Job) Estimate {
	if j.TimeLimit > 0 {
		return Estimate{Seconds: j.TimeLimit, Known: true, Estimator: prediction.ByLimit}
	}
	return Estimate{Seconds: DefaultLimit, Known: false, Estimator: prediction.ByDefault}
}

// Repredict implements Predictor.
func (l Limit) Repredict(j *job.Job, _ float64) Estimate { return l.Predict(j) }

// Observe implements Predictor.
func (Limit) Observe(*job.Job, float64) {}

// positive keeps run times strictly positive so that virtual sizes are.
func positive(s float64) float64 {
	if s < 1 {
		return 1
	}
	return s
}

// meanAcc accumulates a group's run times: their running mean over all
// runs, and the log run times of the last Window runs for the median.
type meanAcc struct {
	sum float64
	n   int
	win window
	// tail[k], made at the tailAt-th run (longerThan), is the sum in
	// seconds of the window's runs from the k-th shortest on.
	tail   []float64
	tailAt int
}

func (m *meanAcc) add(x float64) {
	m.sum += x
	m.n++
	m.win.add(logRun(x))
}

func (m *meanAcc) mean() float64 { return m.sum / float64(m.n) }

// estimate is the group's estimate: Seconds the running mean, Median the
// median of the last Window runs (seconds, at least 1).
func (m *meanAcc) estimate(known bool, by prediction.Estimator) Estimate {
	return Estimate{Seconds: positive(m.mean()), Median: positive(math.Exp(m.win.quantile(0.5))), Known: known, Estimator: by}
}

// Mean predicts the running mean run time of the job's (user, name family)
// group, the family being the normalised job name (Family), as the
// expected value, and the median of the group's last Window runs as the
// median; for an unseen group it falls back to the user's mean and median,
// then the time limit, then DefaultLimit, and reports Known = false.
// Memory: O(Window) per group, user and (mean-gpus) partition.
//
// NewMeanByGPUs (predictor "mean-gpus") keys the groups by the GPU count
// too: a job is sized from the runs of its (user, family, GPU count)
// group, else of its (user, family) group, then as above. On histories
// whose only recurrence key is the user (Helios, Philly) the GPU count is
// most of what tells a user's jobs apart (README, "Which prediction asrpt
// ranks by"). The GPU group's expected value is its running mean shrunk
// towards its (user, family) group's, as if the GPU group had
// GPUGroupPrior more runs at that mean: (n·mean_gpu + k·mean_family) /
// (n + k). Its median is the GPU group's own (shrinking it too sized
// Philly's jobs worse). A job whose user has no history is sized from its
// partition's runs (Known false, ByPartition) before the time limit, as
// the family-median baseline of Evaluate is: the time limit had sized a
// history of 300 users 7% worse than that baseline.
type Mean struct {
	group map[[2]string]*meanAcc
	user  map[string]*meanAcc
	// gpuGroup, nil but with NewMeanByGPUs, holds the (user, family, GPU
	// count) groups, asked first.
	gpuGroup map[gpuGroupKey]*meanAcc
	// partition, nil but with NewMeanByGPUs, holds every partition's runs:
	// the fallback of a job whose user has no history.
	partition map[string]*meanAcc
	// families caches Family by job name: Predict and Observe both need
	// it, and real accounting repeats names. Cleared when it grows past
	// maxFamilyCache entries, so memory stays bounded.
	families map[string]string
	// runs, nil but with NewMeanByGPUsRunning, holds the jobs running
	// now (RunAware).
	runs *running
}

const maxFamilyCache = 1 << 16

func (m *Mean) family(name string) string {
	if f, ok := m.families[name]; ok {
		return f
	}
	if len(m.families) >= maxFamilyCache {
		clear(m.families)
	}
	f := Family(name)
	m.families[name] = f
	return f
}

// GPUGroupPrior is the weight, in runs, of the (user, family) group's
// mean in mean-gpus's expected value for a (user, family, GPU count) group
// (Mean). Measured with 0, 3 and 10 (README, "Which prediction asrpt ranks
// by"): 10 gave the lowest point error of the expected value on Helios,
// Philly and a generated history (0.949, 0.969 and 0.926 of the family
// median's, against 0.991, 0.962 and 0.926 without) and the same total JCT
// on the quality suite within its noise.
const GPUGroupPrior = 10

// gpuGroupKey is a (user, family, GPU count) group of NewMeanByGPUs.
type gpuGroupKey struct {
	user, family string
	gpus         int
}

// NewMean returns an empty running-mean predictor.
func NewMean() *Mean {
	return &Mean{group: map[[2]string]*meanAcc{}, user: map[string]*meanAcc{}, families: map[string]string{}}
}

// NewMeanByGPUs returns an empty running-mean predictor whose groups are
// (user, family, GPU count) before (user, family) (see Mean).
func NewMeanByGPUs() *Mean {
	m := NewMean()
	m.gpuGroup = map[gpuGroupKey]*meanAcc{}
	m.partition = map[string]*meanAcc{}
	return m
}

// NewMeanByGPUsRunning returns an empty NewMeanByGPUs predictor that also
// learns from the running jobs it is told of (RunAware; predictor
// "mean-gpus-running"): a (user, family, GPU count) group's expected value
// counts its jobs running longer than its mean (running.censoredMean), and
// so does the (user, family) group's mean it is shrunk towards.
func NewMeanByGPUsRunning() *Mean {
	m := NewMeanByGPUs()
	m.runs = newRunning()
	return m
}

var _ RunAware = (*Mean)(nil)

// Started implements RunAware; only NewMeanByGPUsRunning's predictor keeps
// what it is told (Running reports the others as not run-aware).
func (m *Mean) Started(j *job.Job, start float64) {
	if m.runs == nil {
		return
	}
	fam := m.family(j.Name)
	m.runs.start(j.ID, runKey{family: [2]string{j.User, fam}, gpu: gpuGroupKey{j.User, fam, j.GPUs}}, start, j.TimeLimit)
}

// Stopped implements RunAware.
func (m *Mean) Stopped(id string) {
	if m.runs != nil {
		m.runs.stop(id)
	}
}

// Clock implements RunAware.
func (m *Mean) Clock(now float64) {
	if m.runs != nil {
		m.runs.now = now
	}
}

// Name implements Predictor.
func (m *Mean) Name() string {
	switch {
	case m.runs != nil:
		return "mean-gpus-running"
	case m.gpuGroup != nil:
		return "mean-gpus"
	}
	return "mean"
}

// Predict implements Predictor.
func (m *Mean) Predict(j *job.Job) Estimate {
	fam := m.family(j.Name)
	if m.gpuGroup != nil {
		if a := m.gpuGroup[gpuGroupKey{j.User, fam, j.GPUs}]; a != nil {
			e := a.estimate(true, prediction.ByGroup)
			// Every run of the GPU group is one of its (user, family)
			// group (Observe), so that group exists.
			if g := m.group[[2]string{j.User, fam}]; g != nil {
				mean, n, family := a.mean(), float64(a.n), g.mean()
				if m.runs != nil {
					mean, n = m.runs.censoredMean(a, m.runs.gpu[gpuGroupKey{j.User, fam, j.GPUs}])
					family, _ = m.runs.censoredMean(g, m.runs.family[[2]string{j.User, fam}])
				}
				e.Seconds = positive((n*mean + GPUGroupPrior*family) / (n + GPUGroupPrior))
			}
			return e
		}
	}
	if a := m.group[[2]string{j.User, fam}]; a != nil {
		return a.estimate(true, prediction.ByGroup)
	}
	if a := m.user[j.User]; a != nil {
		return a.estimate(false, prediction.ByUser)
	}
	if a := m.partition[j.Partition]; a != nil {
		return a.estimate(false, prediction.ByPartition)
	}
	return unknown(Limit{}.Predict(j))
}

// Repredict implements Predictor: the running means already hold every
// job observed so far.
func (m *Mean) Repredict(j *job.Job, _ float64) Estimate { return m.Predict(j) }

// GroupRepredictor is implemented by the predictors whose fresh estimate
// is the same for every waiting job of a recurrence group (GroupKey) once a
// job of the group has finished and been observed: the replay then
// predicts such a group once per finish rather than once per waiting job.
type GroupRepredictor interface {
	// RepredictGroup returns what Repredict(w, now) returns for every job
	// w of done's group (GroupKey(w) == GroupKey(done)), done being a job
	// of it that finished and was observed, and true; or false when the
	// estimates of the group's jobs may differ now (then each job is
	// asked with Repredict).
	RepredictGroup(done *job.Job, now float64) (Estimate, bool)
}

var _ GroupRepredictor = (*Mean)(nil)

// RepredictGroup implements GroupRepredictor: once done is observed its
// (user, family) group has history, and the group's estimate is every
// member's — except by GPU count, where members of other GPU counts have
// their own (false: each is asked).
func (m *Mean) RepredictGroup(done *job.Job, _ float64) (Estimate, bool) {
	if m.gpuGroup != nil {
		return Estimate{}, false
	}
	return m.Predict(done), true
}

// Observe implements Predictor.
func (m *Mean) Observe(j *job.Job, _ float64) {
	if m.runs != nil {
		m.runs.stop(j.ID)
	}
	k := [2]string{j.User, m.family(j.Name)}
	a := m.group[k]
	if a == nil {
		a = &meanAcc{}
		m.group[k] = a
	}
	a.add(j.RunTime)
	if m.gpuGroup != nil {
		kg := gpuGroupKey{j.User, k[1], j.GPUs}
		g := m.gpuGroup[kg]
		if g == nil {
			g = &meanAcc{}
			m.gpuGroup[kg] = g
		}
		g.add(j.RunTime)
	}
	if m.partition != nil {
		pa := m.partition[j.Partition]
		if pa == nil {
			pa = &meanAcc{}
			m.partition[j.Partition] = pa
		}
		pa.add(j.RunTime)
	}
	u := m.user[j.User]
	if u == nil {
		u = &meanAcc{}
		m.user[j.User] = u
	}
	u.add(j.RunTime)
}

// unknown returns e with Known false.
func unknown(e Estimate) Estimate { e.Known = false; return e }
