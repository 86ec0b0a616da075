package predictor

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
)

// MaxArrays bounds how many job arrays an Arrays predictor remembers the
// finished tasks of; past it the array seen first is forgotten. With
// Window tasks kept an array (two float64 each), at most 16 MiB.
const MaxArrays = 1 << 14

// Arrays sizes the task of a job array from the tasks of the same array
// that have finished without failing: their mean run time as the expected
// value, their median as the median, Known, estimator "array". The tasks
// of one array are one sweep (one script, one name, other arguments), so
// they are far more alike than the runs of their (user, family) group
// (trace/GENERATOR.md; predictor/README.md measures what it gains). A job
// that is not an array task, or whose array has no such finished task yet,
// gets the wrapped predictor's estimate. The wrapped predictor is asked
// for every job, so that it learns and trains as it would alone.
//
// Costs: Predict and Repredict add O(Window) for an array task; Observe
// O(1); memory O(Window) per array, at most MaxArrays arrays.
type Arrays struct {
	inner  Predictor
	arrays map[string]*arrayRuns
	order  []string // array ids in the order first seen, a ring once MaxArrays long
	next   int      // the ring's oldest entry once full
	// tasks is set once an array task has been predicted: from then on a
	// group's waiting jobs may differ in their estimates.
	tasks bool
}

// arrayRuns holds the last Window finished, not failed, tasks of one array.
type arrayRuns struct {
	end, secs []float64 // end time (Unix s) and run time (s), oldest first
}

var _ Predictor = (*Arrays)(nil)

// WithArrays returns p with array tasks sized from their siblings.
func WithArrays(p Predictor) *Arrays {
	return &Arrays{inner: p, arrays: map[string]*arrayRuns{}}
}

// Unwrap returns the wrapped predictor.
func (a *Arrays) Unwrap() Predictor { return a.inner }

// Name implements Predictor: the wrapped predictor's name.
func (a *Arrays) Name() string { return a.inner.Name() }

// Predict implements Predictor; siblings count when they ended strictly
// before j's submit time.
func (a *Arrays) Predict(j *job.Job) Estimate {
	e := a.inner.Predict(j)
	return a.sibling(j, e, math.Nextafter(j.Submit, math.Inf(-1)))
}

// Repredict implements Predictor; siblings count when they ended at or
// before now.
func (a *Arrays) Repredict(j *job.Job, now float64) Estimate {
	return a.sibling(j, a.inner.Repredict(j, now), now)
}

// sibling returns the estimate of j's finished siblings that ended at or
// before t, or e when there is none.
func (a *Arrays) sibling(j *job.Job, e Estimate, t float64) Estimate {
	if j.ArrayJobID == "" {
		return e
	}
	a.tasks = true
	r := a.arrays[j.ArrayJobID]
	if r == nil {
		return e
	}
	var buf [Window]float64
	done := buf[:0]
	sum := 0.0
	for i, end := range r.end {
		if end <= t {
			done = append(done, r.secs[i])
			sum += r.secs[i]
		}
	}
	if len(done) == 0 {
		return e
	}
	slices.Sort(done)
	med := done[len(done)/2]
	if len(done)%2 == 0 {
		med = math.Sqrt(done[len(done)/2-1] * med) // the median of the logs
	}
	return capLimit(Estimate{Seconds: sum / float64(len(done)), Median: med, Known: true, Estimator: prediction.ByArray}, j)
}

// Observe implements Predictor.
func (a *Arrays) Observe(j *job.Job, end float64) {
	a.inner.Observe(j, end)
	if j.ArrayJobID == "" || !Finished(j) || Failed(j.State) {
		return
	}
	r := a.arrays[j.ArrayJobID]
	if r == nil {
		if len(a.order) == MaxArrays {
			delete(a.arrays, a.order[a.next])
			a.order[a.next] = j.ArrayJobID
			a.next = (a.next + 1) % MaxArrays
		} else {
			a.order = append(a.order, j.ArrayJobID)
		}
		r = &arrayRuns{}
		a.arrays[j.ArrayJobID] = r
	}
	if len(r.end) == Window { // drop the oldest in place: no array grows past Window
		copy(r.end, r.end[1:])
		copy(r.secs, r.secs[1:])
		r.end, r.secs = r.end[:Window-1], r.secs[:Window-1]
	}
	r.end = append(r.end, end)
	r.secs = append(r.secs, positive(j.RunTime))
}

// RepredictGroup implements GroupRepredictor when the wrapped predictor
// does and no array task has been predicted (otherwise ok is false: the
// waiting jobs of a group may belong to different arrays).
func (a *Arrays) RepredictGroup(done *job.Job, now float64) (Estimate, bool) {
	g, uniform := a.inner.(GroupRepredictor)
	if !uniform || a.tasks {
		return Estimate{}, false
	}
	return g.RepredictGroup(done, now)
}
