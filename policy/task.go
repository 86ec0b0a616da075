// Package policy holds the scheduling policies: A-SRPT (design §4–§5) and the
// baselines of §6. One Policy value serves both the replay simulator and the
// live sidecar unchanged: it is told about arrivals and completions, hands
// out start decisions with placements, and orders the pending jobs; it never
// reads the clock (now is passed in, in seconds) and never starts jobs itself.
package policy

import (
	"fmt"
	"math"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// Unseen says what A-SRPT does with jobs the predictor has never seen
// (design §5).
type Unseen int

const (
	// UnseenFirst predicts 0 for unseen jobs, so they are released at once
	// (the paper's rule).
	UnseenFirst Unseen = iota
	// UnseenFallback uses the predictor's nearest-group fallback (ours).
	UnseenFallback
)

// String returns the setting's name as used on the command line.
func (u Unseen) String() string {
	if u == UnseenFallback {
		return "fallback"
	}
	return "first"
}

// ParseUnseen parses "first" or "fallback".
func ParseUnseen(s string) (Unseen, error) {
	switch s {
	case "first":
		return UnseenFirst, nil
	case "fallback":
		return UnseenFallback, nil
	}
	return 0, fmt.Errorf("unseen: %q is not first or fallback", s)
}

// Rank says which of a prediction's two numbers orders the waiting jobs of
// the prediction-ordered policies (design §5.4).
type Rank int

const (
	// RankMedian orders by the predicted median (Estimate.Fit).
	RankMedian Rank = iota
	// RankExpected orders by the expected run time (Estimate.Seconds): the
	// SEPT / cμ rule.
	RankExpected
)

// String returns the setting's name as used on the command line.
func (r Rank) String() string {
	if r == RankExpected {
		return "expected"
	}
	return "median"
}

// ParseRank parses "median" or "expected".
func ParseRank(s string) (Rank, error) {
	switch s {
	case "median":
		return RankMedian, nil
	case "expected":
		return RankExpected, nil
	}
	return 0, fmt.Errorf("rank: %q is not median or expected", s)
}

// RankFor returns the ranking measured best for the named predictor on the
// quality suite (README, "Which prediction asrpt ranks by"): the expected
// value for mean-gpus and mean-gpus-running, whose median ranks no better
// than the family median's; the median for every other, whose figures were measured so
// (the forest ranked by its expected value is worse than the family median
// beyond the noise on more cases than ranked by its median). It is the
// default of --rank and of the sidecar's policy.rank.
func RankFor(predictor string) Rank {
	if predictor == "mean-gpus" || predictor == "mean-gpus-running" {
		return RankExpected
	}
	return RankMedian
}

// Params are the tunables of the policies. The zero value is not useful;
// start from DefaultParams. Validate checks every field's range.
type Params struct {
	// CommHeavy is the α_max/α_min ratio from which a job counts as
	// communication-heavy (design §2).
	CommHeavy float64
	// Tau is the delay factor τ: a communication-heavy job at the head of the
	// release queue waits at most τ·p for a consolidated placement.
	Tau float64
	// Slack is the placement slack: a placement is consolidated when
	// α(π) ≤ α_min·(1+Slack).
	Slack float64
	// Unseen is the revised dispatch's rule for jobs without history
	// before their GPU-count class can size them; paper mode always uses
	// the paper's rule (UnseenFirst).
	Unseen Unseen
	// Depth bounds how many queued jobs one scheduling pass examines past
	// the head (as Slurm's bf_max_job_test does); ≤ 0 means no bound.
	Depth int
	// Reservations is K of A-SRPT's revised dispatch (design §5.2): the
	// first K released jobs that cannot start now each get the earliest
	// window of their predicted length in the free-GPU profile; later
	// jobs start only where they delay none of them. ≥ 1 (0 makes the
	// dispatch work-conserving, for comparison).
	Reservations int
	// Rank is the number of a prediction that orders waiting jobs.
	Rank Rank
	// WaitLimit bounds waiting, seconds: a job of the revised dispatch
	// that has waited this long since submit moves to the front of the
	// A-SRPT order (released, ahead of every job not yet overdue, overdue
	// jobs among themselves by the time they became overdue). 0: no
	// absolute bound.
	WaitLimit float64
	// WaitFactor bounds waiting relative to the job: a job that has waited
	// WaitFactor times its predicted run time (the ranked prediction, at
	// least MinWaitBase seconds) is overdue too. 0: no relative bound. A
	// job is overdue at the first bound it reaches.
	WaitFactor float64
	// WaitScale bounds waiting relative to the queue: a job that has
	// waited WaitScale times the mean wait of the last RecentStarts jobs
	// started (at least MinWaitBase seconds) is overdue too, so that the
	// bound follows the load: under heavy overload, when every job waits
	// days, only the jobs left far behind the others move to the front.
	// 0: no such bound.
	WaitScale float64
	// OverdueShare caps the front, as a share of the cluster's GPUs: the
	// overdue jobs at the front of the A-SRPT order ask for at most
	// OverdueShare·G GPUs together (one job at least). A job that becomes
	// overdue beyond the cap keeps its SRPT place, late, and moves to the
	// front, the earliest overdue first, when the jobs there start and
	// leave room. Under overload many jobs become overdue at once; the cap
	// keeps them from turning the whole order first come, first served.
	// 0: no cap, every overdue job moves to the front at once.
	OverdueShare float64
	// AccountGuard guards an account's large jobs against its own later,
	// smaller ones: a waiting job becomes overdue (and moves to the front
	// as the wait bound moves it, under OverdueShare's cap) once the jobs
	// of its account submitted after it, with fewer GPUs, that started
	// while it waited sum to AccountGuard times its own predicted
	// GPU-seconds (GPUs × ranked prediction). 0: no guard.
	AccountGuard float64
	// ShadowWait bounds waiting against the site's age order: a waiting
	// job becomes overdue (and moves to the front as the wait bound moves
	// it, under OverdueShare's cap) once it has waited ShadowWait ×
	// max(ranked prediction, ShadowFloor) seconds past its start in the
	// age shadow, a virtual machine of the cluster's GPUs that serves the
	// jobs in arrival order, each for GPUs × ranked prediction / G
	// seconds. The paired comparison counts a job harmed when it ends
	// more than max(1 h, its run time) later than under the site's policy;
	// this bound aims at that measure. 0: no shadow bound.
	ShadowWait float64
	// PreemptExempt is asrpt-preempt's exemption, seconds: a job that has
	// run less than this since its last start is never preempted, so a
	// preemptible job is stopped at most once per exemption (as Slurm's
	// PreemptExemptTime).
	PreemptExempt float64
	// MaxPreemptions bounds how often asrpt-preempt stops one job: after
	// that many, it runs to its end once started. ≥ 1 for asrpt-preempt.
	MaxPreemptions int
	// PreemptBudget is the most jobs one asrpt-preempt pass preempts.
	PreemptBudget int
	// PreemptMargin is how many times the virtual work of the job it makes
	// way for a running job's remaining virtual work must be before
	// asrpt-preempt stops it (≥ 1): a misprediction of the head or the
	// victim by less than this factor does not swap them.
	PreemptMargin float64
	// RestartCost is the time in seconds a preempted job spends on its GPUs
	// after each restart before it makes progress again (requeue, start-up,
	// loading its checkpoint). The replay charges it to every preemption
	// of every policy; asrpt-preempt counts it against preempting.
	RestartCost float64
	// LASExempt is las's exemption, seconds: a job that has run less than
	// this since its last start is not preempted (it ranks before every
	// queue meanwhile). 0, the default, is Tiresias' 2D-LAS as published.
	LASExempt float64
	// RequeueDelay is the time in seconds a job asrpt-preempt stopped
	// cannot start again (it holds no GPUs meanwhile): Slurm holds a
	// requeued job about 121 s (Reason=BeginTime, measured on the labs).
	// 0 (the default): it may start again in the next pass. The live
	// sidecar sees Slurm's hold and leaves it 0.
	RequeueDelay float64
	// LostWork is the work in seconds a preempted job loses at each
	// preemption (what it did since its last checkpoint; 0 when it
	// checkpoints on the signal), at most what it did in that run.
	LostWork float64
}

// RecentStarts is how many of the latest starts WaitScale's mean wait is
// over.
const RecentStarts = 128

// MinWaitBase is the least predicted run time, seconds, that WaitFactor
// multiplies: a job predicted to run seconds is not overdue after seconds
// of waiting.
const MinWaitBase = 600

// ShadowFloor is the least predicted run time, seconds, that ShadowWait
// scales: an hour, the floor of the paired comparison's harm.
const ShadowFloor = 3600

// DefaultParams returns the documented defaults: COMM_HEAVY 1.5, τ 0,
// slack 0.05, unseen jobs by the predictor's fallback, depth 1000, K =
// DefaultReservations, ranking by the median (each chosen on the quality
// suite; README, "Where asrpt departs…").
func DefaultParams() Params {
	return Params{CommHeavy: 1.5, Tau: 0, Slack: 0.05, Unseen: UnseenFallback, Depth: 1000,
		Reservations: DefaultReservations, Rank: RankMedian,
		PreemptExempt: DefaultPreemptExempt, MaxPreemptions: DefaultMaxPreemptions, PreemptBudget: DefaultPreemptBudget, PreemptMargin: DefaultPreemptMargin}
}

// The defaults of asrpt-preempt's tunables: an exemption of an hour, at
// most 3 preemptions of one job, at most 4 preemptions a pass. The replay
// charges no restart cost and loses no work by default (las keeps its
// figures); asrpt-preempt is measured with both (README).
const (
	DefaultPreemptExempt  = 3600
	DefaultMaxPreemptions = 3
	DefaultPreemptBudget  = 4
	DefaultPreemptMargin  = 4
)

// DefaultReservations is the default K of A-SRPT's revised dispatch,
// chosen on the quality suite (README, "Where asrpt departs…").
const DefaultReservations = 4

// Env is what the policies need of the world. It is shared by every policy
// of one replay or sidecar and is read-only after construction.
type Env struct {
	Cluster *cluster.Cluster
	Placer  *placement.Placer
	// G is the cluster's GPU count.
	G      int
	Params Params
	// Site is the priority configuration the multifactor model replays;
	// nil means ExampleSite().
	Site *Site
	// Allow, when set, limits each job to the nodes it may use (a live
	// job's partitions and excluded nodes); the policies place through
	// it. nil (the replay) allows every node.
	Allow NodeFilter

	// Controller, when set, polls the multifactor model's queue and
	// writes to it (asrpt-sidecar; package loop); controllerErr is the
	// error of its last poll, which ends the replay (ControllerErr).
	Controller    Controller
	controllerErr error

	// errs and failed hold the placement failures until TakeErrors.
	errs   []error
	failed int
	// started and preempted are Dispatch's buffers.
	started   []Dispatched
	preempted []*Task
}

// Fork returns a copy of e for one more run beside the others that share
// e: the cluster, the placer (safe for concurrent use) and the parameters
// are shared; the failures and buffers a run keeps are its own. Replays
// that run at once (asrpt quality) each fork the Env they were prepared
// with.
func (e *Env) Fork() *Env {
	c := *e
	c.errs, c.failed, c.started, c.preempted = nil, 0, nil, nil
	return &c
}

// NewEnv returns the environment for cluster c.
func NewEnv(c *cluster.Cluster, p Params) *Env {
	return &Env{Cluster: c, Placer: placement.NewPlacer(c), G: c.TotalGPUs(), Params: p}
}

// Task is a job as the policies see it: the record plus what is derived from
// it at arrival (profile, α bounds, the prediction) and its scheduling state.
// The replay and the sidecar create Tasks with Env.NewTask; policies own the
// scheduling fields.
type Task struct {
	*job.Job
	// gpus is Job.GPUs as the task was made, and released says whether
	// A-SRPT released it: kept next to the record's pointer so that a
	// scheduling pass walking many waiting tasks reads one cache line of
	// each, not the job record too.
	gpus     int
	released bool
	// Seq is the task's arrival sequence number, the last tie-break.
	Seq int
	// Prof is the job's model profile; nil for a plain job.
	Prof *placement.Profile
	// AlphaMin and AlphaMax bound the job's per-iteration time in seconds
	// (both 1 for plain jobs, whose run time does not depend on placement).
	AlphaMin, AlphaMax float64
	// Heavy reports a communication-heavy job (α_max/α_min ≥ CommHeavy).
	Heavy bool
	// Reference is the job's true run time at α_min, seconds: Iterations·α_min
	// for a profiled job, RunTime otherwise (0 when not known yet).
	Reference float64
	// Est is the current prediction for the reference run time: made at
	// arrival, replaced when the job is predicted again while it waits.
	Est prediction.Estimate
	// UnseenAtSubmit reports that the predictor knew nothing like the job
	// when it was submitted (Est.Known was false at arrival).
	UnseenAtSubmit bool
	// Blocked reports a waiting job that cannot start for a reason other
	// than free GPUs and its place in the order (live: Slurm holds it back
	// for a dependency, a begin time, a limit, a reservation). Every
	// non-preemptive policy keeps ranking it, with its virtual progress, but never starts
	// it and never reserves GPUs for it; a blocked job at the head blocks
	// nobody. The sidecar sets it every cycle; replays never do.
	Blocked bool

	// Scheduling state, owned by the policy and the simulator.

	// Released is the virtual release time (A-SRPT), or NaN before release.
	Released float64
	// Start is the (last) start time, NaN while pending.
	Start float64
	// Placement and Alpha describe where the job runs now.
	Placement placement.Placement
	Alpha     float64
	// Attained is the GPU-seconds of service received (2D-LAS).
	Attained float64

	virtual     float64 // virtual size p (A-SRPT), seconds
	remaining   float64 // virtual work left (A-SRPT), seconds
	key         float64 // queue order key
	end         float64 // predicted end while running, seconds
	level       int     // 2D-LAS queue level
	exempt      bool    // 2D-LAS: running within Params.LASExempt of its last start, not preempted
	lastSeen    float64 // 2D-LAS: time Attained was last brought up to date
	due         float64 // A-SRPT: when the job becomes overdue (Params.WaitLimit, WaitFactor), +Inf when never
	overdue     bool    // A-SRPT: moved to the front of the order by the wait bound
	late        bool    // A-SRPT: overdue, waiting in its SRPT place for room at the front
	shadowStart float64 // A-SRPT: the job's start in the age shadow (Params.ShadowWait), seconds
	overtaken   float64 // A-SRPT: GPU-seconds of its account's later, smaller jobs started while it waited (Params.AccountGuard)
	prio        float64 // multifactor: the priority Slurm computes, without the site factor
	site        uint32  // asrpt-factor: the site factor of the job's A-SRPT rank; asrpt-sidecar: the one written
	explicit    uint32  // asrpt-sidecar: the priority written (0: none, multifactor's counts)
	required    []int   // asrpt-sidecar: the nodes the job is bound to (nil: any)
	reqGPN      int     // asrpt-sidecar: the GPUs per node written with them (0: none)
	tier        uint32  // multifactor: the PriorityTier of the job's partition
	order       float64 // multifactor: queue order key, lower first
	assoc       *multifactor.Association
	node        treeNode // the running set's tree (endTree), while running
	running     bool
	// Preemptible reports a job that opted in to preemption (the replay's
	// --preemptible rule): only asrpt-preempt reads it; las preempts every job.
	Preemptible bool
	// Preemptions counts how often the job was stopped.
	Preemptions int
	served      float64 // asrpt-preempt: run time of the earlier runs, seconds at α_min
	stopped     float64 // asrpt-preempt: time of the last preemption
	rank        Rank    // Params.Rank when the task was made
}

// NewTask derives a Task from j at its arrival, with prediction est for its
// reference run time. The seq number breaks ties between equal keys. A
// profiled job (j.Profiled) gets its catalogue profile.
func (e *Env) NewTask(j *job.Job, seq int, est prediction.Estimate) (*Task, error) {
	var prof *placement.Profile
	if j.Profiled() {
		p, err := placement.Lookup(j.Profile, j.GPUs)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.ID, err)
		}
		prof = p
	}
	return e.newTask(j, seq, est, prof)
}

