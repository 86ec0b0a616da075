package policy

import (
	"math"
	"slices"

	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// multifactor models what a Slurm site runs today: priority/multifactor
// (age, fair share, job size, partition; Env.Site's configuration) with
// EASY backfill on the users' time limits. Priorities are recomputed every
// PriorityCalcPeriod, as Slurm's decay thread does, and set at submit for
// new jobs; jobs are considered by partition PriorityTier, then priority,
// then submit time.
//
// As asrpt-factor, an A-SRPT policy orders the same jobs and each job's
// rank in that order, mapped by SiteFactors into [0, Site.SiteFactorMax],
// is added to its priority as Slurm adds a job's site_factor: the
// sidecar's factor write mode, replayed. At each scheduling pass with
// free GPUs the site factors follow the A-SRPT order under the sidecar's
// write bound (multifactor.FactorDue): every change in the head region
// (the released jobs and the first FactorHead), changes beyond
// site_factor_max/FactorTolerance elsewhere.
type multifactorPolicy struct {
	starter
	name     string
	site     *Site
	fs       *multifactor.FairShare
	pend     []*Task // waiting jobs; in order when !unsorted
	unsorted bool
	run      running
	nextCalc float64
	nodes    int
	nodeGPUs int
	inner    *asrpt // asrpt-factor's A-SRPT order; nil for multifactor
	factors  []uint32
	dec      decisions
	order    []*Task // asrpt-factor: the A-SRPT order's buffer

	// With a Controller (asrpt-sidecar): the controller, its next poll
	// (Unix seconds), the running jobs, the jobs ended since its last
	// poll, and Queue.Waiting's buffer.
	ctl      Controller
	nextPoll float64
	lastPoll float64
	settle   int // polls left before polls may be skipped (settlePolls)
	// touched is set when the queue changed (an arrival, a start, an
	// end, a write) since the last scheduling pass.
	touched bool
	live    map[*Task]bool
	ended   []Ended
	buf     []*Task
}

var (
	_ Policy  = (*multifactorPolicy)(nil)
	_ Updater = (*multifactorPolicy)(nil)
)

func newMultifactor(name string, env *Env, factor bool) *multifactorPolicy {
	m := &multifactorPolicy{starter: starter{env: env}, name: name, run: newRunning(estLimit), nextCalc: math.Inf(-1),
		nextPoll: math.Inf(-1), lastPoll: math.Inf(-1)}
	if env == nil {
		return m
	}
	m.site = env.Site
	if m.site == nil {
		m.site = ExampleSite()
	}
	m.fs = multifactor.NewFairShare(&m.site.Priority, m.site.Shares)
	if env.Cluster != nil {
		m.nodes, m.nodeGPUs = len(env.Cluster.Nodes), env.Cluster.MaxNodeGPUs()
	}
	if factor {
		m.inner = newASRPT(name, env, true, false)
		p := env.Params
		p.WaitScale, p.AccountGuard, p.ShadowWait = m.site.WaitScale, m.site.AccountGuard, m.site.ShadowWait
		m.inner.wait = newWaitBound(p, env.G)
		m.inner.frontCap = frontCap(m.site.OverdueShare, env.G)
		m.inner.guardShare = m.site.AccountGuard
	}
	return m
}

func (m *multifactorPolicy) Name() string { return m.name }

// priority is Slurm's multifactor priority of t at now without the site
// factor (multifactor.Params.Priority); it sets t's partition tier. The
// job-size factor counts t's nodes, or the nodes its GPUs fill when it
// names none.
func (m *multifactorPolicy) priority(now float64, t *Task) float64 {
	p := &m.site.Priority
	nodes := t.Nodes
	if nodes <= 0 {
		nodes = (t.GPUs + m.nodeGPUs - 1) / max(m.nodeGPUs, 1)
	}
	part, tier := p.PartitionFactor(t.Partition)
	t.tier = tier
	return p.Priority(multifactor.Factors{
		Age:       p.AgeFactor(now - t.Submit),
		FairShare: t.assoc.Factor(),
		JobSize:   p.JobSize(nodes, m.nodes, t.GPUs, m.env.G),
		Partition: part,
	})
}

// tick recomputes fair share and every waiting job's priority when a
// PriorityCalcPeriod has passed.
func (m *multifactorPolicy) tick(now float64) {
	if now < m.nextCalc {
		return
	}
	period := m.site.Priority.CalcPeriod
	if math.IsInf(m.nextCalc, -1) {
		m.nextCalc = now
	}
	m.nextCalc += period * (math.Floor((now-m.nextCalc)/period) + 1)
	m.fs.Compute(now)
	for _, t := range m.pend {
		t.prio = m.priority(now, t)
	}
	m.unsorted = true
	if m.ctl != nil && len(m.pend) > 0 {
		// The priorities the Controller reads changed: it polls at the
		// next point of its grid (which applies the skip rule itself).
		m.pollAgain(now)
	}
}

func (m *multifactorPolicy) Arrive(now float64, t *Task) {
	if m.ctl != nil && len(m.pend) == 0 && m.nextPoll < now {
		// No poll was due while nothing waited: the controller's next
		// poll is the next point of its grid.
		m.nextPoll = math.Inf(1)
	}
	m.changed(now)
	m.add(now, t)
	if m.inner != nil {
		m.inner.Arrive(now, t)
	}
}

func (m *multifactorPolicy) Restore(now float64, t *Task, remaining float64, released bool) {
	m.add(now, t)
	if m.inner != nil {
		m.inner.Restore(now, t, remaining, released)
	}
}

// add queues waiting job t with the priority multifactor gives it at now.
func (m *multifactorPolicy) add(now float64, t *Task) {
	m.tick(now)
	t.assoc = m.fs.Association(now, multifactor.Assoc{Account: t.Account, User: t.User})
	if m.fs.Dirty() {
		m.fs.Compute(now)
	}
	t.prio, t.site = m.priority(now, t), 0
	if m.unsorted {
		m.pend = append(m.pend, t)
		return
	}
	// The queue is in order and its keys are current (every change of a
	// key marks it unsorted): t goes to its place, as a sort would put it
	// (the order is total), in O(log n) comparisons rather than a sort of
	// the whole queue at the next pass.
	t.order = orderKey(t)
	i, _ := slices.BinarySearchFunc(m.pend, t, cmpOrder)
	m.pend = slices.Insert(m.pend, i, t)
}

func (m *multifactorPolicy) Withdraw(now float64, t *Task) {
	if t.running {
		return
	}
	if i := slices.Index(m.pend, t); i >= 0 {
		m.pend = slices.Delete(m.pend, i, i+1)
	}
	if m.inner != nil {
		m.inner.Withdraw(now, t)
	}
}

// Update implements Updater: asrpt-factor re-orders its A-SRPT order; the
// multifactor priority does not read predictions.
func (m *multifactorPolicy) Update(now float64, t *Task, est prediction.Estimate) {
	if m.inner != nil {
		m.inner.Update(now, t, est)
	}
}

func (m *multifactorPolicy) Finish(now float64, t *Task) {
	m.run.remove(t)
	t.running = false
	m.fs.Run(now, t.assoc, -t.GPUs)
	if m.ctl != nil {
		delete(m.live, t)
		m.ended = append(m.ended, Ended{Job: t.Job, Start: t.Start, End: now})
		m.changed(now)
	}
	if m.inner != nil {
		m.inner.Finish(now, t)
	}
}

// NextEvent is the next change of the A-SRPT order (asrpt-factor), else
// +Inf. The PriorityCalcPeriod is not an event of its own: priorities are
// brought up to date at the first scheduling pass after each period (an
// arrival or a completion), which bounds the replay's work whatever the
// times; only a pass with free GPUs can start a job. With a Controller
// it is the next poll or the next PriorityCalcPeriod, whichever is first:
// the recalculation changes the priorities the Controller reads, so it
// happens on time whether or not polls are skipped (see tick).
func (m *multifactorPolicy) NextEvent(now float64) float64 {
	if m.ctl != nil && len(m.pend) > 0 {
		return math.Min(m.nextPoll, m.nextCalc)
	}
	if m.inner == nil || len(m.pend) == 0 {
		return math.Inf(1)
	}
	return m.inner.NextEvent(now)
}

// sort orders the waiting jobs: higher tier, then higher priority with
// the site factor, then submit time, then arrival.
func (m *multifactorPolicy) sort() {
	if !m.unsorted {
		return
	}
	m.unsorted = false
	for _, t := range m.pend {
		t.order = orderKey(t)
	}
	slices.SortFunc(m.pend, cmpOrder)
}

// orderKey is t's sort key in the multifactor queue (smaller first): its
// partition tier, then its explicit priority or its multifactor priority
// with the site factor, negated.
func orderKey(t *Task) float64 {
	if t.explicit != 0 {
		return -(float64(t.tier)*(1<<33) + float64(t.explicit))
	}
	return -(float64(t.tier)*(1<<33) + t.prio + float64(t.site))
}

// cmpOrder orders the multifactor queue by the keys last set (orderKey),
// then submit time, then arrival: a total order.
func cmpOrder(a, b *Task) int {
	switch {
	case a.order != b.order:
		if a.order < b.order {
			return -1
		}
		return 1
	case a.Submit != b.Submit:
		if a.Submit < b.Submit {
			return -1
		}
		return 1
	}
	return a.Seq - b.Seq
}

func (m *multifactorPolicy) Pending() []*Task {
	m.siteFactors()
	m.sort()
	return slices.Clone(m.pend)
}

// siteFactors gives the waiting jobs the site factors of their ranks in
// the A-SRPT order as of the last scheduling pass, under the sidecar's
// write bound (asrpt-factor): Slurm holds what the sidecar wrote.
func (m *multifactorPolicy) siteFactors() {
	if m.inner == nil {
		return
	}
	m.order = m.inner.appendPending(m.order[:0])
	order := m.order
	max := m.site.SiteFactorMax
	m.factors = multifactor.SiteFactors(len(order), max, m.factors)
	for i, t := range order {
		// What the sidecar writes (multifactor.FactorDue): a released
		// job, one of the first FactorHead, or one whose factor moved
		// beyond the tolerance; the others keep what Slurm holds.
		if f := m.factors[i]; multifactor.FactorDue(t.site, f, max, i < multifactor.FactorHead || t.released) {
			t.site = f
			m.unsorted = true
		}
	}
}

func (m *multifactorPolicy) Schedule(now float64, free *placement.Free) []Decision {
	m.tick(now)
	if m.inner != nil {
		m.inner.advance(now)
	}
	if m.ctl != nil {
		polled, err := m.poll(now)
		if err != nil {
			m.env.controllerErr = err
			return nil
		}
		if polled && !m.touched {
			// A poll that changed nothing is no scheduling pass: the
			// model schedules at arrivals, ends and writes, as multifactor
			// does at arrivals and ends.
			return nil
		}
		m.touched = false
	}
	if free.Total() == 0 || len(m.pend) == 0 {
		return nil
	}
	m.siteFactors()
	m.sort()
	sc := scan{starter: m.starter, run: &m.run, mode: modeEASY, now: now, free: free, depth: m.env.Params.Depth}
	for _, t := range m.pend {
		if !sc.visit(t) {
			break
		}
	}
	if len(sc.started) == 0 {
		return nil
	}
	m.pend = slices.DeleteFunc(m.pend, func(t *Task) bool { return t.running })
	for _, t := range sc.started {
		m.fs.Run(now, t.assoc, t.GPUs)
		if m.ctl != nil {
			m.live[t] = true
			m.changed(now)
		}
		if m.inner != nil {
			m.inner.started(t)
		}
	}
	return m.dec.of(nil, sc.started)
}
