package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// TestLASCoarseClock checks that 2D-LAS scheduling passes end and time
// moves on at clock values whose float64 spacing (16 s near 1e17) exceeds
// the time a job has left to its next threshold.
func TestLASCoarseClock(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	p, _ := New("las", env)
	free := placement.NewFree(env.Cluster)
	tasks := newTasks(t, env, [][2]float64{{8, 1e6}, {8, 1e6}})
	done := make(chan string, 1)
	go func() {
		now := 1e17
		for _, task := range tasks {
			p.Arrive(now, task)
		}
		p.Schedule(now, free)
		for range 100 {
			next := p.NextEvent(now)
			if math.IsInf(next, 1) { // every job in the last queue
				break
			}
			if !(next > now) {
				done <- "next event does not move the clock"
				return
			}
			now = next
			p.Schedule(now, free)
		}
		done <- ""
	}()
	select {
	case msg := <-done:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a scheduling pass did not end")
	}
}

// lasSide is one of the two policies TestLASMatchesScan runs: its own
// tasks (the policies write their scheduling state on them) and free GPUs.
type lasSide struct {
	env   *Env
	pol   Policy
	free  *placement.Free
	tasks []*Task
}

// TestLASMatchesScan runs las and lasScan, the reference that scans the
// queue job by job, side by side on random arrivals (some submitted in the
// past, so they enter the middle of a queue), completions, withdrawals and
// clock steps that move running jobs across their thresholds, and checks
// that every pass makes the same decisions in the same order with the same
// placements, and that both leave the same pending order, next event and
// attained service. It also checks las's tree and the GPUs in use after
// every pass.
func TestLASMatchesScan(t *testing.T) {
	for _, tc := range []struct {
		name         string
		nodes, depth int
		steps        int
		clock        float64 // start time, seconds
		seed         uint64
	}{
		{"one node", 1, 0, 3000, 0, 1},
		{"four nodes, depth 1", 4, 1, 3000, 0, 2},
		{"four nodes, depth 3", 4, 3, 3000, 1.8e9, 3},
		{"sixteen nodes", 16, 0, 4000, 1.8e9, 4},
		{"sixteen nodes, depth 5", 16, 5, 4000, 0, 5},
		{"sixty-four nodes, depth 40", 64, 40, 3000, 1.8e9, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := DefaultParams()
			params.Depth = tc.depth
			c := cluster.Uniform(tc.nodes, 8)
			var sides [2]*lasSide
			for i := range sides {
				env := NewEnv(c, params)
				pol := Policy(newLAS("las", env))
				if i == 1 {
					pol = newLASScan(env)
				}
				sides[i] = &lasSide{env: env, pol: pol, free: placement.NewFree(c)}
			}
			rng := rand.New(rand.NewPCG(tc.seed, 0))
			now := tc.clock
			active := map[int]bool{} // the jobs arrived and neither finished nor withdrawn
			starts, preemptions, mostPending := 0, 0, 0
			for step := range tc.steps {
				switch r := rng.IntN(10); {
				case r < 3: // arrivals
					for range 1 + rng.IntN(2) {
						g := 1 << rng.IntN(6)
						if g > c.TotalGPUs() {
							g = 1
						}
						sub := now
						if rng.IntN(4) == 0 {
							sub -= float64(rng.IntN(5000))
						}
						seq := len(sides[0].tasks)
						j := &job.Job{ID: fmt.Sprint(seq), Submit: sub, GPUs: g, RunTime: 1}
						for _, s := range sides {
							task, err := s.env.NewTask(j, seq, prediction.Estimate{Seconds: 1, Known: true})
							if err != nil {
								t.Fatal(err)
							}
							s.tasks = append(s.tasks, task)
							s.pol.Arrive(now, task)
						}
						active[seq] = true
					}
				case r < 6: // a completion
					if seq, ok := pick(rng, sides[0].tasks, active, true); ok {
						for _, s := range sides {
							task := s.tasks[seq]
							if err := s.free.Give(&task.Placement); err != nil {
								t.Fatal(err)
							}
							s.pol.Finish(now, task)
						}
						delete(active, seq)
					}
				case r < 7: // a withdrawal
					if seq, ok := pick(rng, sides[0].tasks, active, false); ok {
						for _, s := range sides {
							s.pol.Withdraw(now, s.tasks[seq])
						}
						delete(active, seq)
					}
				default: // time passes, up to the next threshold crossing or past it
					next := sides[0].pol.NextEvent(now)
					if other := sides[1].pol.NextEvent(now); other != next {
						t.Fatalf("step %d: next event %v, the scan %v", step, next, other)
					}
					step := float64(1 + rng.IntN(2000))
					if !math.IsInf(next, 1) && rng.IntN(2) == 0 {
						step = next - now
					}
					now += step
				}
				var got [2][]Decision
				for i, s := range sides {
					got[i] = append([]Decision(nil), s.pol.Schedule(now, s.free)...)
				}
				if err := sameDecisions(got[0], got[1]); err != nil {
					t.Fatalf("step %d, t=%v: %v", step, now, err)
				}
				if err := sameLASState(sides, active); err != nil {
					t.Fatalf("step %d, t=%v: %v", step, now, err)
				}
				for _, d := range got[0] {
					if d.Preempt {
						preemptions++
					} else {
						starts++
					}
				}
				mostPending = max(mostPending, len(sides[0].pol.Pending()))
			}
			// The random walk is only a test if it preempts and queues.
			t.Logf("%d starts, %d preemptions, at most %d jobs pending", starts, preemptions, mostPending)
			if preemptions == 0 || mostPending <= max(tc.depth, 1) {
				t.Errorf("%d preemptions, at most %d jobs pending: the walk does not exercise the pass", preemptions, mostPending)
			}
		})
	}
}

