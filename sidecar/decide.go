package sidecar

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/placement"
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
	// arrived, released and dispatched count as in CycleReport.
	arrived, released, dispatched int
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
	free := st.freeModel(snap.Nodes, snap.Jobs)
	st.claimTiers(snap.Jobs)
	st.placeDispatched(t, free)
	st.armPreemption()
	p.dispatched = st.schedule(t, free)
	if errs, n := st.env.TakeErrors(); n > 0 {
		st.note(event{kind: evPlacementFailed, n: n, err: errs[0]})
	}
	p.released = st.countReleases()
	p.decisions = st.decisions()
	p.stops = slices.Clone(st.stops)
	st.stops = st.stops[:0]
	p.events = st.takeEvents()
	return p
}

// decisions returns the decisions for the managed pending jobs, head of
// the queue first.
func (tr *tracker) decisions() []decision {
	ranked := tr.withStanding(tr.rank())
	ds := make([]decision, len(ranked))
	if tr.mode == WriteFactor {
		tr.factors = multifactor.SiteFactors(len(ranked), tr.cfg.SiteFactorMax, tr.factors)
		for i, e := range ranked {
			// An explicit priority asrpt set before (priority mode) masks
			// the factor: it goes with the factor's write.
			f := tr.factors[i]
			ds[i] = decision{e: e, factor: f, setFactor: e.prio != 0 || multifactor.FactorDue(e.factor, f, tr.cfg.SiteFactorMax, i < multifactor.FactorHead || tr.high(e))}
		}
	} else {
		want := tr.label(ranked)
		for i, e := range ranked {
			ds[i] = decision{e: e, priority: want[i]}
		}
	}
	for i := range ds {
		ds[i].nodes, ds[i].gpn, ds[i].why = tr.nodeUpdate(ds[i].e)
		if ds[i].nodes == nil && unpin(ds[i].e) {
			ds[i].nodes = []string{} // cleared: see unpin
		}
	}
	return ds
}

// rank returns the managed pending jobs in the order Slurm should start
// them: dispatched jobs in dispatch order, then the policy's order.
func (tr *tracker) rank() []*entry {
	ranked := tr.dispatched()
	for _, t := range tr.pol.Pending() {
		if e := tr.byTask[t]; e != nil && e.ph == phQueued {
			ranked = append(ranked, e)
		}
	}
	return ranked
}

// high reports whether e belongs to the upper priority band.
func (tr *tracker) high(e *entry) bool {
	return e.ph == phDispatched || (e.task != nil && !math.IsNaN(e.task.Released))
}

// label returns the priority each ranked job should have.
func (tr *tracker) label(ranked []*entry) []uint32 {
	tr.cur = tr.cur[:0]
	split := 0
	for i, e := range ranked {
		tr.cur = append(tr.cur, e.prio)
		if tr.high(e) {
			split = i + 1
		}
	}
	hi := Label(tr.cur[:split], HighBand, nil)
	tr.labels = Label(tr.cur[split:], LowBand, tr.labels)
	return append(hi, tr.labels...)
}

// nodeUpdate returns the node list (and per-node GPU count, 0 for none) to
// write for dispatched job e, or nil and the reason when none is to be
// written: the job's request must allow it (see the package documentation).
func (tr *tracker) nodeUpdate(e *entry) ([]string, int, reason.Reason) {
	switch {
	case !tr.cfg.RequiredNodes:
		return nil, 0, reason.Of(reason.NodeListsOff, "node lists off (required_nodes = false)")
	case e.sj == nil || e.ph != phDispatched:
		return nil, 0, reason.Reason{}
	case e.noNodes:
		return nil, 0, reason.Of(reason.NodeListRefused, "Slurm refused a node list for this job")
	}
	sj := e.sj
	if why := nodeListBar(sj); !why.None() {
		return nil, 0, why
	}
	if !e.placed {
		return nil, 0, reason.Of(reason.NoPlacement, "no placement on nodes the job can use")
	}
	if len(sj.RequiredNodes) > 0 && !slices.Equal(sj.RequiredNodes, e.nodes) {
		return nil, 0, reason.Of(reason.NodesNamed, "the job names its nodes")
	}
	names, err := placement.NodeNames(tr.cl, &e.place)
	if err != nil || len(names) == 0 {
		return nil, 0, reason.Of(reason.NoPlacement, "no placement on nodes the job can use")
	}
	per := e.place.Slots[0].Count()
	uniform := true
	for _, sl := range e.place.Slots {
		if !tr.mayUse(e, sl.Node) {
			return nil, 0, reason.Of(reason.NodeNotUsable, "placement on a node the job cannot use")
		}
		uniform = uniform && sl.Count() == per
	}
	total := sj.GPUs.Total
	switch {
	case len(names) == 1 && (sj.GPUs.PerNode == 0 || sj.GPUs.PerNode == total):
		return names, 0, reason.Reason{}
	case len(names) > 1 && uniform && sj.GPUs.PerNode == per:
		return names, 0, reason.Reason{}
	case len(names) > 1 && uniform && sj.GPUs.PerNode == 0 && sj.GPUs.PerJob == total && tr.cfg.GPUsPerNode:
		return names, per, reason.Reason{}
	}
	return nil, 0, reason.Of(reason.GPUsPerNodeDiffer, "the placement does not match the job's GPUs per node")
}
