package decision

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/reason"
)

// Decision is what asrpt wants of one managed pending job this cycle: its
// priority (priority mode) or site factor (factor mode; setFactor when it
// is to be written, see multifactor.FactorDue) and, for a job whose turn has come, the
// node list (nil when none is to be written, for the reason in why) and
// the per-node GPU count (0: none).
type Decision struct {
	Entry       *Entry
	Priority    uint32
	Factor      uint32
	SetFactor   bool
	Nodes       []string
	GPUsPerNode int
	Why         reason.Reason
}

// Plan is one decide step's result: what the shell is to write, whom
// to stop, and what it is to count and log. It holds no I/O; apply sends
// it, and the plan rows (asrpt plan, /plan) are built from it.
type Plan struct {
	// Decisions has one decision per managed pending job, head of the
	// queue first (State.Decisions: valid until the next step).
	Decisions []Decision
	// Stops are the running jobs the policy preempted, to be signalled.
	Stops []*Entry
	// Events are what the step saw that the shell counts or logs.
	Events []Event
	// Jobs counts the Jobs seen, by state (CycleReport.Jobs).
	Jobs map[string]int
	// Arrived, Released, Dispatched and Virtual count as in CycleReport.
	Arrived, Released, Dispatched, Virtual int
	// Suspect says why the job list was suspect (nil when it was not): the
	// step then planned nothing.
	Suspect error
}

// Decide is the decide step: from snap, the cycle's read of Slurm, and
// st, the tracked jobs and the policy as the last step left them, it
// returns the plan for time t (Unix seconds; a t before the last step's
// is taken as the last step's: the policy's time never goes back). A
// suspect job list (Plan.Suspect: see suspectMinJobs) changes nothing
// but the absence counts and plans nothing. Otherwise it brings st up to date
// (arrivals, departures, re-predictions), places the jobs whose turn has
// come on the free GPUs snap shows and ranks the managed pending jobs. It
// reads nothing from Slurm, writes nothing to it and neither logs nor
// counts: the same snapshots given to the same state give the same plans.
// st is the state passed from one step to the next and is updated in
// place (the policy's queues are pointer structures that a copy per cycle
// would cost O(jobs) to clone: 2.4–2.8 steady cycles for 20,000 jobs,
// sidecar's BenchmarkStateCopy20k); the caller keeps no other reference
// to what it held.
func Decide(snap *Snapshot, st *State, t float64) Plan {
	p := Plan{Jobs: map[string]int{}}
	t = max(t, st.Clock)
	st.Clock = t
	if p.Suspect = st.suspect(snap.Jobs); p.Suspect != nil {
		return p
	}
	st.view = newQueueView(snap.Jobs, t, st.cfg.Scope, st.env.G, len(st.nodes.tiers) > 0)
	st.tellRunning(t, snap.Jobs)
	p.Arrived = st.reconcile(t, snap.Jobs, p.Jobs)
	st.repredict(t)
	free := st.nodes.freeModel(snap.Nodes, snap.Jobs, st.cfg.Scope.Partitions)
	st.nodes.claimTiers(st.view.claimed)
	st.placeDispatched(t, free)
	st.armPreemption()
	p.Dispatched = st.schedule(t, free)
	if errs, n := st.env.TakeErrors(); n > 0 {
		st.note(Event{Kind: EvPlacementFailed, N: n, Err: errs[0]})
	}
	p.Released, p.Virtual = st.releases()
	p.Decisions = st.Decisions()
	p.Stops = slices.Clone(st.stops)
	st.stops = st.stops[:0]
	p.Events = st.TakeEvents()
	return p
}

// Decisions returns the Decisions for the managed pending jobs in the
// order Slurm should start them: dispatched jobs in dispatch order, then
// the policy's order, with the standing jobs put in (withStanding).
//
// The slice is the state's buffer, reused by the next call: valid until
// the next step.
func (tr *State) Decisions() []Decision {
	ranked := tr.dispatched(tr.ranked[:0])
	for _, t := range tr.pol.Pending() {
		if e := tr.byTask[t]; e != nil && e.Phase == PhQueued {
			ranked = append(ranked, e)
		}
	}
	ranked = tr.withStanding(ranked)
	ds := slices.Grow(tr.decisions[:0], len(ranked))[:len(ranked)]
	if tr.Mode == WriteFactor {
		tr.factors = multifactor.SiteFactors(len(ranked), tr.cfg.SiteFactorMax, tr.factors)
		for i, e := range ranked {
			// An explicit priority asrpt set before (priority mode) masks
			// the factor: it goes with the factor's write.
			f := tr.factors[i]
			ds[i] = Decision{Entry: e, Factor: f, SetFactor: e.Prio != 0 || multifactor.FactorDue(e.Factor, f, tr.cfg.SiteFactorMax, i < multifactor.FactorHead || e.High())}
		}
	} else {
		want := tr.labels.label(ranked)
		for i, e := range ranked {
			ds[i] = Decision{Entry: e, Priority: want[i]}
		}
	}
	for i := range ds {
		ds[i].Nodes, ds[i].GPUsPerNode, ds[i].Why = tr.nodes.nodeUpdate(ds[i].Entry, tr.cfg)
		if ds[i].Nodes == nil && unpin(ds[i].Entry) {
			ds[i].Nodes = []string{} // cleared: see unpin
		}
	}
	clear(ranked) // holds no entry past the step
	tr.ranked, tr.decisions = ranked[:0], ds
	return ds
}

// High reports whether e belongs to the upper priority band: its turn has
// come, or the policy's virtual machine released it.
func (e *Entry) High() bool {
	return e.Phase == PhDispatched || (e.Task != nil && !math.IsNaN(e.Task.Released))
}
