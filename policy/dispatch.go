package policy

import (
	"fmt"
	"math"

	"github.com/google/btree"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// mode is how a scan treats a job that cannot start.
type mode int

const (
	// modeBlock stops the scan at the first job that cannot start
	// (head-of-line blocking, Slurm sched/builtin).
	modeBlock mode = iota
	// modeEASY reserves the start of the first job that cannot start and
	// lets later jobs start only if they do not delay it (EASY backfilling).
	modeEASY
	// modeGreedy starts any job that fits (work-conserving, no reservation).
	modeGreedy
)

// Order keys of the queue-ordering policies.
func keySubmit(t *Task) float64   { return t.Submit }
func keyDuration(t *Task) float64 { return t.Ranked() }
func keyWork(t *Task) float64     { return float64(t.GPUs) * t.Ranked() }

// Run-time estimates used for reservations: the prediction, or the user's
// time limit as Slurm's backfill uses it.
func estPredicted(t *Task, alpha float64) float64 { return t.PredictedOn(alpha) }

// estFit is the median prediction, for fitting into holes (design §5.4).
func estFit(t *Task, alpha float64) float64 { return t.FitOn(alpha) }
func estLimit(t *Task, _ float64) float64 {
	if t.TimeLimit > 0 {
		return t.TimeLimit
	}
	return prediction.DefaultLimit
}

// byKey orders tasks by (key, submit, seq).
func byKey(a, b *Task) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.Seq < b.Seq
}

// byEnd orders running tasks by predicted end, then seq.
func byEnd(a, b *Task) bool {
	if a.end != b.end {
		return a.end < b.end
	}
	return a.Seq < b.Seq
}

const btreeDegree = 16

// running is the set of running tasks ordered by predicted end, for
// reservations.
type running struct {
	tree endTree
	est  func(*Task, float64) float64
	// restart is the restart cost in seconds a preempted job spends
	// before it makes progress again (Params.RestartCost).
	restart float64
}

func newRunning(est func(*Task, float64) float64) running {
	return running{est: est}
}

// add inserts t, just started, with its predicted end: after its
// predicted run time, or for a restart after what is left of it (at least
// minRemaining) plus the restart cost.
func (r *running) add(t *Task) {
	d := r.est(t, t.Alpha)
	if t.Preemptions > 0 {
		if t.AlphaMin > 0 {
			d -= t.served * t.Alpha / t.AlphaMin
		}
		d = math.Max(d, minRemaining) + r.restart
	}
	t.end = t.Start + d
	r.tree.insert(t)
}

func (r *running) remove(t *Task) { r.tree.delete(t) }

// refresh re-estimates the end of every running job that has outlived its
// prediction: it is now expected to run as long again as it has so far
// (doubling), but not past its time limit. Without this, an under-predicted
// job would count as ending "now" forever and freeze every reservation at
// now, so that nothing could backfill. Each job is re-estimated O(log
// overrun) times. Afterwards every end lies after now.
func (r *running) refresh(now float64) {
	for {
		t, ok := r.tree.min()
		if !ok || t.end > now {
			return
		}
		r.tree.delete(t)
		end := now + math.Max(now-t.Start, minRemaining)
		if t.TimeLimit > 0 && t.Start+t.TimeLimit > now {
			end = math.Min(end, t.Start+t.TimeLimit)
		}
		t.end = end
		r.tree.insert(t)
	}
}

// minRemaining is the least time in seconds a running job is expected to
// go on for once it has outlived its prediction.
const minRemaining = 60

// shadow returns the earliest time at which need GPUs are predicted to be
// free (count only, as Slurm's reservation), and how many GPUs beyond need
// will be free then.
func (r *running) shadow(now float64, need, free int) (at float64, extra int) {
	if free >= need {
		return now, free - need
	}
	r.refresh(now)
	t, ended, ok := r.tree.reach(need - free)
	if !ok {
		return math.Inf(1), free + r.tree.gpusBy(math.Inf(1)) - need
	}
	return math.Max(now, t.end), free + ended - need
}

// decisions is a policy's buffer of start decisions, reused from one
// scheduling pass to the next (Policy.Schedule's slice may be reused).
type decisions []Decision

// of returns a preemption decision for each task of preempted, then a
// start decision for each task of started, in order, in the buffer's
// storage.
func (d *decisions) of(preempted, started []*Task) []Decision {
	out := (*d)[:0]
	for _, t := range preempted {
		out = append(out, Decision{Task: t, Preempt: true})
	}
	for _, t := range started {
		out = append(out, Decision{Task: t})
	}
	*d = out
	return out
}

// starter places and starts tasks; shared by the dispatching policies.
type starter struct {
	env *Env
}

// place returns a Heavy-Edge placement for t on free and its α (1 for plain
// jobs), or ok = false when t does not fit or its placement failed; a
// failure (anything but a lack of free GPUs) is recorded on the Env.
func (s starter) place(t *Task, free *placement.Free) (placement.Placement, float64, bool) {
	p, alpha, st := s.placeStatus(t, free)
	if st.Code == Failed {
		s.env.fail(t, st.Err)
	}
	return p, alpha, st.Code == Fits
}

// placeStatus is place with the outcome told apart.
func (s starter) placeStatus(t *Task, free *placement.Free) (placement.Placement, float64, Status) {
	if t.GPUs > free.Total() {
		return placement.Placement{}, 0, Status{Code: DoesNotFit}
	}
	p, err := s.env.PlaceAllowed(free, t, s.env.Allow)
	if st := StatusOf(err); st.Code != Fits {
		return placement.Placement{}, 0, st
	}
	alpha := 1.0
	if t.Prof != nil {
		var ok bool
		if alpha, ok = s.env.Placer.AlphaOf(t.Prof, &p); !ok {
			return placement.Placement{}, 0, Status{Code: Failed, Err: fmt.Errorf("placement of %d GPUs does not map the profile %q", t.GPUs, t.Prof.Model)}
		}
	}
	return p, alpha, Status{Code: Fits}
}

