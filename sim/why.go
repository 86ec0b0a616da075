package sim

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/reason"
)

// MaxWhySteps bounds the steps a replay keeps of one traced job
// (Config.Why); later changes are counted in Result.WhyDropped.
const MaxWhySteps = 10000

// What happened to the traced job at a WhyStep.
const (
	WhySubmitted = "submitted"
	WhyWaiting   = "waiting"
	WhyStarted   = "started"
	WhyPreempted = "preempted"
	WhyFinished  = "finished"
)

// WhyStep is one change in what the traced job (Config.Why) does or why
// it waits: a step is kept when the job is submitted, starts, is
// preempted or finishes, whenever the reason it waits changes, and when
// its rank in the waiting order moved by a factor of four or more since
// the last step kept (1 → 4, 20 → 5: a story of tens of steps, not one
// per event).
type WhyStep struct {
	// Time is the replay's time, seconds.
	Time float64 `json:"t_s"`
	// Event is WhySubmitted, WhyWaiting, WhyStarted, WhyPreempted or
	// WhyFinished.
	Event string `json:"event"`
	// Reason is why it waits (Event WhyWaiting): reason.VirtualQueue (its
	// virtual work on A-SRPT's machine is not done), reason.Behind (other
	// jobs are ahead of it in the waiting order), or, at the head,
	// reason.NoRoom (fewer GPUs free than it asks for) or reason.Blocked
	// (enough GPUs free in all, yet not started).
	Reason reason.Reason `json:"reason,omitzero"`
	// Rank is its 1-based place in the policy's waiting order and Waiting
	// the number of waiting jobs (0 when it does not wait).
	Rank    int `json:"rank,omitempty"`
	Waiting int `json:"waiting,omitempty"`
	// Free is the GPUs free after the step's decisions.
	Free int `json:"free_gpus"`
	// Passed counts the jobs that started while the traced job waited,
	// since the previous step (this step's decisions included).
	Passed int `json:"passed"`
}

// tracer keeps the steps of one traced job.
type tracer struct {
	seq     int // the job's index, -1 when none is traced
	virtual bool
	last    reason.Code
	bucket  int // bits.Len of the last rank kept
	passed  int // jobs started past the traced job since the last step
	steps   []WhyStep
	dropped int
}

// newTracer finds job id among jobs; "" traces nothing. A job that is not
// there is an error.
func newTracer(id string, jobs interface {
	Len() int
	ID(int) string
}, pol string) (*tracer, error) {
	tr := &tracer{seq: -1}
	if id == "" {
		return tr, nil
	}
	for i := range jobs.Len() {
		if jobs.ID(i) == id {
			base, _ := policy.Split(pol)
			tr.seq, tr.virtual = i, policy.Virtual(base)
			return tr, nil
		}
	}
	return nil, fmt.Errorf("sim: --why %q: no such job in the replay (jobs larger than the cluster are left out)", id)
}

// add keeps step s unless the bound is reached.
func (tr *tracer) add(s WhyStep) {
	if len(tr.steps) >= MaxWhySteps {
		tr.dropped++
		return
	}
	tr.steps = append(tr.steps, s)
}

// event records what happened to task t at now, if it is the traced job.
func (tr *tracer) event(now float64, t *policy.Task, ev string, free *placement.Free) {
	if t.Seq != tr.seq {
		return
	}
	tr.add(WhyStep{Time: now, Event: ev, Free: free.Total(), Passed: tr.passed})
	tr.last, tr.bucket, tr.passed = "", 0, 0
}

// started counts task t's start when the traced job waits (waiting true).
func (tr *tracer) started(t *policy.Task, waiting bool) {
	if waiting && t.Seq != tr.seq {
		tr.passed++
	}
}

// waiting records, after the decisions at now, why the traced job t still
// waits, when the reason changed or its rank moved by a factor of four. It reads the
// policy's waiting order: O(waiting jobs) at each event while the traced
// job waits.
func (tr *tracer) waiting(now float64, t *policy.Task, pol policy.Policy, free *placement.Free) {
	if t == nil || t.Seq != tr.seq || !t.Pending() {
		return
	}
	f := free.Total()
	order := pol.Pending()
	rank := 0
	for i, o := range order {
		if o == t {
			rank = i + 1
			break
		}
	}
	var why reason.Reason
	switch {
	case tr.virtual && math.IsNaN(t.Released):
		why = reason.Of(reason.VirtualQueue, fmt.Sprintf("%.0f s of virtual work left on A-SRPT's machine before its release", t.VirtualRemaining()))
	case rank > 1:
		why = reason.Of(reason.Behind, fmt.Sprintf("%d jobs ahead of it in the waiting order", rank-1))
	case f < t.GPUs:
		why = reason.Of(reason.NoRoom, fmt.Sprintf("needs %d GPUs, %d free", t.GPUs, f))
	default:
		why = reason.Of(reason.Blocked, fmt.Sprintf("needs %d GPUs, %d free: kept for the jobs running or reserved, or for a consolidated placement", t.GPUs, f))
	}
	if b := bits.Len(uint(rank)); why.Code == tr.last && b-tr.bucket < 2 && tr.bucket-b < 2 {
		return
	}
	tr.add(WhyStep{Time: now, Event: WhyWaiting, Reason: why, Rank: rank, Waiting: len(order), Free: f, Passed: tr.passed})
	tr.last, tr.bucket, tr.passed = why.Code, bits.Len(uint(rank)), 0
}
