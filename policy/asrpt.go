package policy

import (
	"math"

	"github.com/google/btree"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// VirtualMachine is the virtual single machine A1 of design §4: a unit-speed
// machine that runs preemptive SRPT over the arrived jobs' virtual sizes and
// releases each job when its virtual work reaches zero. Each operation costs
// O(log n). The zero value is not usable; use NewVirtualMachine.
type VirtualMachine struct {
	clock float64
	tree  *btree.BTreeG[*Task]
}

// timeEpsilon is the tolerance in seconds under which virtual work counts
// as done. Clocks hold Unix times near 2e9 s, whose float64 spacing is about
// 2.4e-7 s; without a tolerance a job could keep a remainder too small to
// move the clock and the replay would never advance.
const timeEpsilon = 1e-5

// byRemaining is SRPT order: least remaining virtual work, then submit time,
// then arrival sequence.
func byRemaining(a, b *Task) bool {
	if a.remaining != b.remaining {
		return a.remaining < b.remaining
	}
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.Seq < b.Seq
}

// NewVirtualMachine returns an empty machine whose clock starts at start.
func NewVirtualMachine(start float64) *VirtualMachine {
	return &VirtualMachine{clock: start, tree: btree.NewG(btreeDegree, byRemaining)}
}

// Len returns the number of unreleased jobs.
func (v *VirtualMachine) Len() int { return v.tree.Len() }

// Add puts t on the machine with virtual size size (seconds). The caller
// advances the machine to t's arrival first.
func (v *VirtualMachine) Add(t *Task, size float64) {
	t.virtual, t.remaining = size, size
	v.tree.ReplaceOrInsert(t)
}

// Remove takes an unreleased t off the machine (it was started early).
func (v *VirtualMachine) Remove(t *Task) { v.tree.Delete(t) }

// Advance runs the machine up to now and calls release, in release order,
// for every job whose virtual work reaches zero, with its release time.
func (v *VirtualMachine) Advance(now float64, release func(t *Task, at float64)) {
	for now > v.clock {
		h, ok := v.tree.Min()
		if !ok {
			v.clock = now
			return
		}
		dt := now - v.clock
		if h.remaining > dt+timeEpsilon {
			// The head stays the minimum as its key decreases, so it can be
			// changed in place without breaking the tree's order.
			h.remaining -= dt
			v.clock = now
			return
		}
		v.clock += h.remaining
		h.remaining = 0
		v.tree.DeleteMin()
		release(h, v.clock)
	}
	// Zero-size jobs (and heads that reached zero exactly) release at once.
	for {
		h, ok := v.tree.Min()
		if !ok || h.remaining > timeEpsilon {
			return
		}
		v.tree.DeleteMin()
		release(h, v.clock)
	}
}

// NextRelease returns the time of the next release if nothing else arrives,
// or +Inf.
func (v *VirtualMachine) NextRelease() float64 {
	h, ok := v.tree.Min()
	if !ok {
		return math.Inf(1)
	}
	return v.clock + h.remaining
}

// Ascend calls f on the unreleased jobs in SRPT order until f returns false.
func (v *VirtualMachine) Ascend(f func(t *Task) bool) { v.tree.Ascend(f) }

// asrpt is A-SRPT: jobs wait on the virtual machine until released, and
// released jobs are dispatched with Heavy-Edge placements.
//
// Paper mode (design §5) serves the release queue in release order and
// blocks at its head. The revised dispatch (design §5, the policy named
// "asrpt") orders the release queue by predicted virtual size, keeps K
// reservations on a free-GPU profile built from the running jobs' predicted
// ends, lets any later job (released, then unreleased in virtual SRPT
// order) start where it delays none of them, re-keys waiting jobs when
// they are predicted again, and sizes unseen jobs by what earlier unseen
// jobs of their GPU-count class ran.
type asrpt struct {
	starter
	name      string
	revised   bool
	preempts  bool // asrpt-preempt: the preemption step (preempt.go)
	vm        *VirtualMachine
	queue     *btree.BTreeG[*Task] // released jobs
	nrel      int
	run       running
	waitTill  float64 // earliest end of a consolidation wait, or +Inf
	prof      profile
	unseen    unseenClasses
	wait      waitBound            // the revised dispatch's bound on waiting
	late      *btree.BTreeG[*Task] // overdue jobs waiting for room at the front, by (due, seq)
	frontGPUs int                  // GPUs asked for by the overdue jobs at the front
	frontCap  int                  // most GPUs the front may ask for; 0: no cap
	buf       []*Task
	victims   []*Task
	// holds are the times of the stops whose jobs Slurm may still hold
	// (Params.RequeueDelay), oldest first.
	holds      []float64
	dec        decisions
	guard      guarded // the account guard's waiting jobs (Params.AccountGuard)
	guardShare float64 // Params.AccountGuard (asrpt-factor: the Site's)
}

var (
	_ Policy  = (*asrpt)(nil)
	_ Updater = (*asrpt)(nil)
)

func newASRPT(name string, env *Env, revised, preempts bool) *asrpt {
	est := estPredicted
	if revised {
		est = estFit
	}
	a := &asrpt{starter: starter{env: env}, name: name, revised: revised, preempts: preempts,
		queue: btree.NewG(btreeDegree, byKey), run: newRunning(est), waitTill: math.Inf(1),
		late: btree.NewG(btreeDegree, byDue)}
	if env != nil {
		a.run.restart = env.Params.RestartCost
	}
	if revised && env != nil {
		a.wait = newWaitBound(env.Params, env.G)
		a.frontCap = frontCap(env.Params.OverdueShare, env.G)
		a.guardShare = env.Params.AccountGuard
	} else {
		a.wait = newWaitBound(Params{}, 0)
	}
	return a
}

func (a *asrpt) Name() string { return a.name }

// size returns the virtual size p = (g/G)·d̃ in seconds (design §4), d̃
// the ranked prediction (Params.Rank); an unseen job counts 0 under
// unseen = first, and always in paper mode (the paper's rule).
func (a *asrpt) size(t *Task) float64 {
	d := t.Ranked()
	if !t.Est.Known && (!a.revised || a.env.Params.Unseen == UnseenFirst) {
		d = 0
	}
	return float64(t.GPUs) / float64(a.env.G) * d
}

// sizeUnseen gives an unseen job of the revised dispatch the estimate of
// its GPU-count class once the class has enough finished samples (design
// §5.5). Its estimate is then marked Known, so that size uses it instead
// of the unseen rule; Task.UnseenAtSubmit still records that it was unseen.
func (a *asrpt) sizeUnseen(t *Task) {
	if !a.revised || t.Est.Known {
		return
	}
	if e, ok := a.unseen.estimate(t); ok {
		t.Est = e
		t.Est.Known = true // sized as a seen job from now on
	}
}

func (a *asrpt) advance(now float64) {
	if a.vm == nil {
		a.vm = NewVirtualMachine(now)
		return
	}
	a.vm.Advance(now, a.release)
	a.promote(now)
}

// promote takes the jobs that became overdue by now. Without a cap on the
// front (Params.OverdueShare 0) each moves to the front at once; with one,
// each waits in its SRPT place, late, until admit finds room at the front.
func (a *asrpt) promote(now float64) {
	a.wait.popDue(now, func(t *Task) {
		if a.frontCap > 0 {
			t.late = true
			a.late.ReplaceOrInsert(t)
			return
		}
		a.front(now, t)
	})
	a.admit(now)
}

// frontCap returns the most GPUs the overdue jobs at the front may ask for
// at once: share of g GPUs, at least 1; 0 (no cap) when share ≤ 0.
func frontCap(share float64, g int) int {
	if share <= 0 {
		return 0
	}
	return max(int(share*float64(g)), 1)
}

// admit moves late jobs to the front, the earliest overdue first, while
// the overdue jobs already there ask for fewer GPUs than the cap with it;
// a job that alone asks for more is admitted when the front is empty.
func (a *asrpt) admit(now float64) {
	for {
		t, ok := a.late.Min()
		if !ok || (a.frontGPUs > 0 && a.frontGPUs+t.GPUs > a.frontCap) {
			return
		}
		a.late.Delete(t)
		t.late = false
		a.frontGPUs += t.GPUs
		a.front(now, t)
	}
}

// leaveFront accounts for t leaving the waiting jobs (started, withdrawn)
// if it was overdue, and clears its overdue mark so that a job restored
// later waits afresh. Late jobs move into the room it leaves at once after
// a Withdraw, and at the next promote after a start (the next event).
// Call it after a.wait.remove(t).
func (a *asrpt) leaveFront(t *Task) {
	switch {
	case t.late:
		a.late.Delete(t)
		t.late = false
	case t.overdue && a.frontCap > 0:
		a.frontGPUs -= t.GPUs
	}
	t.overdue = false
}

// front moves overdue job t to the front of the release queue (released at
// now if the virtual machine still held it), keyed by when it became
// overdue.
func (a *asrpt) front(now float64, t *Task) {
	if t.released {
		a.queue.Delete(t)
	} else {
		a.vm.Remove(t)
		t.Released, t.released = now, true
		a.nrel++
	}
	t.key = t.due - overdueKeyBase
	a.queue.ReplaceOrInsert(t)
}

func (a *asrpt) release(t *Task, at float64) {
	t.Released, t.released = at, true
	if a.revised {
		t.key = t.virtual
	} else {
		t.key = float64(a.nrel)
	}
	a.nrel++
	a.queue.ReplaceOrInsert(t)
}

func (a *asrpt) Arrive(now float64, t *Task) {
	a.advance(now)
	a.sizeUnseen(t)
	a.wait.shadowArrive(t)
	a.wait.add(t)
	t.overtaken = 0
	a.guardAdd(t)
	a.vm.Add(t, a.size(t))
	a.vm.Advance(now, a.release)
	a.promote(now)
}

func (a *asrpt) Withdraw(now float64, t *Task) {
	if t.running {
		return
	}
	a.advance(now)
	a.wait.remove(t)
	a.leaveFront(t)
	if t.released {
		a.queue.Delete(t)
	} else {
		a.vm.Remove(t)
	}
	a.admit(now)
}

// Adopt implements Adopter: t leaves the waiting jobs (the virtual
// machine or the release queue) and runs from start on p, with the α of p
// (α_min when p does not map its profile, or is empty).
func (a *asrpt) Adopt(now float64, t *Task, start float64, p placement.Placement) bool {
	if t.running {
		return false
	}
	a.advance(now)
	if (t.released && !a.queue.Has(t)) || (!t.released && (a.vm == nil || !a.vm.tree.Has(t))) {
		return false // not held: withdrawn, or never arrived
	}
	alpha := 1.0
	if t.Prof != nil {
		alpha = t.AlphaMin
		if al, ok := a.env.Placer.AlphaOf(t.Prof, &p); ok && len(p.Slots) > 0 {
			alpha = al
		}
	}
	t.Start, t.Placement, t.Alpha, t.running = math.Min(start, now), p, alpha, true
	a.started(t)
	a.run.add(t)
	a.admit(now)
	return true
}

// Restore puts t back with remaining virtual work. Under paper mode a
// released job goes to the end of the release queue (restore released jobs
// in release order); under the revised dispatch it is keyed by its size.
func (a *asrpt) Restore(now float64, t *Task, remaining float64, released bool) {
	a.advance(now)
	a.sizeUnseen(t)
	a.wait.shadowArrive(t)
	a.wait.add(t)
	t.overtaken = 0
	a.guardAdd(t)
	if released {
		t.virtual = a.size(t)
		a.release(t, now)
	} else {
		a.vm.Add(t, math.Max(remaining, 0))
		t.virtual = a.size(t)
		a.vm.Advance(now, a.release)
	}
	a.promote(now)
}

// Update implements Updater (design §5.3): a released job is re-keyed by
// its new size; an unreleased one keeps max(0, remaining + p_new − p_old)
// of virtual work. Paper mode keeps the prediction made at submit.
func (a *asrpt) Update(now float64, t *Task, est prediction.Estimate) {
	if !a.revised || t.running || a.vm == nil {
		return
	}
	a.advance(now)
	if (t.released && !a.queue.Has(t)) || (!t.released && !a.vm.tree.Has(t)) {
		return // not held: withdrawn, or never arrived
	}
	old := t.virtual
	a.wait.remove(t)
	t.Est = est
	a.sizeUnseen(t)
	p := a.size(t)
	switch {
	case t.overdue && !t.late:
		// Keeps its place at the front of the queue.
		t.virtual = p
		return
	case t.released:
		a.queue.Delete(t)
		if t.Preemptions > 0 {
			p = a.requeuedSize(t)
		}
		t.virtual, t.key = p, p
		a.queue.ReplaceOrInsert(t)
	default:
		a.vm.Remove(t)
		a.vm.Add(t, math.Max(0, t.remaining+p-old))
		t.virtual = p
		a.vm.Advance(now, a.release)
	}
	switch {
	case t.overdue:
	case t.Preemptions > 0:
		a.wait.addDue(t, t.due) // a preempted job keeps its bound
	default:
		a.wait.add(t) // the relative bound moves with the prediction
	}
	a.promote(now)
}

func (a *asrpt) Finish(now float64, t *Task) {
	a.run.remove(t)
	t.running = false
	if a.revised && t.UnseenAtSubmit && t.Alpha > 0 {
		a.unseen.add(t, t.served+a.progress(now, t))
	}
}

func (a *asrpt) NextEvent(now float64) float64 {
	next := math.Inf(1)
	if a.vm != nil {
		next = a.vm.NextRelease()
	}
	if a.waitTill > now {
		next = math.Min(next, a.waitTill)
	}
	if a.preempts {
		next = math.Min(next, a.requeued(now))
	}
	return math.Min(next, a.wait.next())
}

func (a *asrpt) Pending() []*Task {
	n := a.queue.Len()
	if a.vm != nil {
		n += a.vm.Len()
	}
	return a.appendPending(make([]*Task, 0, n))
}

// appendPending appends the waiting jobs in Pending's order to out.
func (a *asrpt) appendPending(out []*Task) []*Task {
	a.queue.Ascend(func(t *Task) bool { out = append(out, t); return true })
	if a.vm != nil {
		a.vm.Ascend(func(t *Task) bool { out = append(out, t); return true })
	}
	return out
}

func (a *asrpt) Schedule(now float64, free *placement.Free) []Decision {
	a.advance(now)
	a.waitTill = math.Inf(1)
	var victims []*Task
	if a.preempts {
		victims = a.preempt(now, free)
	}
	if free.Total() == 0 {
		return nil
	}
	var started []*Task
	if a.revised {
		started = a.scheduleRevised(now, free)
	} else {
		started = a.schedulePaper(now, free)
	}
	if len(started) == 0 && len(victims) == 0 {
		return nil
	}
	for _, t := range started {
		a.started(t)
		a.run.add(t)
	}
	a.buf = started[:0]
	return a.dec.of(victims, started)
}

// started takes t, which has just started, out of the waiting jobs.
func (a *asrpt) started(t *Task) {
	a.wait.remove(t)
	if t.Preemptions == 0 {
		a.wait.started(t.Start, t) // a restart is no wait of the queue's
	}
	a.leaveFront(t)
	if t.released {
		a.queue.Delete(t)
	} else {
		a.vm.Remove(t)
	}
	a.guardStarted(t)
}

// schedulePaper is design §5: the release queue in release order; a head
// that cannot start blocks it.
func (a *asrpt) schedulePaper(now float64, free *placement.Free) []*Task {
	started := a.buf[:0]
	a.queue.Ascend(func(t *Task) bool {
		if free.Total() == 0 {
			return false
		}
		if t.Blocked {
			return true // held back by Slurm: the next job is the head
		}
		p, alpha, ok := a.place(t, free)
		if ok && !a.consolidated(t, alpha) {
			if deadline := t.Released + a.env.Params.Tau*t.virtual; now < deadline {
				// A communication-heavy head waits for a consolidated
				// placement until its deadline.
				a.waitTill = deadline
				return false
			}
		}
		if !ok || !a.start(now, t, p, alpha, free) {
			return false
		}
		started = append(started, t)
		return true
	})
	return started
}

// scheduleRevised is design §5.2: walk the release queue (by predicted
// virtual size), then the unreleased jobs (virtual SRPT order). A job
// starts now when Heavy-Edge places it on the free GPUs (consolidated, for
// a communication-heavy job before its deadline) and its predicted run
// (median) fits the free-GPU profile, that is, it delays no reservation
// made before it in the walk. Each of the first K released jobs that
// cannot start gets the earliest window of its predicted length. Jobs
// started here enter the running set after the walk, so the profile never
// counts them twice.
func (a *asrpt) scheduleRevised(now float64, free *placement.Free) []*Task {
	started := a.buf[:0]
	a.run.refresh(now)
	a.prof.reset(now, free.Total(), &a.run.tree)
	k := max(a.env.Params.Reservations, 0)
	reserved, seen, depth := 0, 0, a.env.Params.Depth
	visit := func(t *Task) bool {
		if free.Total() == 0 {
			return false
		}
		if t.Blocked || a.stoppedNow(now, t) {
			return true // neither starts nor reserves
		}
		seen++
		if depth > 0 && seen > depth {
			return false
		}
		if t.gpus > free.Total() && (!t.released || reserved >= k) {
			return true // can neither start nor reserve
		}
		d := a.run.est(t, t.AlphaMin)
		if t.GPUs <= free.Total() && a.prof.fits(now, d, t.GPUs) {
			if p, alpha, ok := a.place(t, free); ok {
				deadline := t.Released + a.env.Params.Tau*t.virtual
				switch {
				case a.consolidated(t, alpha) || (t.released && now >= deadline):
					if da := a.run.est(t, alpha); (da <= d || a.prof.fits(now, da, t.GPUs)) && a.start(now, t, p, alpha, free) {
						a.prof.add(now, da, t.GPUs)
						started = append(started, t)
						return true
					}
				case t.released:
					// A communication-heavy job waits for a consolidated
					// placement until its deadline; its reservation below
					// holds the GPUs it would take now.
					a.waitTill = math.Min(a.waitTill, deadline)
				}
			}
		}
		if t.released && reserved < k {
			a.prof.add(a.prof.earliest(d, t.GPUs), d, t.GPUs)
			reserved++
		}
		return true
	}
	stopped := false
	a.queue.Ascend(func(t *Task) bool {
		if !visit(t) {
			stopped = true
			return false
		}
		return true
	})
	if !stopped {
		a.vm.Ascend(visit)
	}
	return started
}
