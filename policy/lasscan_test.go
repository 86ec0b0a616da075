package policy

import (
	"fmt"
	"math"

	"github.com/google/btree"

	"github.com/asrpt/asrpt/placement"
)

// lasScan is the 2D-LAS policy as it was before the pass stopped visiting
// the running jobs one by one: each pass walks the queue in byLevel order
// until the cluster is full. It is the reference TestLASMatchesScan holds
// las to; the pass marks it kept on Task are in a map here.
type lasScan struct {
	starter
	active  *btree.BTreeG[*Task] // pending and running jobs, by byLevel
	running *btree.BTreeG[*Task] // running jobs, by byLevel
	cross   *btree.BTreeG[*Task] // running jobs below the last queue, by threshold time
	pass    int                  // scheduling pass number
	marks   map[*Task]int        // the last pass that examined a job
	want    []*Task
	drop    []*Task
}

var _ Policy = (*lasScan)(nil)

func newLASScan(env *Env) *lasScan {
	return &lasScan{starter: starter{env: env}, active: btree.NewG(btreeDegree, byLevel),
		running: btree.NewG(btreeDegree, byLevel), cross: btree.NewG(btreeDegree, byEnd), marks: map[*Task]int{}}
}

func (l *lasScan) Name() string { return "las-scan" }

func (l *lasScan) Arrive(now float64, t *Task) {
	t.level, t.lastSeen = 0, now
	l.active.ReplaceOrInsert(t)
}

func (l *lasScan) Withdraw(_ float64, t *Task) {
	if !t.running {
		l.active.Delete(t)
	}
}

func (l *lasScan) Restore(now float64, t *Task, _ float64, _ bool) { l.Arrive(now, t) }

func (l *lasScan) Finish(now float64, t *Task) {
	l.stop(now, t)
	l.active.Delete(t)
}

func (l *lasScan) account(now float64, t *Task) {
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

func (l *lasScan) track(t *Task) {
	if t.level < len(LASThresholds) {
		t.end = t.lastSeen + t.untilThreshold(t.level)
		l.cross.ReplaceOrInsert(t)
	}
}

func (l *lasScan) stop(now float64, t *Task) {
	l.cross.Delete(t)
	l.running.Delete(t)
	l.active.Delete(t)
	l.account(now, t)
	l.active.ReplaceOrInsert(t)
	t.running = false
}

func (l *lasScan) NextEvent(now float64) float64 {
	t, ok := l.cross.Min()
	if !ok {
		return math.Inf(1)
	}
	return math.Max(t.end, now+timeEpsilon)
}

func (l *lasScan) Pending() []*Task {
	var out []*Task
	l.active.Ascend(func(t *Task) bool {
		if !t.running {
			out = append(out, t)
		}
		return true
	})
	return out
}

func (l *lasScan) Schedule(now float64, free *placement.Free) []Decision {
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
		l.marks[t] = l.pass
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
			if l.marks[t] != l.pass {
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
