package sidecar

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/reason"
)

// decision is what asrpt wants of one managed pending job this cycle: its
// priority (priority mode) or site factor (factor mode; setFactor when it
// is to be written, see multifactor.FactorDue) and, for a job whose turn has come, the
// node list (nil when none is to be written, for the reason in why) and
// the per-node GPU count (0: none).
type decision struct {
	e         *entry
	priority  uint32
	factor    uint32
	setFactor bool
	nodes     []string
	gpn       int
	why       reason.Reason
}

// cyclePlan is one decide step's result: what the shell is to write, whom
// to stop, and what it is to count and log. It holds no I/O; apply sends
// it, and the plan rows (asrpt plan, /plan) are built from it.
type cyclePlan struct {
	// decisions has one decision per managed pending job, head of the
	// queue first.
	decisions []decision
	// stops are the running jobs the policy preempted, to be signalled.
	stops []*entry
	// events are what the step saw that the shell counts or logs.
	events []event
	// jobs counts the jobs seen, by state (CycleReport.Jobs).
	jobs map[string]int
	// arrived, released, dispatched and virtual count as in CycleReport.
	arrived, released, dispatched, virtual int
}

// decide is the decide step: from snap, the cycle's read of Slurm, and
// st, the tracked jobs and the policy as the last step left them, it
// returns the plan for time t (Unix seconds). It brings st up to date
// (arrivals, departures, re-predictions), places the jobs whose turn has
// come on the free GPUs snap shows and ranks the managed pending jobs. It
// reads nothing from Slurm, writes nothing to it and neither logs nor
// counts: the same snapshots given to the same state give the same plans.
// st is the state passed from one step to the next and is updated in
// place (the policy's queues are pointer structures that a copy per cycle
// would cost O(jobs) to clone); the caller keeps no other reference to
// what it held.
func decide(snap *Snapshot, st *tracker, t float64) cyclePlan {
	p := cyclePlan{jobs: map[string]int{}}
	p.arrived = st.reconcile(t, snap.Jobs, p.jobs)
	st.repredict(t)
	free := st.nodes.freeModel(snap.Nodes, snap.Jobs, st.cfg.Scope.Partitions)
	st.nodes.claimTiers(snap.Jobs, st.view.now)
	st.placeDispatched(t, free)
	st.armPreemption()
	p.dispatched = st.schedule(t, free)
	if errs, n := st.env.TakeErrors(); n > 0 {
		st.note(event{kind: evPlacementFailed, n: n, err: errs[0]})
	}
	p.released, p.virtual = st.releases()
	p.decisions = st.decisions()
	p.stops = slices.Clone(st.stops)
	st.stops = st.stops[:0]
	p.events = st.takeEvents()
	return p
}

// decisions returns the decisions for the managed pending jobs in the
// order Slurm should start them: dispatched jobs in dispatch order, then
// the policy's order, with the standing jobs put in (withStanding).
func (tr *tracker) decisions() []decision {
	ranked := tr.dispatched()
	for _, t := range tr.pol.Pending() {
		if e := tr.byTask[t]; e != nil && e.ph == phQueued {
			ranked = append(ranked, e)
		}
	}
	ranked = tr.withStanding(ranked)
	ds := make([]decision, len(ranked))
	if tr.mode == WriteFactor {
		tr.factors = multifactor.SiteFactors(len(ranked), tr.cfg.SiteFactorMax, tr.factors)
		for i, e := range ranked {
			// An explicit priority asrpt set before (priority mode) masks
			// the factor: it goes with the factor's write.
			f := tr.factors[i]
			ds[i] = decision{e: e, factor: f, setFactor: e.prio != 0 || multifactor.FactorDue(e.factor, f, tr.cfg.SiteFactorMax, i < multifactor.FactorHead || e.high())}
		}
	} else {
		want := tr.labels.label(ranked)
		for i, e := range ranked {
			ds[i] = decision{e: e, priority: want[i]}
		}
	}
	for i := range ds {
		ds[i].nodes, ds[i].gpn, ds[i].why = tr.nodes.nodeUpdate(ds[i].e, tr.cfg)
		if ds[i].nodes == nil && unpin(ds[i].e) {
			ds[i].nodes = []string{} // cleared: see unpin
		}
	}
	return ds
}

// high reports whether e belongs to the upper priority band: its turn has
// come, or the policy's virtual machine released it.
func (e *entry) high() bool {
	return e.ph == phDispatched || (e.task != nil && !math.IsNaN(e.task.Released))
}
