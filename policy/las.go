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
//
// Cost per pass: O(log n) per running job whose queue changes (they are kept
// by the time they cross their next threshold, in Task.end), plus the scan
// of the queue in priority order until the cluster is full.
type las struct {
	starter
	name    string
	active  *btree.BTreeG[*Task] // pending and running jobs, by byLevel
	running *btree.BTreeG[*Task] // running jobs, by byLevel
	cross   *btree.BTreeG[*Task] // running jobs below the last queue, by threshold time
	pass    int                  // scheduling pass number, marks Task.pass
	want    []*Task
	drop    []*Task
}

var _ Policy = (*las)(nil)

func newLAS(name string, env *Env) *las {
	return &las{starter: starter{env: env}, name: name, active: btree.NewG(btreeDegree, byLevel),
		running: btree.NewG(btreeDegree, byLevel), cross: btree.NewG(btreeDegree, byEnd)}
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
	l.stop(now, t)
	l.active.Delete(t)
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

// track puts running t into the threshold tree when it has a next queue.
func (l *las) track(t *Task) {
	if t.level < len(LASThresholds) {
		t.end = t.lastSeen + t.untilThreshold(t.level)
		l.cross.ReplaceOrInsert(t)
	}
}

// stop takes running t out of the running structures with its service
// accounted up to now.
func (l *las) stop(now float64, t *Task) {
	l.cross.Delete(t)
	l.running.Delete(t)
	l.active.Delete(t)
	l.account(now, t)
	l.active.ReplaceOrInsert(t)
	t.running = false
}

func (l *las) NextEvent(now float64) float64 {
	t, ok := l.cross.Min()
	if !ok {
		return math.Inf(1)
	}
	return math.Max(t.end, now+timeEpsilon)
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
	// Running jobs that crossed a threshold move down a queue.
	for {
		t, ok := l.cross.Min()
		if !ok || t.end > now+timeEpsilon {
			break
		}
		l.cross.DeleteMin()
		l.running.Delete(t)
		l.active.Delete(t)
		l.account(now, t)
		l.active.ReplaceOrInsert(t)
		l.running.ReplaceOrInsert(t)
		l.track(t)
	}
	// The jobs that should run: the lowest queues first, greedily by GPU
	// count over the whole cluster. Running jobs passed over are preempted.
	l.pass++
	capacity := l.env.G
	want, drop := l.want[:0], l.drop[:0]
	seen, depth := 0, l.env.Params.Depth
	var last *Task
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
		last = t
		t.pass = l.pass
		switch {
		case t.GPUs <= capacity:
			capacity -= t.GPUs
			if !t.running {
				want = append(want, t)
			}
		case t.running:
			drop = append(drop, t)
		}
		return true
	})
	if last != nil {
		// Running jobs after the point where the scan stopped lose their GPUs.
		l.running.AscendGreaterOrEqual(last, func(t *Task) bool {
			if t.pass != l.pass {
				drop = append(drop, t)
			}
			return true
		})
	}
	var out []Decision
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
		l.running.ReplaceOrInsert(t)
		l.track(t)
		out = append(out, Decision{Task: t})
	}
	l.want, l.drop = want[:0], drop[:0]
	return out
}