// NewLiveTask is NewTask for a job that runs for real, outside any replay:
// its profile prof (nil for a plain job) comes from the caller, and its
// true run time is not known (Reference stays j.RunTime, 0 while it
// waits). est is read as the run time at the consolidated placement
// (α_min), as the replay's profiled jobs have it.
func (e *Env) NewLiveTask(j *job.Job, seq int, est prediction.Estimate, prof *placement.Profile) (*Task, error) {
	if prof != nil {
		if err := prof.Validate(); err != nil {
			return nil, fmt.Errorf("job %s: %w", j.ID, err)
		}
		if prof.GPUs() != j.GPUs {
			return nil, fmt.Errorf("job %s: profile %q has %d GPUs, the job %d", j.ID, prof.Model, prof.GPUs(), j.GPUs)
		}
	}
	t, err := e.newTask(j, seq, est, prof)
	if err == nil {
		t.Reference = j.RunTime
	}
	return t, err
}

func (e *Env) newTask(j *job.Job, seq int, est prediction.Estimate, prof *placement.Profile) (*Task, error) {
	t := &Task{Job: j, gpus: j.GPUs, Seq: seq, AlphaMin: 1, AlphaMax: 1, Est: est, UnseenAtSubmit: !est.Known,
		Released: math.NaN(), Start: math.NaN(), rank: e.Params.Rank}
	if j.GPUs <= 0 {
		return nil, fmt.Errorf("job %s: %d GPUs", j.ID, j.GPUs)
	}
	if j.GPUs > e.G {
		return nil, fmt.Errorf("job %s: %w: %d GPUs on a %d-GPU cluster", j.ID, ErrTooLarge, j.GPUs, e.G)
	}
	t.Reference = j.RunTime
	if prof != nil {
		t.Prof = prof
		t.AlphaMin, t.AlphaMax = e.Placer.Bounds(prof)
		t.Heavy = t.AlphaMax >= e.Params.CommHeavy*t.AlphaMin
		t.Reference = j.Iterations * t.AlphaMin
	}
	return t, nil
}

