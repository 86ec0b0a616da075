package predictor

import (
	"fmt"
	"math"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// TestRunningCensoredMean: mean-gpus-running counts a running job of a group that
// has run longer than the group's mean as one more run, of the mean length
// of the group's finished runs longer than it has run (twice its run when
// none is, at most its time limit); a job still short of the mean, a
// stopped one and a finished one count for nothing more; mean ignores
// running jobs.
func TestRunningCensoredMean(t *testing.T) {
	// The (user, family, 1 GPU) group and its (user, family) group both
	// hold 100, 200 and 1200 s: mean 500 s.
	history := func(p Predictor) {
		for i, run := range []float64{100, 200, 1200} {
			p.Observe(&job.Job{ID: fmt.Sprint("h", i), User: "u", Name: "train", GPUs: 1, RunTime: run}, float64(i))
		}
	}
	// With the prior, the GPU group's estimate is (n·m + 10·m') / (n + 10),
	// m' the (user, family) group's censored mean, the same running jobs
	// counting in both.
	shrunk := func(n, sum float64) float64 {
		m := sum / n
		return (n*m + GPUGroupPrior*m) / (n + GPUGroupPrior)
	}
	type run struct {
		id           string
		start, limit float64
	}
	for _, tc := range []struct {
		name string
		runs []run
		stop []string
		now  float64
		want float64
	}{
		{"none running", nil, nil, 10000, 500},
		{"one short of the mean", []run{{"a", 9700, 0}}, nil, 10000, 500},
		// Ran 600 s: the finished runs longer are 1200 s.
		{"one past the mean", []run{{"a", 9400, 0}}, nil, 10000, shrunk(4, 1500+1200)},
		// Ran 1500 s, longer than every finished run: twice that.
		{"one past every run", []run{{"a", 8500, 0}}, nil, 10000, shrunk(4, 1500+3000)},
		{"capped by its time limit", []run{{"a", 8500, 0 + 2000}}, nil, 10000, shrunk(4, 1500+2000)},
		{"past its time limit: its run so far", []run{{"a", 8500, 1000}}, nil, 10000, shrunk(4, 1500+1500)},
		{"two past the mean, one short", []run{{"a", 9400, 0}, {"b", 8500, 0}, {"c", 9900, 0}}, nil, 10000, shrunk(5, 1500+1200+3000)},
		{"stopped", []run{{"a", 8500, 0}}, []string{"a"}, 10000, 500},
		{"started again", []run{{"a", 8500, 0}, {"a", 9900, 0}}, nil, 10000, 500},
		{"no id: not kept", []run{{"", 8500, 0}}, nil, 10000, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMeanByGPUsRunning()
			history(m)
			others := []*Mean{NewMean(), NewMeanByGPUs()}
			for _, o := range others {
				history(o)
			}
			for _, r := range tc.runs {
				j := job.Job{ID: r.id, User: "u", Name: "train", GPUs: 1, TimeLimit: r.limit}
				m.Started(&j, r.start)
				for _, o := range others {
					o.Started(&j, r.start)
				}
			}
			for _, id := range tc.stop {
				m.Stopped(id)
			}
			m.Clock(tc.now)
			probe := job.Job{User: "u", Name: "train", GPUs: 1}
			if got := m.Predict(&probe).Seconds; math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("mean-gpus-running: %g s, want %g", got, tc.want)
			}
			for _, o := range others {
				o.Clock(tc.now)
				if got := o.Predict(&probe).Seconds; got != 500 {
					t.Errorf("%s: %g s, want 500 (running jobs ignored)", o.Name(), got)
				}
			}
		})
	}
}

// TestRunningFinished: Observe ends a run (the finished run counts, once),
// a job of another GPU count counts only in its (user, family) group, and
// the estimate does not depend on the order the jobs started in.
func TestRunningFinished(t *testing.T) {
	m := NewMeanByGPUsRunning()
	for i, run := range []float64{100, 200, 1200} {
		m.Observe(&job.Job{ID: fmt.Sprint("h", i), User: "u", Name: "train", GPUs: 1, RunTime: run}, float64(i))
	}
	a := job.Job{ID: "a", User: "u", Name: "train", GPUs: 1, RunTime: 4000}
	m.Started(&a, 0)
	m.Clock(3000)
	probe := job.Job{User: "u", Name: "train", GPUs: 1}
	running := m.Predict(&probe).Seconds
	m.Observe(&a, 4000)
	m.Clock(4000)
	if got, want := m.Predict(&probe).Seconds, 5500.0/4; math.Abs(got-want) > 1e-9 {
		t.Errorf("after it finished: %g s, want %g (running, it gave %g)", got, want, running)
	}

	// Order: three jobs started in two orders give the same estimate to
	// the last bit.
	est := func(order []int) float64 {
		m := NewMeanByGPUsRunning()
		for i, run := range []float64{10, 20, 30} {
			m.Observe(&job.Job{ID: fmt.Sprint("h", i), User: "u", Name: "train", GPUs: 1, RunTime: run}, float64(i))
		}
		for _, k := range order {
			m.Started(&job.Job{ID: fmt.Sprint("r", k), User: "u", Name: "train", GPUs: 1 + k%2}, 100+float64(k)*0.1)
		}
		m.Clock(1000)
		return m.Predict(&probe).Seconds
	}
	if x, y := est([]int{0, 1, 2, 3}), est([]int{3, 1, 0, 2}); x != y || x == 20 {
		t.Errorf("by start order: %v and %v (want equal, and above the finished runs' 20 s)", x, y)
	}
}

// TestRunningByName: only mean-gpus-running is run-aware by name
// (Running), through the array wrapper.
func TestRunningByName(t *testing.T) {
	for _, name := range Names() {
		p, err := ByName(name, DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := Running(p); ok != (name == "mean-gpus-running") {
			t.Errorf("%s: run-aware %v", name, ok)
		}
	}
}

// TestRunningBounded: past MaxRunning running jobs the predictor forgets
// them all and goes on from the next start.
func TestRunningBounded(t *testing.T) {
	m := NewMeanByGPUsRunning()
	for i := range MaxRunning + 10 {
		m.Started(&job.Job{ID: fmt.Sprint(i), User: fmt.Sprint("u", i%7), Name: "train", GPUs: 1}, 0)
	}
	if n := len(m.runs.byID); n != 10 {
		t.Errorf("%d running jobs kept, want 10", n)
	}
	total := 0
	for _, l := range m.runs.gpu {
		total += len(l)
	}
	if total != 10 {
		t.Errorf("%d running jobs in the GPU groups, want 10", total)
	}
}

func BenchmarkRunningPredict(b *testing.B) {
	m := NewMeanByGPUsRunning()
	for i := range 64 {
		m.Observe(&job.Job{ID: fmt.Sprint("h", i), User: "u", Name: "train", GPUs: 1, RunTime: float64(100 + 10*i)}, float64(i))
	}
	// 32 running jobs of the group, half of them past its mean.
	for i := range 32 {
		m.Started(&job.Job{ID: fmt.Sprint("r", i), User: "u", Name: "train", GPUs: 1}, float64(-40*i))
	}
	m.Clock(0)
	probe := job.Job{User: "u", Name: "train", GPUs: 1}
	b.ReportAllocs()
	for b.Loop() {
		m.Predict(&probe)
	}
}
