package predictor

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/job"
)

// RunAware is implemented by the predictors that also learn from the
// jobs still running (mean-gpus-running): a job of a group that has run longer
// than the group's mean is a run the mean does not hold yet, and only
// the long runs of a group are ever missing from it, so a mean of the
// finished runs alone is too short while they run (the longer runs
// finish last). The caller reports every start and every end without a
// finished run; Observe ends a run that finished.
//
// Memory: one entry per running job, at most MaxRunning (past that the
// running jobs are forgotten and learnt again from the next starts).
type RunAware interface {
	// Started records that j (its ID, user, name and GPU count) began
	// running at start, in Unix seconds. A job without an ID is ignored;
	// a second Started of the same ID replaces the first.
	Started(j *job.Job, start float64)
	// Stopped forgets the running job id (requeued, preempted, or gone
	// without a finished run); an unknown id is ignored.
	Stopped(id string)
	// Clock sets the time, in Unix seconds, at which the next estimates
	// are made: a running job has run for now - start by then.
	Clock(now float64)
}

// Running returns p's RunAware predictor (p itself or the one it wraps),
// and false when p learns nothing from running jobs.
func Running(p Predictor) (RunAware, bool) {
	in := Unwrap(p)
	if m, ok := in.(*Mean); ok && m.runs == nil {
		return nil, false
	}
	r, ok := in.(RunAware)
	return r, ok
}

// MaxRunning bounds the running jobs a RunAware predictor keeps.
const MaxRunning = 1 << 16

// running keeps the jobs running now by (user, family) and by (user,
// family, GPU count) group, each group's in the order of (start, ID), so
// that sums over them do not depend on map order.
type running struct {
	now    float64
	byID   map[string]runKey
	family map[[2]string][]runStart
	gpu    map[gpuGroupKey][]runStart
}

// runKey is where a running job is kept.
type runKey struct {
	family [2]string
	gpu    gpuGroupKey
}

// runStart is one running job: its ID and start time in Unix seconds.
type runStart struct {
	id    string
	at    float64
	limit float64
}

func newRunning() *running {
	return &running{byID: map[string]runKey{}, family: map[[2]string][]runStart{},
		gpu: map[gpuGroupKey][]runStart{}}
}

func (r *running) start(id string, k runKey, at, limit float64) {
	if id == "" {
		return
	}
	r.stop(id)
	if len(r.byID) >= MaxRunning {
		clear(r.byID)
		clear(r.family)
		clear(r.gpu)
	}
	r.byID[id] = k
	s := runStart{id, at, limit}
	r.family[k.family] = insertRun(r.family[k.family], s)
	r.gpu[k.gpu] = insertRun(r.gpu[k.gpu], s)
}

func (r *running) stop(id string) {
	k, ok := r.byID[id]
	if !ok {
		return
	}
	delete(r.byID, id)
	if l := removeRun(r.family[k.family], id); len(l) > 0 {
		r.family[k.family] = l
	} else {
		delete(r.family, k.family)
	}
	if l := removeRun(r.gpu[k.gpu], id); len(l) > 0 {
		r.gpu[k.gpu] = l
	} else {
		delete(r.gpu, k.gpu)
	}
}

// insertRun inserts s into l, kept in (start, ID) order. Starts come in
// time order, so the search from the end is short.
func insertRun(l []runStart, s runStart) []runStart {
	i := len(l)
	for i > 0 && (l[i-1].at > s.at || l[i-1].at == s.at && l[i-1].id > s.id) {
		i--
	}
	return slices.Insert(l, i, s)
}

// removeRun removes id from l (a group's running jobs: as many as its
// GPUs allow at once).
func removeRun(l []runStart, id string) []runStart {
	for i := range l {
		if l[i].id == id {
			return slices.Delete(l, i, i+1)
		}
	}
	return l
}

// censoredMean returns the group's mean run time in seconds and the runs
// it stands for, counting each running job that has run longer than the
// finished runs' mean as one more run of its expected length: the mean of
// the group's last Window finished runs that are longer than it has run
// so far, or twice its run so far when none is (the doubling of
// policy.running's overrun rule). A running job still short of the mean
// tells nothing the mean does not hold, and is left out. With no running
// job of the group it is a.mean() and a.n.
func (r *running) censoredMean(a *meanAcc, starts []runStart) (mean, n float64) {
	n = float64(a.n)
	mean = a.mean()
	if len(starts) == 0 {
		return mean, n
	}
	sum := n * mean
	for _, s := range starts {
		ran := r.now - s.at
		if ran <= mean {
			continue
		}
		x := longerThan(a, ran)
		if s.limit > 0 {
			x = max(min(x, s.limit), ran)
		}
		sum += x
		n++
	}
	return sum / n, n
}

// longerThan returns the mean in seconds of a's last Window finished runs
// longer than ran seconds, or 2·ran when there is none. The sums of the
// longest runs are computed once per finished run of the group
// (meanAcc.tail), so that a group predicted many times between two
// finishes pays O(log Window) each time.
func longerThan(a *meanAcc, ran float64) float64 {
	w := &a.win
	i := lowerBound(w.sorted, logRun(ran))
	if i >= len(w.sorted) {
		return 2 * ran
	}
	if a.tailAt != a.n || len(a.tail) != len(w.sorted) {
		a.tail = a.tail[:0]
		for range w.sorted {
			a.tail = append(a.tail, 0)
		}
		s := 0.0
		for k := len(w.sorted) - 1; k >= 0; k-- {
			s += math.Exp(w.sorted[k])
			a.tail[k] = s
		}
		a.tailAt = a.n
	}
	return a.tail[i] / float64(len(w.sorted)-i)
}
