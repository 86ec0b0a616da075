package policy

import (
	"math"

	"github.com/google/btree"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// easyPPIncrements are the amounts in seconds by which EASY++ raises a
// prediction that proved too short: the k-th time a running job reaches its
// predicted end, the prediction becomes the elapsed time plus the k-th
// increment (1, 5, 15 and 30 minutes, 1, 2, 5, 10, 20, 50 and 100 hours; the
// last one repeats), as in Tsafrir, Etsion and Feitelson.
var easyPPIncrements = [...]float64{60, 300, 900, 1800, 3600, 7200, 18000, 36000, 72000, 180000, 360000}

// bySubmit is FCFS order: submit time, then arrival sequence.
func bySubmit(a, b *Task) bool {
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.Seq < b.Seq
}

// runPair is a user's history for EASY++: the reference run times in
// seconds of the user's last two finished jobs, last the most recent; prev
// is 0 while the user has finished only one job (run times are kept ≥ 1 s).
type runPair struct {
	last, prev float64
}

// mean returns the average of the recorded run times, seconds.
func (r runPair) mean() float64 {
	if r.prev == 0 {
		return r.last
	}
	return (r.last + r.prev) / 2
}

// easyPP is EASY++ (Tsafrir, Etsion and Feitelson, "Backfilling Using
// System-Generated Predictions Rather Than User Runtime Estimates", IEEE
// TPDS 2007): EASY backfilling in which the run-time estimates are the
// scheduler's own predictions, corrected when they prove too short, and the
// backfilling candidates are tried shortest predicted job first (SJBF).
//
//   - Queue: FCFS (submit time, then arrival). Jobs start in that order while
//     they fit; the first that does not fit (count of free GPUs, as Slurm)
//     gets an EASY reservation: the shadow time at which the running jobs'
//     predicted ends free enough GPUs for it, and the extra GPUs it leaves
//     then.
//   - Backfilling: the other waiting jobs, shortest predicted run time first
//     (ties by submit, then arrival), start if they fit now and either are
//     predicted to end by the shadow time or use only extra GPUs.
//   - Prediction (made at arrival, in seconds at the job's reference
//     placement): the mean run time of the user's last two finished jobs (the
//     last one alone after the user's first), capped by the job's time limit
//     when it has one; a user with no finished job gets the time limit, or
//     prediction.DefaultLimit without one. The run time learnt at Finish is
//     the elapsed time now − Start, brought to the reference placement by
//     α_min/α for a profiled job; it is kept at ≥ 1 s. Jobs of an empty user
//     name share one history. Two numbers are kept per user.
//   - On a placement with per-iteration time α a profiled job is predicted
//     to run prediction·α/α_min seconds, capped by its time limit; a plain
//     job runs the prediction.
//   - Correction: when a running job reaches its predicted end and is still
//     running, its predicted end moves on by the next of easyPPIncrements
//     (so the prediction becomes the elapsed time plus that increment), but
//     not past Start + time limit while the job has not reached its limit
//     (past it, the increments go on uncapped: the replay does not enforce
//     limits). A correction moves the shadow time, so NextEvent reports the
//     earliest predicted end of a running job while a job waits. The
//     doubling of running.refresh is not used: these are the paper's
//     increments.
//   - Oracle variant (name with OracleSuffix): the caller's perfect
//     prediction t.Est.Seconds replaces the user history, uncapped; the
//     correction still applies (it only acts on a job that outruns its
//     prediction).
//
// The replay's predictor and t.Est are not used otherwise. Non-preemptive.
//
// Cost per pass: O(log n) per job started, O(log r) per correction of one of
// the r running jobs, O(r) for the shadow time, and the SJBF scan of at most
// Params.Depth waiting jobs, kept in a second tree by prediction so that no
// pass sorts the queue.
type easyPP struct {
	starter
	name   string
	oracle bool
	fcfs   *btree.BTreeG[*Task] // waiting jobs, by bySubmit
	sjbf   *btree.BTreeG[*Task] // the same jobs, by byKey with key the prediction
	run    running              // running jobs, by predicted end
	hist   map[string]runPair   // by user
	misses map[*Task]int        // corrections so far, running jobs only
	buf    []*Task
	dec    decisions
}

var _ Policy = (*easyPP)(nil)

// newEASYPP returns EASY++ under name; a name with OracleSuffix gives the
// oracle variant.
func newEASYPP(name string, env *Env) *easyPP {
	_, oracle := Split(name)
	p := &easyPP{starter: starter{env: env}, name: name, oracle: oracle,
		fcfs: btree.NewG(btreeDegree, bySubmit), sjbf: btree.NewG(btreeDegree, byKey),
		hist: map[string]runPair{}, misses: map[*Task]int{}}
	p.run = newRunning(p.predictOn)
	return p
}

func (p *easyPP) Name() string { return p.name }

// predict returns the prediction for t at its reference placement, seconds.
func (p *easyPP) predict(t *Task) float64 {
	if p.oracle {
		return t.Est.Seconds
	}
	h, ok := p.hist[t.User]
	switch {
	case !ok && t.TimeLimit > 0:
		return t.TimeLimit
	case !ok:
		return prediction.DefaultLimit
	case t.TimeLimit > 0:
		return math.Min(h.mean(), t.TimeLimit)
	}
	return h.mean()
}

// predictOn returns the predicted run time in seconds of t on a placement
// with per-iteration time alpha, from the prediction made at its arrival.
func (p *easyPP) predictOn(t *Task, alpha float64) float64 {
	s := t.key
	if t.Prof != nil && t.AlphaMin > 0 {
		s *= alpha / t.AlphaMin
	}
	if !p.oracle && t.TimeLimit > 0 {
		s = math.Min(s, t.TimeLimit)
	}
	return s
}

func (p *easyPP) Arrive(_ float64, t *Task) {
	t.key = p.predict(t)
	p.fcfs.ReplaceOrInsert(t)
	p.sjbf.ReplaceOrInsert(t)
}

func (p *easyPP) Restore(now float64, t *Task, _ float64, _ bool) { p.Arrive(now, t) }

func (p *easyPP) Withdraw(_ float64, t *Task) {
	if !t.running {
		p.fcfs.Delete(t)
		p.sjbf.Delete(t)
	}
}

// Finish records the job's run time in its user's history (only for a job
// this policy started) and forgets the job.
func (p *easyPP) Finish(now float64, t *Task) {
	if !t.running {
		return
	}
	p.run.remove(t)
	delete(p.misses, t)
	t.running = false
	ran := now - t.Start
	if t.Prof != nil && t.Alpha > 0 {
		ran *= t.AlphaMin / t.Alpha
	}
	h := p.hist[t.User]
	p.hist[t.User] = runPair{last: math.Max(ran, 1), prev: h.last}
}

func (p *easyPP) Pending() []*Task {
	out := make([]*Task, 0, p.fcfs.Len())
	p.fcfs.Ascend(func(t *Task) bool { out = append(out, t); return true })
	return out
}

// NextEvent returns, while a job waits, the earliest predicted end of a
// running job: if that job is still running then, its prediction is
// corrected and the head's shadow time moves.
func (p *easyPP) NextEvent(now float64) float64 {
	if p.fcfs.Len() == 0 {
		return math.Inf(1)
	}
	p.correct(now)
	if t, ok := p.run.tree.min(); ok {
		return t.end
	}
	return math.Inf(1)
}

// correct raises the predicted end of every running job that has reached it
// by the increments of easyPPIncrements, one per time the job was found
// still running at its predicted end, until it lies after now. Done lazily
// at now, it gives the ends a correction at each predicted end would have.
// Afterwards running.shadow's own re-estimation finds nothing overdue.
func (p *easyPP) correct(now float64) {
	last := easyPPIncrements[len(easyPPIncrements)-1]
	for {
		t, ok := p.run.tree.min()
		if !ok || t.end > now {
			return
		}
		p.run.tree.delete(t)
		k := p.misses[t]
		limit := t.Start + t.TimeLimit
		for t.end <= now {
			if k >= len(easyPPIncrements)-1 && !(t.TimeLimit > 0 && t.end < limit) {
				// Uncapped at the last increment: jump in one step.
				n := math.Floor((now-t.end)/last) + 1
				t.end += n * last
				k += int(n)
				break
			}
			end := t.end + easyPPIncrements[min(k, len(easyPPIncrements)-1)]
			if t.TimeLimit > 0 && t.end < limit {
				end = math.Min(end, limit)
			}
			t.end = end
			k++
		}
		p.misses[t] = k
		p.run.tree.insert(t)
	}
}

func (p *easyPP) Schedule(now float64, free *placement.Free) []Decision {
	p.correct(now)
	if free.Total() == 0 || p.fcfs.Len() == 0 {
		return nil
	}
	started := p.buf[:0]
	seen, depth := 0, p.env.Params.Depth
	begin := func(t *Task, pl placement.Placement, alpha float64) bool {
		if !p.start(now, t, pl, alpha, free) {
			return false
		}
		p.run.add(t)
		started = append(started, t)
		return true
	}
	// FCFS: start jobs in submit order while they fit.
	// A blocked job is passed over: it neither starts nor is the head.
	var head *Task
	p.fcfs.Ascend(func(t *Task) bool {
		if free.Total() == 0 || (depth > 0 && seen >= depth) {
			return false
		}
		if t.Blocked {
			return true
		}
		seen++
		pl, alpha, fits := p.place(t, free)
		if !fits || !begin(t, pl, alpha) {
			head = t
			return false
		}
		return true
	})
	for _, t := range started {
		p.fcfs.Delete(t)
		p.sjbf.Delete(t)
	}
	if head != nil && free.Total() > 0 {
		// The head's reservation, then SJBF backfilling around it.
		shadow, extra := p.run.shadow(now, head.GPUs, free.Total())
		n := len(started)
		p.sjbf.Ascend(func(t *Task) bool {
			if free.Total() == 0 || (depth > 0 && seen >= depth) {
				return false
			}
			if t == head || t.Blocked {
				return true
			}
			seen++
			if t.GPUs > free.Total() || (t.GPUs > extra && now+p.predictOn(t, t.AlphaMin) > shadow) {
				return true
			}
			pl, alpha, ok := p.place(t, free)
			if !ok {
				return true
			}
			if now+p.predictOn(t, alpha) > shadow {
				if t.GPUs > extra {
					return true
				}
				extra -= t.GPUs
			}
			begin(t, pl, alpha)
			return true
		})
		for _, t := range started[n:] {
			p.fcfs.Delete(t)
			p.sjbf.Delete(t)
		}
	}
	if len(started) == 0 {
		return nil
	}
	p.buf = started[:0]
	return p.dec.of(nil, started)
}
