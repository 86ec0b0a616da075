package policy

import (
	"math"

	"github.com/google/btree"
)

// overdueKeyBase is subtracted from an overdue job's due time to make its
// release-queue key: every time the replay and the sidecar handle lies
// within ±2^35 s, so overdue keys are negative and sort before every
// virtual size (≥ 0), among themselves by due time. float64 resolves
// 2^37 to 2^-15 s.
const overdueKeyBase = 1 << 37

// waitBound holds A-SRPT's waiting jobs by the time they become overdue
// under Params.WaitLimit and Params.WaitFactor (README, "Living with the
// site's policy"). A job is overdue at the first bound it reaches:
// Submit + WaitLimit, or Submit + WaitFactor·max(ranked prediction,
// MinWaitBase).
type waitBound struct {
	limit, factor float64
	tree          *btree.BTreeG[*Task] // waiting, not yet overdue, by (due, seq)
}

func byDue(a, b *Task) bool {
	if a.due != b.due {
		return a.due < b.due
	}
	return a.Seq < b.Seq
}

func newWaitBound(p Params) waitBound {
	return waitBound{limit: p.WaitLimit, factor: p.WaitFactor, tree: btree.NewG(btreeDegree, byDue)}
}

// on reports whether any bound is set.
func (w *waitBound) on() bool { return w.limit > 0 || w.factor > 0 }

// dueAt returns when t becomes overdue, or +Inf when no bound is set.
func (w *waitBound) dueAt(t *Task) float64 {
	due := math.Inf(1)
	if w.limit > 0 {
		due = t.Submit + w.limit
	}
	if w.factor > 0 {
		due = math.Min(due, t.Submit+w.factor*math.Max(t.Ranked(), MinWaitBase))
	}
	return due
}

// add starts watching waiting job t (not overdue): t.due is set from its
// current prediction.
func (w *waitBound) add(t *Task) {
	t.due = w.dueAt(t)
	if !math.IsInf(t.due, 1) {
		w.tree.ReplaceOrInsert(t)
	}
}

// remove stops watching t (started, withdrawn, overdue, re-predicted).
func (w *waitBound) remove(t *Task) {
	if !t.overdue && !math.IsInf(t.due, 1) {
		w.tree.Delete(t)
	}
}

// next returns the earliest due time watched, or +Inf.
func (w *waitBound) next() float64 {
	if t, ok := w.tree.Min(); ok {
		return t.due
	}
	return math.Inf(1)
}

// popDue removes the jobs due at or before now, earliest first, marks
// them overdue and calls f on each.
func (w *waitBound) popDue(now float64, f func(t *Task)) {
	for {
		t, ok := w.tree.Min()
		if !ok || t.due > now {
			return
		}
		w.tree.DeleteMin()
		t.overdue = true
		f(t)
	}
}
