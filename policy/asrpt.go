package policy

import (
	"math"

	"github.com/google/btree"

	"github.com/asrpt/asrpt/placement"
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

// asrpt is A-SRPT (design §5): jobs wait on the virtual machine until
// released, and released jobs are dispatched in release order with
// Heavy-Edge placements. Paper mode blocks at the head of the release queue;
// backfill mode (ours) lets later released jobs, and then unreleased jobs in
// virtual SRPT order, start when they do not delay the head's reserved start.
type asrpt struct {
	starter
	name     string
	backfill bool
	vm       *VirtualMachine
	queue    *btree.BTreeG[*Task] // released jobs, key = release sequence
	nrel     int
	run      running
	waitTill float64 // end of the head's consolidation wait, or -Inf
	started  bool
	buf      []*Task
}

var _ Policy = (*asrpt)(nil)

func newASRPT(name string, env *Env, backfill bool) *asrpt {
	return &asrpt{starter: starter{env: env}, name: name, backfill: backfill,
		queue: btree.NewG(btreeDegree, byKey), run: newRunning(estPredicted), waitTill: math.Inf(-1)}
}

func (a *asrpt) Name() string { return a.name }

// size returns the virtual size p = (g/G)·d̃ in seconds (design §4).
func (a *asrpt) size(t *Task) float64 {
	d := t.Est.Seconds
	if !t.Est.Known && a.env.Params.Unseen == UnseenFirst {
		d = 0
	}
	return float64(t.GPUs) / float64(a.env.G) * d
}

func (a *asrpt) advance(now float64) {
	if a.vm == nil {
		a.vm = NewVirtualMachine(now)
		return
	}
	a.vm.Advance(now, a.release)
}

func (a *asrpt) release(t *Task, at float64) {
	t.Released, t.released = at, true
	t.key = float64(a.nrel)
	a.nrel++
	a.queue.ReplaceOrInsert(t)
}

func (a *asrpt) Arrive(now float64, t *Task) {
	a.advance(now)
	a.vm.Add(t, a.size(t))
	a.vm.Advance(now, a.release)
}

func (a *asrpt) Withdraw(now float64, t *Task) {
	if t.running {
		return
	}
	a.advance(now)
	if t.released {
		a.queue.Delete(t)
	} else {
		a.vm.Remove(t)
	}
}

// Restore puts t back with remaining virtual work; a released job goes to
// the end of the release queue (restore released jobs in release order).
func (a *asrpt) Restore(now float64, t *Task, remaining float64, released bool) {
	a.advance(now)
	if released {
		t.virtual = a.size(t)
		a.release(t, now)
		return
	}
	a.vm.Add(t, math.Max(remaining, 0))
	t.virtual = a.size(t)
	a.vm.Advance(now, a.release)
}

func (a *asrpt) Finish(_ float64, t *Task) {
	a.run.remove(t)
	t.running = false
}

func (a *asrpt) NextEvent(now float64) float64 {
	next := math.Inf(1)
	if a.vm != nil {
		next = a.vm.NextRelease()
	}
	if a.waitTill > now {
		next = math.Min(next, a.waitTill)
	}
	return next
}

func (a *asrpt) Pending() []*Task {
	out := make([]*Task, 0, a.queue.Len())
	a.queue.Ascend(func(t *Task) bool { out = append(out, t); return true })
	if a.vm != nil {
		a.vm.Ascend(func(t *Task) bool { out = append(out, t); return true })
	}
	return out
}

func (a *asrpt) Schedule(now float64, free *placement.Free) []Decision {
	a.advance(now)
	a.waitTill = math.Inf(-1)
	if free.Total() == 0 {
		return nil
	}
	started := a.buf[:0]
	blocked := false
	var shadow float64
	var extra int
	seen, depth := 0, a.env.Params.Depth
	// visit examines one job; it returns false to stop the scan.
	visit := func(t *Task) bool {
		if free.Total() == 0 {
			return false
		}
		seen++
		if depth > 0 && seen > depth {
			return false
		}
		if !blocked {
			p, alpha, ok := a.place(t, free)
			if ok && !a.consolidated(t, alpha) && t.released {
				deadline := t.Released + a.env.Params.Tau*t.virtual
				if now < deadline {
					// A communication-heavy head waits for a consolidated
					// placement until its deadline; later jobs may use
					// only what it leaves.
					a.waitTill = deadline
					blocked, shadow, extra = true, deadline, free.Total()-t.GPUs
					return a.backfill
				}
			}
			if ok && (t.released || a.consolidated(t, alpha)) {
				a.start(now, t, p, alpha, free)
				a.run.add(t)
				started = append(started, t)
				return true
			}
			if !t.released {
				// An unreleased job only backfills; it never blocks.
				return true
			}
			blocked = true
			shadow, extra = a.run.shadow(now, t.GPUs, free.Total())
			return a.backfill
		}
		if t.GPUs > free.Total() {
			return true
		}
		// The reservation check first, on the best case α_min, so that
		// Heavy-Edge runs only for jobs that may start.
		if t.GPUs > extra && now+a.run.est(t, t.AlphaMin) > shadow {
			return true
		}
		p, alpha, ok := a.place(t, free)
		if !ok || !a.consolidated(t, alpha) {
			return true
		}
		if now+a.run.est(t, alpha) > shadow {
			if t.GPUs > extra {
				return true
			}
			extra -= t.GPUs
		}
		a.start(now, t, p, alpha, free)
		a.run.add(t)
		started = append(started, t)
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
	if a.backfill && !stopped {
		a.vm.Ascend(visit)
	}
	if len(started) == 0 {
		return nil
	}
	out := make([]Decision, len(started))
	for i, t := range started {
		if t.released {
			a.queue.Delete(t)
		} else {
			a.vm.Remove(t)
		}
		out[i] = Decision{Task: t}
	}
	a.buf = started[:0]
	return out
}
