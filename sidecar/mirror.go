package sidecar

import (
	"math"

	"github.com/google/btree"
)

// mirror tracks the remaining virtual work of every job on A-SRPT's virtual
// single machine (design §4), so that it can be saved and restored: the
// policy keeps that number unexported. It runs the same preemptive SRPT
// with the same order (remaining work, then submit time, then sequence),
// the same tolerance and the same arithmetic, fed with the same sizes at
// the same times as policy.VirtualMachine, so the two agree exactly; the
// restart test checks it. It goes once policy.Task exposes its remaining
// virtual work (see the package documentation).
type mirror struct {
	clock float64 // NaN until the first advance, like the policy's lazily created machine
	tree  *btree.BTreeG[*entry]
	// nrel counts releases; it is each entry's release rank.
	nrel int
}

// mirrorEpsilon is policy.timeEpsilon: virtual work under it counts as done.
const mirrorEpsilon = 1e-5

func mirrorLess(a, b *entry) bool {
	if a.remaining != b.remaining {
		return a.remaining < b.remaining
	}
	if a.job.Submit != b.job.Submit {
		return a.job.Submit < b.job.Submit
	}
	return a.seq < b.seq
}

func newMirror() *mirror {
	return &mirror{clock: math.NaN(), tree: btree.NewG(16, mirrorLess)}
}

// add puts e on the machine with size seconds of virtual work.
func (m *mirror) add(e *entry, size float64) {
	e.remaining, e.released, e.onVM = size, false, true
	m.tree.ReplaceOrInsert(e)
}

// remove takes an unreleased e off (the policy started it early).
func (m *mirror) remove(e *entry) {
	if e.onVM {
		m.tree.Delete(e)
		e.onVM = false
	}
}

// advance runs the machine to now, marking released entries with their
// release rank and time.
func (m *mirror) advance(now float64) {
	if math.IsNaN(m.clock) {
		m.clock = now
	}
	for now > m.clock {
		h, ok := m.tree.Min()
		if !ok {
			m.clock = now
			break
		}
		dt := now - m.clock
		if h.remaining > dt+mirrorEpsilon {
			h.remaining -= dt
			m.clock = now
			break
		}
		m.clock += h.remaining
		h.remaining = 0
		m.tree.DeleteMin()
		m.release(h)
	}
	for {
		h, ok := m.tree.Min()
		if !ok || h.remaining > mirrorEpsilon {
			return
		}
		m.tree.DeleteMin()
		m.release(h)
	}
}

func (m *mirror) release(e *entry) {
	e.onVM, e.released, e.releasedAt, e.relRank = false, true, m.clock, m.nrel
	m.nrel++
}

// len returns the number of unreleased jobs.
func (m *mirror) len() int { return m.tree.Len() }
