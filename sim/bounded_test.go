package sim

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// TestRunBoundedWhateverTheTimes replays traces whose times span the whole
// range the simulator accepts (±MaxTime) through every policy: the work and
// the queue curve stay bounded by the number of events, not by the
// simulated span, and every job completes.
func TestRunBoundedWhateverTheTimes(t *testing.T) {
	const T = MaxTime
	tests := []struct {
		name string
		jobs []job.Job
	}{
		{"run time 1e8", []job.Job{{ID: "1", GPUs: 1, RunTime: 1e8}}},
		{"run time 1e7 after a short span", []job.Job{{ID: "1", GPUs: 1, RunTime: 1}, {ID: "2", Submit: 10, GPUs: 8, RunTime: 1e7}}},
		{"run times near MaxTime", []job.Job{{ID: "1", GPUs: 1, RunTime: 1e10}, {ID: "2", Submit: 1, GPUs: 8, RunTime: 1e10},
			{ID: "3", Submit: 2, GPUs: 4, RunTime: 1}, {ID: "4", Submit: 3, GPUs: 4, RunTime: 1e10}}},
		{"submits from -MaxTime to MaxTime", []job.Job{{ID: "1", Submit: -T, GPUs: 1, RunTime: 5},
			{ID: "2", Submit: T - 6000, GPUs: 1, RunTime: 5}, {ID: "3", Submit: T - 6000, GPUs: 8, RunTime: 5000}}},
		{"short jobs just before MaxTime", []job.Job{{ID: "1", Submit: T - 1e7, GPUs: 3, RunTime: 1}, {ID: "2", Submit: T - 1e7 + 16, GPUs: 8, RunTime: 7},
			{ID: "3", Submit: T - 1e7 + 32, GPUs: 5, RunTime: 3e6}, {ID: "4", Submit: T - 1e7 + 32, GPUs: 2, RunTime: 9}}},
		{"profiled, 1e9 iterations", []job.Job{{ID: "1", GPUs: 8, Profile: "bert-large", Iterations: 1e9}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*cluster.Cluster{cluster.Uniform(1, 8), cluster.Uniform(2, 4)} {
				for _, name := range allPolicies {
					start := time.Now()
					r, err := replayJobs(tc.jobs, c, policy.DefaultParams(), Config{Policy: name,
						Predictor: predictor.NewMean(), QueueSamples: 10, Check: true})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if d := time.Since(start); d > 2*time.Second {
						t.Errorf("%s: %v for %d jobs", name, d, len(tc.jobs))
					}
					if len(r.Queue) > 2*10+1 {
						t.Errorf("%s: %d queue samples, want at most 21", name, len(r.Queue))
					}
					for i := 1; i < len(r.Queue); i++ {
						if r.Queue[i].Time < r.Queue[i-1].Time {
							t.Fatalf("%s: queue samples out of order at %d: %+v", name, i, r.Queue)
						}
					}
					for i, jr := range r.Jobs {
						if !(jr.End >= jr.Start && jr.Start >= jr.Submit && jr.RunTime > 0) {
							t.Errorf("%s: job %s: %+v", name, r.ID(i), jr)
						}
					}
				}
			}
		})
	}
}

// TestRunRefusesTimesPastMaxTime checks the clear errors for times the
// simulator cannot resolve: at Prepare for the trace's own values, and
// ErrTimeRange for a replay that would run past MaxTime.
func TestRunRefusesTimesPastMaxTime(t *testing.T) {
	c := cluster.Uniform(1, 8)
	tests := []struct {
		name string
		jobs []job.Job
		is   error
		want string
	}{
		{"run time 1e300", []job.Job{{ID: "1", GPUs: 1, RunTime: 1e300}}, nil, "job 1: run time 1e+300 s, want at most 34359738368 s (sim.MaxTime)"},
		{"submit 2^63-1", []job.Job{{ID: "1", GPUs: 1, RunTime: 5}, {ID: "2", Submit: math.MaxInt64, GPUs: 1, RunTime: 5}}, nil, "job 2: submit time 9.223372036854776e+18 s"},
		{"iterations 1e300", []job.Job{{ID: "1", GPUs: 8, Profile: "bert-large", Iterations: 1e300}}, nil, "job 1: run time"},
		{"two runs of 2e10 s in a row", []job.Job{{ID: "1", GPUs: 8, RunTime: 2e10}, {ID: "2", GPUs: 8, RunTime: 2e10}}, ErrTimeRange, "next event at t=40000000000 s, 1 jobs not finished"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range allPolicies {
				_, err := replayJobs(tc.jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: predictor.NewMean()})
				if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Errorf("%s: error %v, want one with %q", name, err, tc.want)
				}
			}
		})
	}
}

