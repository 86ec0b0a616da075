package policy

import (
	"math"

	"github.com/asrpt/asrpt/prediction"
)

// unseenMinSamples is how many finished jobs of a GPU-count class that
// were unseen at submit it takes before the class sizes unseen jobs
// (design §5.5); before that the unseen setting (first or fallback) does.
const unseenMinSamples = 20

// unseenClasses keeps the running statistics of finished jobs that were
// unseen when submitted, per GPU-count class: 1 GPU, 2–8 GPUs, more than 8.
// Three counters per class: memory is constant.
type unseenClasses [3]struct {
	n           int
	sum, sumLog float64 // seconds, ln seconds
}

// class returns the GPU-count class index of a job of gpus GPUs.
func unseenClass(gpus int) int {
	switch {
	case gpus <= 1:
		return 0
	case gpus <= 8:
		return 1
	}
	return 2
}

// add records a finished job that was unseen at submit and ran run
// seconds at its reference placement.
func (u *unseenClasses) add(t *Task, run float64) {
	if !(run > 0) || math.IsInf(run, 0) {
		return
	}
	c := &u[unseenClass(t.GPUs)]
	c.n++
	c.sum += run
	c.sumLog += math.Log(math.Max(run, 1))
}

// estimate returns the class's estimate for t, capped by t's time limit:
// the mean run time as the expected value, the geometric mean as the
// median; ok is false while the class has too few samples.
func (u *unseenClasses) estimate(t *Task) (e prediction.Estimate, ok bool) {
	c := &u[unseenClass(t.GPUs)]
	if c.n < unseenMinSamples {
		return e, false
	}
	e.Seconds = c.sum / float64(c.n)
	e.Median = math.Exp(c.sumLog / float64(c.n))
	e.Estimator = prediction.ByClass
	if t.TimeLimit > 0 {
		e.Seconds = math.Min(e.Seconds, t.TimeLimit)
		e.Median = math.Min(e.Median, t.TimeLimit)
	}
	return e, true
}
