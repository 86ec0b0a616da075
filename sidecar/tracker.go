package sidecar

import (
	"math"
	"sync/atomic"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// tracker is the decide step's state: the jobs asrpt tracks, the policy
// that ranks them and the predictor that sizes them. Its methods read a
// snapshot and change only the tracker: no Slurm call, no file, no log
// line, no metric. What the shell (Sidecar) is to count or log they leave
// as events (takeEvents); what it is to write they return as decisions.
type tracker struct {
	cfg Config
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

	entries  map[string]*entry
	byTask   map[*policy.Task]*entry
	nextSeq  int
	nextDSeq int
	clock    float64 // time of the last cycle, Unix seconds
	finished map[string]finishedJob
	// ended holds the tracked jobs accounting reported ended (any state)
	// while the job list still showed them or since it last did: missing
	// from a list, they are finished at once (see absentCycles).
	ended map[string]bool
	// unreadable holds the ids of this cycle's job records the client
	// skipped (slurmclient.RecordErrors): listed, though not usable.
	unreadable map[string]bool
	// dirty is set when the tracked state changed since it was last
	// saved.
	dirty bool
	// regroups holds the recurrence groups (user, predictor.Family) of the
	// jobs accounting reported finished this cycle: their waiting jobs are
	// predicted again (design §5.3).
	regroups map[[2]string]bool

	// mode is the write mode in effect: cfg.WriteMode, or WritePriority
	// after a fallback (cfg.PriorityFallback).
	mode WriteMode

	// labels labels the ranked jobs (priority mode); factors is the buffer
	// of the site factors (factor mode).
	labels  labeler
	factors []uint32

	// stops are the jobs this cycle's pass preempted, to be signalled by
	// apply (preempt.go).
	stops []*entry

	// view groups this cycle's records of arrays and heterogeneous jobs.
	view queueView

	// events are what the tracker saw since the shell last took them.
	events []event
}

// newTracker returns an empty tracker for cfg on cluster cl.
func newTracker(cfg Config, cl *cluster.Cluster, pred predictor.Predictor, mode WriteMode, tiers map[string]int,
	supportsDelivery func(slurmclient.Delivery) bool, givenBack *atomic.Bool) (*tracker, error) {
	env := policy.NewEnv(cl, cfg.Params)
	pol, err := policy.New(cfg.Policy, env)
	if err != nil {
		return nil, err
	}
	tr := &tracker{
		cfg: cfg, nodes: newNodeView(cl, tiers), env: env, pol: pol, pred: pred, profiles: cfg.Profiles.Resolver(),
		supportsDelivery: supportsDelivery, givenBack: givenBack,
		entries: map[string]*entry{}, byTask: map[*policy.Task]*entry{}, regroups: map[[2]string]bool{},
		finished: map[string]finishedJob{}, ended: map[string]bool{}, unreadable: map[string]bool{},
		clock: math.Inf(-1), mode: mode,
	}
	env.Allow = tr.allow
	return tr, nil
}

// note records ev for the shell.
func (tr *tracker) note(ev event) { tr.events = append(tr.events, ev) }

// takeEvents returns the events recorded since the last call and forgets
// them.
func (tr *tracker) takeEvents() []event {
	evs := tr.events
	tr.events = nil
	return evs
}

// nextChange returns the earliest time (Unix seconds) at which a decide
// step may plan differently from the last one on the same snapshot: the
// policy's next event (a virtual release, a wait bound), the end of a
// dispatched job's grace on its nodes, the end of a failed write's
// backoff, the predicted end of a running job (a reservation moves when
// it passes); +Inf when none.
func (tr *tracker) nextChange() float64 {
	next := tr.pol.NextEvent(tr.clock)
	grace := tr.cfg.DispatchGrace.Seconds()
	for _, e := range tr.entries {
		if e.task != nil {
			if end := e.task.PredictedEnd(); end > tr.clock {
				// A pass at end or later sees it passed (running.refresh).
				next = math.Min(next, end)
			}
		}
		if e.ph == phDispatched {
			// placeDispatched moves a job once it has waited longer
			// than the grace.
			next = math.Min(next, math.Nextafter(e.placedAt+grace, math.Inf(1)))
		}
		for _, f := range e.fails {
			next = math.Min(next, f.next)
		}
	}
	return next
}