// TestQueueCurveCapped checks the queue curve of a long replay with many
// events: at most 2·QueueSamples+1 points, in time order, the first at the
// first submission and the last at the last completion.
func TestQueueCurveCapped(t *testing.T) {
	c := cluster.Uniform(1, 8)
	var jobs []job.Job
	for i := range 5000 {
		jobs = append(jobs, job.Job{ID: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Submit: float64(i), GPUs: 8, RunTime: 3})
	}
	for _, n := range []int{1, 7, 100} {
		r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: "fifo", QueueSamples: n})
		if err != nil {
			t.Fatal(err)
		}
		q := r.Queue
		if len(q) > 2*n+1 || len(q) < min(n, 2) {
			t.Errorf("QueueSamples %d: %d points", n, len(q))
		}
		if q[0].Time != 0 || q[len(q)-1].Time != r.Jobs[len(r.Jobs)-1].End {
			t.Errorf("QueueSamples %d: curve from %v to %v, want 0 to %v", n, q[0].Time, q[len(q)-1].Time, r.Jobs[len(r.Jobs)-1].End)
		}
		for i := 1; i < len(q); i++ {
			if q[i].Time < q[i-1].Time {
				t.Fatalf("QueueSamples %d: out of order at %d", n, i)
			}
		}
	}
}

// TestRunStopsOnContext checks that a replay stops with the context's
// error: at once when it is done before the start, and soon after it is
// cancelled during the replay.
func TestRunStopsOnContext(t *testing.T) {
	c := cluster.Uniform(1, 8)
	jobs := make([]job.Job, 20000)
	for i := range jobs {
		jobs[i] = job.Job{ID: strconv.Itoa(i), GPUs: 1, RunTime: 1}
	}
	env := policy.NewEnv(c, policy.DefaultParams())
	w, err := prepareJobs(jobs, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = w.Run(ctx, Config{Policy: "fifo"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	last := 0
	_, err = w.Run(ctx, Config{Policy: "fifo",
		Progress: func(done, _ int) { last = done; cancel() }})
	if !errors.Is(err, context.Canceled) || last >= len(jobs) {
		t.Errorf("context cancelled during the replay: error %v after %d of %d jobs", err, last, len(jobs))
	}
}

// TestPrepareRefusesNonFinite checks that Prepare refuses times the
// simulator cannot order or resolve.
func TestPrepareRefusesNonFinite(t *testing.T) {
	env := policy.NewEnv(cluster.Uniform(1, 8), policy.DefaultParams())
	tests := []struct {
		name string
		j    job.Job
		want string
	}{
		{"NaN submit", job.Job{ID: "1", Submit: math.NaN(), GPUs: 1, RunTime: 5}, "submit time NaN"},
		{"infinite submit", job.Job{ID: "1", Submit: math.Inf(1), GPUs: 1, RunTime: 5}, "submit time +Inf"},
		{"submit before -MaxTime", job.Job{ID: "1", Submit: -MaxTime - 1, GPUs: 1, RunTime: 5}, "sim.MaxTime"},
		{"infinite run time", job.Job{ID: "1", GPUs: 1, RunTime: math.Inf(1)}, "run time +Inf"},
		{"NaN run time", job.Job{ID: "1", GPUs: 1, RunTime: math.NaN()}, "run time NaN"},
		{"infinite iterations", job.Job{ID: "1", GPUs: 8, Profile: "bert-large", Iterations: math.Inf(1)}, "run time +Inf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := prepareJobs([]job.Job{tc.j}, env)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "job 1") {
				t.Errorf("error %v, want one naming job 1 and %q", err, tc.want)
			}
		})
	}
}