// pick returns a random job of active that is running (or pending).
func pick(rng *rand.Rand, tasks []*Task, active map[int]bool, running bool) (int, bool) {
	var seqs []int
	for _, task := range tasks {
		if active[task.Seq] && task.running == running {
			seqs = append(seqs, task.Seq)
		}
	}
	if len(seqs) == 0 {
		return 0, false
	}
	return seqs[rng.IntN(len(seqs))], true
}

// sameDecisions compares two passes' decisions, in order.
func sameDecisions(a, b []Decision) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d decisions, the scan %d: %v, %v", len(a), len(b), seqsOf(a), seqsOf(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Task.Seq != y.Task.Seq || x.Preempt != y.Preempt {
			return fmt.Errorf("decision %d: job %d preempt %v, the scan job %d preempt %v", i, x.Task.Seq, x.Preempt, y.Task.Seq, y.Preempt)
		}
		if !reflect.DeepEqual(x.Task.Placement, y.Task.Placement) || x.Task.Alpha != y.Task.Alpha || x.Task.Start != y.Task.Start {
			return fmt.Errorf("decision %d, job %d: placement %v α %v start %v, the scan %v α %v start %v", i, x.Task.Seq,
				x.Task.Placement, x.Task.Alpha, x.Task.Start, y.Task.Placement, y.Task.Alpha, y.Task.Start)
		}
	}
	return nil
}

func seqsOf(ds []Decision) []int {
	out := make([]int, len(ds))
	for i, d := range ds {
		out[i] = d.Task.Seq
		if d.Preempt {
			out[i] = -out[i] - 1
		}
	}
	return out
}

// sameLASState checks that both sides hold the same scheduling state for
// every job, the same pending order, that the GPUs in use are those of the
// running jobs, and that las's tree holds exactly the active jobs.
func sameLASState(sides [2]*lasSide, active map[int]bool) error {
	a, b := sides[0], sides[1]
	for i, x := range a.tasks {
		y := b.tasks[i]
		if x.running != y.running || x.level != y.level || x.Attained != y.Attained || x.lastSeen != y.lastSeen {
			return fmt.Errorf("job %d: running %v level %d attained %v, the scan %v %d %v", i, x.running, x.level, x.Attained,
				y.running, y.level, y.Attained)
		}
	}
	pa, pb := a.pol.Pending(), b.pol.Pending()
	if len(pa) != len(pb) {
		return fmt.Errorf("%d pending, the scan %d", len(pa), len(pb))
	}
	for i := range pa {
		if pa[i].Seq != pb[i].Seq {
			return fmt.Errorf("pending %d: job %d, the scan %d", i, pa[i].Seq, pb[i].Seq)
		}
	}
	for _, s := range sides {
		used := 0
		for _, task := range s.tasks {
			if task.running {
				used += task.Placement.GPUs()
			}
		}
		if used+s.free.Total() != s.env.G {
			return fmt.Errorf("%s: %d GPUs in use by running jobs, %d free, cluster has %d", s.pol.Name(), used, s.free.Total(), s.env.G)
		}
	}
	var want []*Task
	for _, task := range a.tasks {
		if active[task.Seq] {
			want = append(want, task)
		}
	}
	sort.Slice(want, func(i, j int) bool { return byLevel(want[i], want[j]) })
	return checkLASTree(&a.pol.(*las).active, want)
}

// BenchmarkLAS measures a 2D-LAS scheduling pass on a full cluster of
// 1-GPU jobs with 500 pending 16-GPU jobs queued behind them: before each
// pass a running job ends and is submitted again with the same key, and
// the pass starts it again. las's cost should not depend on the number of
// running jobs; the scan reference's grows with it.
func BenchmarkLAS(b *testing.B) {
	for _, impl := range []string{"las", "scan"} {
		for _, nodes := range []int{125, 1000} {
			b.Run(fmt.Sprintf("%s/%d-running", impl, nodes*8), func(b *testing.B) {
				env := NewEnv(cluster.Uniform(nodes, 8), DefaultParams())
				pol := Policy(newLAS("las", env))
				if impl == "scan" {
					pol = newLASScan(env)
				}
				free := placement.NewFree(env.Cluster)
				var running []*Task
				for i := range env.G + 500 {
					g := 1
					if i >= env.G {
						g = 16
					}
					t, err := env.NewTask(&job.Job{ID: fmt.Sprint(i), Submit: float64(i), GPUs: g, RunTime: 1}, i,
						prediction.Estimate{Seconds: 1, Known: true})
					if err != nil {
						b.Fatal(err)
					}
					pol.Arrive(0, t)
					if g == 1 {
						running = append(running, t)
					}
					if (i+1)%env.Params.Depth == 0 { // a pass examines Depth pending jobs
						pol.Schedule(0, free)
					}
				}
				if pol.Schedule(0, free); free.Total() != 0 {
					b.Fatalf("%d GPUs free after the 1-GPU jobs started", free.Total())
				}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					t := running[i%len(running)]
					if err := free.Give(&t.Placement); err != nil {
						b.Fatal(err)
					}
					pol.Finish(0, t)
					pol.Arrive(0, t)
					if d := pol.Schedule(0, free); len(d) != 1 || d[0].Task != t {
						b.Fatalf("pass %d: decisions %v, want the start of job %d", i, seqsOf(d), t.Seq)
					}
				}
			})
		}
	}
}
