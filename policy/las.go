package policy

import (
	"fmt"
	"math"

	"github.com/google/btree"

	"github.com/asrpt/asrpt/placement"
)

// LASThresholds are the attained-service thresholds of the discretized
// 2D-LAS queues, in GPU-seconds: a job starts in queue 0 and moves to queue
// k once it has received LASThresholds[k-1] GPU-seconds. Tiresias uses a
// small number of queues to avoid thrashing; these (1 and 10 GPU-hours) are
// ours.
var LASThresholds = []float64{3600, 36000}

// byLevel orders 2D-LAS jobs by queue level, then submit time (FIFO within
// a queue, as Tiresias), then sequence.
func byLevel(a, b *Task) bool {
	if la, lb := a.lasRank(), b.lasRank(); la != lb {
		return la < lb
	}
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.Seq < b.Seq
}

// lasRank is t's place among the 2D-LAS queues: its level, or -1, before
// every queue, while it runs within its exemption (Params.LASExempt).
func (t *Task) lasRank() int {
	if t.exempt {
		return -1
	}
	return t.level
}

// las is Tiresias' discretized two-dimensional least-attained-service
// policy: preemptive, it runs the jobs of the lowest queues that fit and
// preempts running jobs of higher queues to make room. It needs preemption,
// which Slurm does not offer asrpt, so it is a simulator-only reference.
//
// Cost per pass, n jobs pending or running: O(log n) per running job whose
// queue changes (they are kept by the time they cross their next threshold,
// in Task.end) and per decision, plus O(log n) per run of consecutive jobs
// that fit in the GPUs left (see choose). Each run but the last ends at a
// job the scan passes over: a running one is preempted (a decision), and
// a pending one is among the first Params.Depth pending jobs when Depth
// bounds the scan. The jobs that keep running are not visited one by one:
// a pass on a cluster whose running jobs all keep their GPUs costs
// O(log n) however many there are.
type las struct {
	starter
	name   string
	active lasTree              // pending and running jobs, by byLevel
	cross  *btree.BTreeG[*Task] // running jobs below the last queue, by threshold time
	want   []*Task
	drop   []*Task
	out    []Decision
}

var _ Policy = (*las)(nil)

func newLAS(name string, env *Env) *las {
	return &las{starter: starter{env: env}, name: name, cross: btree.NewG(btreeDegree, byEnd)}
}

func (l *las) Name() string { return l.name }

func (l *las) Arrive(now float64, t *Task) {
	t.level, t.lastSeen = 0, now
	l.active.Insert(t)
}

func (l *las) Withdraw(_ float64, t *Task) {
	if !t.running {
		l.active.Remove(t)
	}
}

func (l *las) Restore(now float64, t *Task, _ float64, _ bool) { l.Arrive(now, t) }

func (l *las) Finish(now float64, t *Task) {
	l.cross.Delete(t)
	l.active.Remove(t)
	l.account(now, t)
	t.running, t.exempt = false, false
}

// untilThreshold returns the running time in seconds t needs, from its
// last accounting, to reach the threshold of level lvl. The tolerance on it
// is in seconds (timeEpsilon), not GPU-seconds: a wide job could otherwise
// sit a few nanoseconds short of its threshold, a step too small to move a
// clock near 2e9 s, and the replay would never advance.
func (t *Task) untilThreshold(lvl int) float64 {
	return (LASThresholds[lvl] - t.Attained) / float64(t.GPUs)
}

// account brings the attained service of running t up to now and moves it
// to the queue its service puts it in; the caller has taken t out of the
// trees ordered by level. A threshold counts as crossed when the time left
// to it is within timeEpsilon, or when the clock cannot tell its crossing
// time from now+timeEpsilon (times so large that their float64 spacing
// exceeds timeEpsilon): a job tracked with such a crossing time would be
// due again at once, and Schedule would never finish.
func (l *las) account(now float64, t *Task) {
	t.Attained += float64(t.GPUs) * (now - t.lastSeen)
	t.lastSeen = now
	for t.level < len(LASThresholds) {
		u := t.untilThreshold(t.level)
		if u > timeEpsilon && now+u > now+timeEpsilon {
			break
		}
		t.level++
	}
}