// consolidated reports whether α is within the placement slack of α_min.
func (s starter) consolidated(t *Task, alpha float64) bool {
	return !t.Heavy || alpha <= t.AlphaMin*(1+s.env.Params.Slack)
}

// start records the start of t at now on p and takes its GPUs from free.
// It returns false, changing nothing, when a GPU of p is busy (recorded on
// the Env as a failure: place found p free).
func (s starter) start(now float64, t *Task, p placement.Placement, alpha float64, free *placement.Free) bool {
	if err := free.Take(&p); err != nil {
		s.env.fail(t, fmt.Errorf("start on %d nodes: %w", len(p.Slots), err))
		return false
	}
	t.Start, t.Placement, t.Alpha, t.running = now, p, alpha, true
	return true
}

// dispatcher is a non-preemptive queue-ordering policy: FIFO, Slurm
// backfill, SPJF, SPWF and the work-conserving WCS family differ only in the
// order key, the scan mode and the run-time estimate for reservations.
type dispatcher struct {
	starter
	name  string
	mode  mode
	key   func(*Task) float64
	queue *btree.BTreeG[*Task]
	run   running
	buf   []*Task
	dec   decisions
}

var (
	_ Policy  = (*dispatcher)(nil)
	_ Updater = (*dispatcher)(nil)
)

func newDispatcher(name string, env *Env, m mode, key func(*Task) float64, est func(*Task, float64) float64) *dispatcher {
	return &dispatcher{starter: starter{env: env}, name: name, mode: m, key: key,
		queue: btree.NewG(btreeDegree, byKey), run: newRunning(est)}
}

func (d *dispatcher) Name() string { return d.name }

func (d *dispatcher) Arrive(_ float64, t *Task) {
	t.key = d.key(t)
	d.queue.ReplaceOrInsert(t)
}

func (d *dispatcher) Finish(_ float64, t *Task) {
	d.run.remove(t)
	t.running = false
}

func (d *dispatcher) NextEvent(float64) float64 { return math.Inf(1) }

func (d *dispatcher) Withdraw(_ float64, t *Task) {
	if !t.running {
		d.queue.Delete(t)
	}
}

// Update implements Updater: the job is re-keyed by its new estimate. An
// estimate that leaves the key where it was (an order by submit time, or
// an expected run time that moved while the ranked median did not) costs
// no change to the queue.
func (d *dispatcher) Update(_ float64, t *Task, est prediction.Estimate) {
	if t.running || !d.queue.Has(t) {
		return
	}
	t.Est = est
	k := d.key(t)
	if k == t.key {
		return // the order (key, submit, seq) is unchanged
	}
	d.queue.Delete(t) // found by the key it was inserted with
	t.key = k
	d.queue.ReplaceOrInsert(t)
}

func (d *dispatcher) Restore(now float64, t *Task, _ float64, _ bool) { d.Arrive(now, t) }

func (d *dispatcher) Pending() []*Task {
	out := make([]*Task, 0, d.queue.Len())
	d.queue.Ascend(func(t *Task) bool { out = append(out, t); return true })
	return out
}

func (d *dispatcher) Schedule(now float64, free *placement.Free) []Decision {
	if free.Total() == 0 || d.queue.Len() == 0 {
		return nil
	}
	sc := scan{starter: d.starter, run: &d.run, mode: d.mode, now: now, free: free,
		depth: d.env.Params.Depth, started: d.buf[:0]}
	d.queue.Ascend(sc.visit)
	if len(sc.started) == 0 {
		return nil
	}
	for _, t := range sc.started {
		d.queue.Delete(t)
	}
	d.buf = sc.started[:0]
	return d.dec.of(nil, sc.started)
}

// scan is one scheduling pass of a queue-ordering policy over its waiting
// jobs in queue order: visit starts each job that may start under the
// mode and returns false when the pass is over. Started jobs enter run.
type scan struct {
	starter
	run     *running
	mode    mode
	now     float64
	free    *placement.Free
	depth   int // jobs examined at most, ≤ 0: all
	seen    int
	blocked bool    // modeEASY: the reservation is made
	shadow  float64 // modeEASY: the reserved job's predicted start
	extra   int     // modeEASY: GPUs free at shadow beyond the reserved job's
	started []*Task
}

func (c *scan) visit(t *Task) bool {
	now, free := c.now, c.free
	if free.Total() == 0 {
		return false
	}
	if t.Blocked {
		return true // neither starts, nor blocks, nor reserves
	}
	c.seen++
	if c.depth > 0 && c.seen > c.depth {
		return false
	}
	if t.GPUs > free.Total() {
		switch {
		case c.mode == modeBlock && !c.blocked:
			return false
		case c.mode == modeEASY && !c.blocked:
			c.blocked = true
			c.shadow, c.extra = c.run.shadow(now, t.GPUs, free.Total())
		}
		return true
	}
	if c.blocked && c.mode == modeEASY && t.GPUs > c.extra && now+c.run.est(t, t.AlphaMin) > c.shadow {
		return true // cannot start without delaying the reservation
	}
	p, alpha, ok := c.place(t, free)
	if !ok {
		return true
	}
	if c.blocked && c.mode == modeEASY {
		end := now + c.run.est(t, alpha)
		if end > c.shadow {
			if t.GPUs > c.extra {
				return true
			}
			c.extra -= t.GPUs
		}
	}
	if !c.start(now, t, p, alpha, free) {
		return true
	}
	c.run.add(t)
	c.started = append(c.started, t)
	return true
}
