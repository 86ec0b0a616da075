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
// under Params.WaitLimit, WaitFactor and WaitScale (README, "Living with
// the site's policy"). A job is overdue at the first bound it reaches:
// Submit + WaitLimit, Submit + WaitFactor·max(ranked prediction,
// MinWaitBase), or Submit + WaitScale·max(recent mean wait, MinWaitBase).
type waitBound struct {
	limit, factor, scale float64
	shadow               float64              // Params.ShadowWait; 0: no shadow bound
	shadowClock          float64              // the age shadow's clock: when its last job's work ends, seconds
	gpus                 int                  // the cluster's GPUs, the age shadow's capacity
	tree                 *btree.BTreeG[*Task] // waiting, not yet overdue, by (due, seq): the fixed bounds
	bySubmit             *btree.BTreeG[*Task] // the same jobs by (submit, seq), for the relative bound
	recent               [RecentStarts]float64
	nrecent, next0       int
	sum                  float64
}

func byDue(a, b *Task) bool {
	if a.due != b.due {
		return a.due < b.due
	}
	return a.Seq < b.Seq
}

func bySubmitSeq(a, b *Task) bool {
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.Seq < b.Seq
}

// newWaitBound returns the bounds of p for a cluster of gpus GPUs (the age
// shadow's capacity; the shadow bound is off when gpus ≤ 0).
func newWaitBound(p Params, gpus int) waitBound {
	w := waitBound{limit: p.WaitLimit, factor: p.WaitFactor, scale: p.WaitScale,
		tree: btree.NewG(btreeDegree, byDue), bySubmit: btree.NewG(btreeDegree, bySubmitSeq),
		shadowClock: math.Inf(-1), gpus: gpus}
	if gpus > 0 {
		w.shadow = p.ShadowWait
	}
	return w
}

// shadowArrive gives t, which has just arrived, its start in the age
// shadow (t.shadowStart): a virtual machine of the cluster's GPUs that
// serves every job in arrival order, each for GPUs × ranked prediction /
// G seconds, as the site's age order would on a machine without
// fragmentation. Nothing is done without the shadow bound.
func (w *waitBound) shadowArrive(t *Task) {
	if w.shadow <= 0 {
		return
	}
	start := math.Max(w.shadowClock, t.Submit)
	t.shadowStart = start
	w.shadowClock = start + float64(t.GPUs)*t.Ranked()/float64(w.gpus)
}

// dueAt returns when t becomes overdue under the fixed bounds and the
// shadow bound, or +Inf.
func (w *waitBound) dueAt(t *Task) float64 {
	due := w.dueFrom(t.Submit, t.Ranked())
	if w.shadow > 0 {
		due = math.Min(due, t.shadowStart+w.shadow*math.Max(t.Ranked(), ShadowFloor))
	}
	return due
}

// dueFrom returns when a job that waits from from, with size seconds of
// predicted run time, becomes overdue under the fixed bounds, or +Inf.
func (w *waitBound) dueFrom(from, size float64) float64 {
	due := math.Inf(1)
	if w.limit > 0 {
		due = from + w.limit
	}
	if w.factor > 0 {
		due = math.Min(due, from+w.factor*math.Max(size, MinWaitBase))
	}
	return due
}

// relative returns the relative bound's wait now, seconds, or +Inf.
func (w *waitBound) relative() float64 {
	if w.scale <= 0 || w.nrecent == 0 {
		return math.Inf(1)
	}
	return w.scale * math.Max(w.sum/float64(w.nrecent), MinWaitBase)
}

// started records the wait of a job that has just started, for the
// relative bound.
func (w *waitBound) started(now float64, t *Task) {
	if w.scale <= 0 {
		return
	}
	wait := math.Max(now-t.Submit, 0)
	if w.nrecent == RecentStarts {
		w.sum -= w.recent[w.next0]
	} else {
		w.nrecent++
	}
	w.recent[w.next0] = wait
	w.sum += wait
	w.next0 = (w.next0 + 1) % RecentStarts
}

// add starts watching waiting job t (not overdue): t.due is set from its
// current prediction.
func (w *waitBound) add(t *Task) {
	t.due = w.dueAt(t)
	if !math.IsInf(t.due, 1) {
		w.tree.ReplaceOrInsert(t)
	}
	if w.scale > 0 {
		w.bySubmit.ReplaceOrInsert(t)
	}
}

// addFrom starts watching t, a job stopped at from with left seconds of
// predicted run time to go, under the fixed bounds counted from the stop:
// overdue at from + WaitLimit or from + WaitFactor·max(left, MinWaitBase),
// whichever comes first. The relative bound (WaitScale), which counts
// from the submit, does not watch it.
func (w *waitBound) addFrom(t *Task, from, left float64) { w.addDue(t, w.dueFrom(from, left)) }

// addDue watches t, a preempted job, under its own bound: it becomes
// overdue at due (+Inf: never).
func (w *waitBound) addDue(t *Task, due float64) {
	t.due = due
	if !math.IsInf(due, 1) {
		w.tree.ReplaceOrInsert(t)
	}
}

// remove stops watching t (started, withdrawn, overdue, re-predicted).
func (w *waitBound) remove(t *Task) {
	if t.overdue {
		return
	}
	if !math.IsInf(t.due, 1) {
		w.tree.Delete(t)
	}
	if w.scale > 0 {
		w.bySubmit.Delete(t)
	}
}

// next returns the earliest time a watched job becomes overdue, or +Inf.
func (w *waitBound) next() float64 {
	next := math.Inf(1)
	if t, ok := w.tree.Min(); ok {
		next = t.due
	}
	if t, ok := w.bySubmit.Min(); ok {
		next = math.Min(next, t.Submit+w.relative())
	}
	return next
}

// popDue removes the jobs overdue at now, earliest due first, marks them
// overdue (t.due: when they became so) and calls f on each.
func (w *waitBound) popDue(now float64, f func(t *Task)) {
	for {
		a, okA := w.tree.Min()
		b, okB := w.bySubmit.Min()
		rel := w.relative()
		switch {
		case okA && a.due <= now && (!okB || a.due <= b.Submit+rel):
			w.remove(a)
		case okB && b.Submit+rel <= now:
			w.remove(b)
			b.due, a = b.Submit+rel, b
		default:
			return
		}
		a.overdue = true
		f(a)
	}
}