// track puts running t into the threshold tree when it has a next queue
// or an exemption to end, keyed by the earlier of the two.
func (l *las) track(t *Task) {
	end := math.Inf(1)
	if t.level < len(LASThresholds) {
		end = t.lastSeen + t.untilThreshold(t.level)
	}
	if t.exempt {
		end = math.Min(end, t.Start+l.env.Params.LASExempt)
	}
	if !math.IsInf(end, 1) {
		t.end = end
		l.cross.ReplaceOrInsert(t)
	}
}

// stop takes running t out of the running structures with its service
// accounted up to now.
func (l *las) stop(now float64, t *Task) {
	l.cross.Delete(t)
	l.active.Remove(t)
	l.account(now, t)
	t.running, t.exempt = false, false
	l.active.Insert(t)
}

func (l *las) NextEvent(now float64) float64 {
	t, ok := l.cross.Min()
	if !ok {
		return math.Inf(1)
	}
	return math.Max(t.end, now+timeEpsilon)
}

func (l *las) Pending() []*Task {
	return l.active.Append(make([]*Task, 0, l.active.Pending()), 0, l.active.Len(), false)
}

// Schedule moves the running jobs that crossed a threshold down a queue,
// then gives the cluster to the jobs of the lowest queues: in byLevel
// order, each job is taken if its GPUs fit in what the jobs before it left,
// until no GPU is left or the scan reaches the pending job that Depth
// pending jobs precede. Running jobs not taken are preempted. The returned
// slice is reused by the next call.
func (l *las) Schedule(now float64, free *placement.Free) []Decision {
	for {
		t, ok := l.cross.Min()
		if !ok || t.end > now+timeEpsilon {
			break
		}
		l.cross.DeleteMin()
		l.active.Remove(t)
		l.account(now, t)
		if t.exempt && now-t.Start >= l.env.Params.LASExempt-timeEpsilon {
			t.exempt = false // its exemption is over: back to its queue
		}
		l.active.Insert(t)
		l.track(t)
	}
	want, drop := l.choose()
	out := l.out[:0]
	for _, t := range drop {
		if err := free.Give(&t.Placement); err != nil {
			l.env.fail(t, fmt.Errorf("preemption: %w", err))
		}
		l.stop(now, t)
		out = append(out, Decision{Task: t, Preempt: true})
	}
	for _, t := range want {
		p, alpha, ok := l.place(t, free)
		if !ok || !l.start(now, t, p, alpha, free) {
			continue
		}
		t.lastSeen = now
		if l.env.Params.LASExempt > 0 {
			l.active.Remove(t)
			t.exempt = true
			l.active.Insert(t)
		} else {
			l.active.Refresh(t)
		}
		l.track(t)
		out = append(out, Decision{Task: t})
	}
	l.want, l.drop, l.out = want[:0], drop[:0], out
	return out
}

// choose returns the pending jobs the greedy scan takes and the running
// jobs it passes over, both in byLevel order. It does not visit the jobs one
// by one: from each position it finds the next job that fits the GPUs left
// (FirstFit), then the longest run from there that fits as a whole (Over),
// so its cost is O(log n) per such run and per job returned, whatever the
// number of running jobs the runs hold.
func (l *las) choose() (want, drop []*Task) {
	want, drop = l.want[:0], l.drop[:0]
	n := l.active.Len()
	stop := n // the scan ends before the pending job past Depth
	if depth := l.env.Params.Depth; depth > 0 {
		stop = l.active.PendingAt(depth)
	}
	capacity, pos := l.env.G, 0
	for capacity > 0 && pos < stop {
		fit := min(l.active.FirstFit(pos, capacity), stop)
		drop = l.active.Append(drop, pos, fit, true) // they do not fit
		if pos = fit; fit == stop {
			break
		}
		base := l.active.SumBefore(fit)
		end := min(l.active.Over(base+capacity), stop)
		capacity -= l.active.SumBefore(end) - base
		want = l.active.Append(want, fit, end, false)
		pos = end
	}
	// Running jobs past the point where the scan stopped lose their GPUs.
	return want, l.active.Append(drop, pos, n, true)
}
