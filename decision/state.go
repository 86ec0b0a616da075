package decision

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// State is the decide step's state: the jobs asrpt tracks, the policy
// that ranks them and the predictor that sizes them. Its methods read a
// snapshot and change only the State: no Slurm call, no file, no log
// line, no metric. What the shell (Sidecar) is to count or log they leave
// as events (TakeEvents); what it is to write they return as decisions.
type State struct {
	cfg Settings
	// nodes is the cluster as this cycle's snapshot shows it.
	nodes    nodeView
	env      *policy.Env
	pol      policy.Policy
	pred     predictor.Predictor
	profiles *jobprofile.Resolver
	// supportsDelivery reports whether the REST API can send a signal
	// that way (slurmclient.Client.SupportsDelivery).
	supportsDelivery func(slurmclient.Delivery) bool
	// givenBack is the shell's: set once it handed its jobs back, after
	// which no job is preempted.
	givenBack *atomic.Bool

	Entries  map[string]*Entry
	byTask   map[*policy.Task]*Entry
	nextSeq  int
	nextDSeq int
	Clock    float64 // time of the last cycle, Unix seconds
	finished map[string]finishedJob
	// ended holds the tracked jobs accounting reported ended (any state)
	// while the job list still showed them or since it last did: missing
	// from a list, they are finished at once (see AbsentCycles).
	ended map[string]bool
	// Unreadable holds the ids of this cycle's job records the client
	// skipped (slurmclient.RecordErrors): listed, though not usable.
	Unreadable map[string]bool
	// Dirty is set when the tracked state changed since it was last
	// saved.
	Dirty bool
	// regroups holds the recurrence groups (user, predictor.Family) of the
	// jobs accounting reported finished this cycle: their waiting jobs are
	// predicted again (design §5.3).
	regroups map[[2]string]bool
	// running holds the ids of the jobs the predictor was told run now
	// (tellRunning); runningNext is the map the next cycle fills.
	running, runningNext map[string]bool
	// runningLeft holds the jobs that left the running list for good
	// (ended, not requeued) and the time each left, in Unix seconds,
	// until accounting reports them or endedGrace passes (tellRunning).
	runningLeft map[string]float64

	// Mode is the write Mode in effect: cfg.WriteMode, or WritePriority
	// after a fallback (cfg.PriorityFallback).
	Mode WriteMode

	// labels labels the ranked jobs (priority mode); factors is the buffer
	// of the site factors (factor mode).
	labels  labeler
	factors []uint32

	// ranked and decisions are Decisions' buffers.
	ranked    []*Entry
	decisions []Decision
	// lists numbers the job lists suspect has seen.
	lists uint64

	// stops are the jobs this cycle's pass preempted, to be signalled by
	// apply (preempt.go).
	stops []*Entry

	// view groups this cycle's records of arrays and heterogeneous jobs.
	view queueView

	// events are what the step saw since the shell last took them.
	events []Event
}

// NewState returns an empty state for cfg on cluster cl.
func NewState(cfg Settings, cl *cluster.Cluster, pred predictor.Predictor, mode WriteMode, tiers map[string]int,
	supportsDelivery func(slurmclient.Delivery) bool, givenBack *atomic.Bool) (*State, error) {
	env := policy.NewEnv(cl, cfg.Params)
	pol, err := policy.New(cfg.Policy, env)
	if err != nil {
		return nil, err
	}
	tr := &State{
		cfg: cfg, nodes: newNodeView(cl, tiers), env: env, pol: pol, pred: pred, profiles: profilesOf(cfg),
		supportsDelivery: supportsDelivery, givenBack: givenBack,
		Entries: map[string]*Entry{}, byTask: map[*policy.Task]*Entry{}, regroups: map[[2]string]bool{},
		finished: map[string]finishedJob{}, ended: map[string]bool{}, Unreadable: map[string]bool{},
		Clock: math.Inf(-1), Mode: mode,
	}
	env.Allow = tr.allow
	return tr, nil
}

// Reconfigure puts settings in effect from the next step on (a
// configuration reload: the policy and its parameters are not among what
// a reload may change).
func (tr *State) Reconfigure(settings Settings) {
	tr.cfg = settings
	tr.profiles = profilesOf(settings)
}

// profilesOf is settings' profile resolver, the default one when none.
func profilesOf(settings Settings) *jobprofile.Resolver {
	if settings.Profiles == nil {
		return &jobprofile.Resolver{}
	}
	return settings.Profiles
}

// note records ev for the shell.
func (tr *State) note(ev Event) { tr.events = append(tr.events, ev) }

// TakeEvents returns the events recorded since the last call and forgets
// them.
func (tr *State) TakeEvents() []Event {
	evs := tr.events
	tr.events = nil
	return evs
}

// NextChange returns the earliest time (Unix seconds) at which a decide
// step may plan differently from the last one on the same snapshot: the
// policy's next event (a virtual release, a wait bound), the end of a
// dispatched job's grace on its nodes, the end of a failed write's
// backoff, the predicted end of a running job (a reservation moves when
// it passes); +Inf when none.
func (tr *State) NextChange() float64 {
	next := tr.pol.NextEvent(tr.Clock)
	grace := tr.cfg.DispatchGrace.Seconds()
	for _, e := range tr.Entries {
		if e.Task != nil {
			if end := e.Task.PredictedEnd(); end > tr.Clock {
				// A pass at end or later sees it passed (running.refresh).
				next = math.Min(next, end)
			}
		}
		if e.Phase == PhDispatched {
			// placeDispatched moves a job once it has waited longer
			// than the grace.
			next = math.Min(next, math.Nextafter(e.placedAt+grace, math.Inf(1)))
		}
		for _, f := range e.Fails {
			next = math.Min(next, f.Next)
		}
	}
	return next
}

func (tr *State) Reset() {
	tr.pol, _ = policy.New(tr.cfg.Policy, tr.env)
	tr.Entries = map[string]*Entry{}
	tr.byTask = map[*policy.Task]*Entry{}
	tr.nextSeq, tr.nextDSeq = 0, 0
	tr.Clock = math.Inf(-1)
}

// unixSeconds returns t in Unix seconds.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
