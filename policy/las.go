package policy

import (
	"math"
	"slices"

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
	if a.level != b.level {
		return a.level < b.level
	}
	if a.Submit != b.Submit {
		return a.Submit < b.Submit
	}
	return a.Seq < b.Seq
}

// las is Tiresias' discretized two-dimensional least-attained-service
// policy: preemptive, it runs the jobs of the lowest queues that fit and
// preempts running jobs of higher queues to make room. It needs preemption,
// which Slurm does not offer asrpt, so it is a simulator-only reference.
type las struct {
	starter
	name    string
	active  *btree.BTreeG[*Task] // pending and running jobs
	running map[*Task]struct{}
	want    map[*Task]bool
	buf     []*Task
}

var _ Policy = (*las)(nil)

func newLAS(name string, env *Env) *las {
	return &las{starter: starter{env: env}, name: name, active: btree.NewG(btreeDegree, byLevel),
		running: map[*Task]struct{}{}, want: map[*Task]bool{}}
}

func (l *las) Name() string { return l.name }

func (l *las) Arrive(now float64, t *Task) {
	t.level, t.lastSeen = 0, now
	l.active.ReplaceOrInsert(t)
}

func (l *las) Withdraw(_ float64, t *Task) {
	if !t.running {
		l.active.Delete(t)
	}
}

func (l *las) Restore(now float64, t *Task, _ float64, _ bool) { l.Arrive(now, t) }

func (l *las) Finish(now float64, t *Task) {
	l.account(now, t)
	l.active.Delete(t)
	delete(l.running, t)
	t.running = false
}

// account brings t's attained service up to now and moves it to the queue
// its service puts it in.
func (l *las) account(now float64, t *Task) {
	if t.running {
		t.Attained += float64(t.GPUs) * (now - t.lastSeen)
	}
	t.lastSeen = now
	lvl := 0
	for lvl < len(LASThresholds) && t.untilThreshold(lvl) <= timeEpsilon {
		lvl++
	}
	if lvl != t.level {
		l.active.Delete(t)
		t.level = lvl
		l.active.ReplaceOrInsert(t)
	}
}

// untilThreshold returns the running time in seconds t needs, from its
// last accounting, to reach the threshold of level lvl. The tolerance on it
// is in seconds (timeEpsilon), not GPU-seconds: a wide job could otherwise
// sit a few nanoseconds short of its threshold, a step too small to move a
// clock near 2e9 s, and the replay would never advance.
func (t *Task) untilThreshold(lvl int) float64 {
	return (LASThresholds[lvl] - t.Attained) / float64(t.GPUs)
}

func (l *las) NextEvent(now float64) float64 {
	next := math.Inf(1)
	for t := range l.running {
		if t.level < len(LASThresholds) {
			at := t.lastSeen + t.untilThreshold(t.level)
			next = math.Min(next, math.Max(at, now+timeEpsilon))
		}
	}
	return next
}

func (l *las) Pending() []*Task {
	var out []*Task
	l.active.Ascend(func(t *Task) bool {
		if !t.running {
			out = append(out, t)
		}
		return true
	})
	return out
}

func (l *las) Schedule(now float64, free *placement.Free) []Decision {
	running := l.buf[:0]
	for t := range l.running {
		running = append(running, t)
	}
	for _, t := range running {
		l.account(now, t)
	}
	// The jobs that should run: the lowest queues first, greedily by GPU
	// count over the whole cluster.
	capacity := l.env.G
	clear(l.want)
	seen, depth := 0, l.env.Params.Depth
	l.active.Ascend(func(t *Task) bool {
		if capacity == 0 {
			return false
		}
		if !t.running {
			seen++
			if depth > 0 && seen > depth {
				return false
			}
		}
		if t.GPUs <= capacity {
			capacity -= t.GPUs
			l.want[t] = true
		}
		return true
	})
	var out []Decision
	// Preempt in a deterministic order: the running jobs sorted as queued.
	slices.SortFunc(running, func(a, b *Task) int {
		if byLevel(a, b) {
			return -1
		}
		return 1
	})
	for _, t := range running {
		if !l.want[t] {
			free.Give(&t.Placement)
			delete(l.running, t)
			t.running = false
			out = append(out, Decision{Task: t, Preempt: true})
		}
	}
	l.active.Ascend(func(t *Task) bool {
		if !l.want[t] || t.running {
			return true
		}
		p, alpha, ok := l.place(t, free)
		if !ok {
			return true
		}
		l.start(now, t, p, alpha, free)
		t.lastSeen = now
		l.running[t] = struct{}{}
		out = append(out, Decision{Task: t})
		return true
	})
	l.buf = running[:0]
	return out
}
