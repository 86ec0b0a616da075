package policy

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/job"
)

// Controller is a program beside Slurm that reads its queue and writes to
// its waiting jobs at fixed times, as the sidecar does on a live cluster.
// The closed-loop replay (package loop) runs the sidecar itself as the
// Controller of the multifactor model (policies asrpt-sidecar and
// asrpt-sidecar-priority): what the replay's slurmctld holds is what the
// sidecar's code wrote.
type Controller interface {
	// Interval is the time between two polls, seconds (> 0).
	Interval() float64
	// Poll reads q as Slurm shows it at now (Unix seconds) and writes to
	// it. It returns the earliest time at which it may decide differently
	// on the same queue (a time-driven change of its own; +Inf: none; ≤
	// now: at its next poll): while the queue does not change, the polls
	// before that time are skipped (see settlePolls). An error ends the
	// replay.
	Poll(now float64, q *Queue) (next float64, err error)
}

// settlePolls is how many polls follow every change of the queue (an
// arrival, a start, an end, a write) before polls may be skipped: a
// controller may need a few to see a change whole (the sidecar finishes a
// job missing from 3 lists, or once accounting, read 30 s behind, reports
// it).
const settlePolls = 4

// Ended is a job that finished, as accounting reports it.
type Ended struct {
	Job *job.Job
	// Start and End are its start and end, Unix seconds.
	Start, End float64
}

// Queue is the multifactor model's queue during one poll of its
// Controller: the jobs slurmctld would list (waiting and running), the jobs
// that ended since the last poll, and the writes slurmctld accepts — a
// site factor, an explicit priority (which takes the job out of
// multifactor, as slurmctld's direct_set_prio), a release (which gives it
// back) and a required node list. It is valid during the Poll only.
type Queue struct {
	m *multifactorPolicy
}

// Waiting returns the waiting jobs in arrival order; the slice is the
// Queue's until the next call.
func (q *Queue) Waiting() []*Task {
	q.m.buf = append(q.m.buf[:0], q.m.pend...)
	slices.SortFunc(q.m.buf, func(a, b *Task) int { return a.Seq - b.Seq })
	return q.m.buf
}

// Running returns the running jobs in arrival order.
func (q *Queue) Running() []*Task {
	out := make([]*Task, 0, len(q.m.live))
	for t := range q.m.live {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Task) int { return a.Seq - b.Seq })
	return out
}

// Ended returns the jobs that ended since the last poll, in the order they
// ended, and forgets them.
func (q *Queue) Ended() []Ended {
	e := q.m.ended
	q.m.ended = nil
	return e
}

// Priority is the priority slurmctld shows for waiting job t: its explicit
// priority, else multifactor's (rounded down) plus its site factor.
func (q *Queue) Priority(t *Task) uint32 {
	if t.explicit != 0 {
		return t.explicit
	}
	return uint32(min(math.Max(t.prio, 0), math.MaxUint32-float64(t.site))) + t.site
}

// SiteFactor is t's site factor.
func (q *Queue) SiteFactor(t *Task) uint32 { return t.site }

// Required returns the node indices t is bound to (nil: any) and the GPUs
// per node it asks for (0: not set).
func (q *Queue) Required(t *Task) ([]int, int) { return t.required, t.reqGPN }

// SetSiteFactor sets waiting job t's site factor.
func (q *Queue) SetSiteFactor(t *Task, f uint32) {
	t.site = f
	q.m.touch()
}

// SetPriority gives waiting job t explicit priority p (> 0): multifactor
// leaves it alone until a Release.
func (q *Queue) SetPriority(t *Task, p uint32) {
	t.explicit = p
	q.m.touch()
}

// Release gives t back to multifactor: its explicit priority is dropped.
func (q *Queue) Release(t *Task) {
	t.explicit = 0
	q.m.touch()
}

// Require binds waiting job t to the nodes (indices into the cluster's
// nodes; nil or empty: none) with gpn GPUs on each (0: not set). The model
// starts t only on those nodes (a placement within them).
func (q *Queue) Require(t *Task, nodes []int, gpn int) {
	q.m.touch()
	if len(nodes) == 0 {
		t.required, t.reqGPN = nil, 0
		return
	}
	t.required, t.reqGPN = slices.Clone(nodes), gpn
}

// allowRequired is the node filter of a model with a Controller: a job
// bound to nodes may use only those.
func allowRequired(t *Task, node int) bool {
	return t.required == nil || slices.Contains(t.required, node)
}

// touch records a write: the order may have changed, and settlePolls
// polls follow.
func (m *multifactorPolicy) touch() {
	m.unsorted, m.touched, m.settle = true, true, settlePolls
}

// poll runs the Controller when a poll is due at now, reporting whether it
// did, and plans the next one on the interval's grid: the next point, or,
// once settlePolls polls have passed since the queue last changed, the
// first point at or after the time the Controller asked for (a change
// brings it back: changed).
func (m *multifactorPolicy) poll(now float64) (bool, error) {
	if now < m.nextPoll {
		return false, nil
	}
	q := Queue{m: m}
	next, err := m.ctl.Poll(now, &q)
	if err != nil {
		return true, err
	}
	iv := m.ctl.Interval()
	m.lastPoll = now
	m.nextPoll = (math.Floor(now/iv) + 1) * iv
	if m.settle > 0 {
		m.settle--
	} else if next > m.nextPoll {
		m.nextPoll = math.Ceil(next/iv) * iv // +Inf stays +Inf
	}
	return true, nil
}

// changed records a change of the queue at now: the next poll is the
// first point of the grid after the last poll, at or after now, and
// settlePolls polls follow it.
func (m *multifactorPolicy) changed(now float64) {
	if m.ctl == nil {
		return
	}
	m.settle, m.touched = settlePolls, true
	m.pollAgain(now)
}

// pollAgain brings the next poll forward to the first point of the grid
// after the last poll, at or after now.
func (m *multifactorPolicy) pollAgain(now float64) {
	iv := m.ctl.Interval()
	g := math.Ceil(now/iv) * iv
	if g <= m.lastPoll {
		g = (math.Floor(m.lastPoll/iv) + 1) * iv
	}
	m.nextPoll = math.Min(m.nextPoll, g)
}

// PredictedEnd is when running job t is predicted to end, Unix seconds, as
// the policy's reservations count it (after its prediction; once it has
// outlived that, re-estimated at the next scheduling pass that needs it);
// 0 for a job that is not running. Its passing can change a scheduling
// pass with no other change: a reservation moves and a job may backfill.
func (t *Task) PredictedEnd() float64 {
	if !t.running {
		return 0
	}
	return t.end
}