// ErrTooLarge marks a job that asks for more GPUs than the cluster has.
var ErrTooLarge = fmt.Errorf("job larger than the cluster")

// Ranked returns the predicted run time in seconds at the reference
// placement that orders the task among waiting jobs: the median or the
// expected value, by Params.Rank.
func (t *Task) Ranked() float64 {
	if t.rank == RankExpected {
		return t.Est.Seconds
	}
	return t.Est.Fit()
}

// Predicted returns the predicted run time in seconds of the task at its
// reference placement, as the ordering policies use it.
func (t *Task) Predicted() float64 { return t.Est.Seconds }

// PredictedOn returns the predicted run time in seconds under a placement
// with per-iteration time alpha.
func (t *Task) PredictedOn(alpha float64) float64 {
	if t.Prof == nil || t.AlphaMin <= 0 {
		return t.Est.Seconds
	}
	return t.Est.Seconds * alpha / t.AlphaMin
}

// FitOn returns the median predicted run time in seconds under a placement
// with per-iteration time alpha, for fitting into a reservation hole.
func (t *Task) FitOn(alpha float64) float64 {
	if t.Prof == nil || t.AlphaMin <= 0 {
		return t.Est.Fit()
	}
	return t.Est.Fit() * alpha / t.AlphaMin
}

// TrueRunTime returns the task's real run time in seconds under a placement
// with per-iteration time alpha (simulator use: it reads the true size).
func (t *Task) TrueRunTime(alpha float64) float64 {
	if t.Prof == nil {
		return t.RunTime
	}
	return t.Iterations * alpha
}

// VirtualRemaining returns the job's virtual work left on A-SRPT's virtual
// machine in seconds, as of the policy's last update; 0 once released or
// for the other policies.
func (t *Task) VirtualRemaining() float64 {
	if t.released {
		return 0
	}
	return t.remaining
}

// Pending reports whether the task waits to be started.
func (t *Task) Pending() bool { return !t.running }
