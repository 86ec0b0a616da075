package sim

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// TestPreemptionAccounting replays a contended workload in which the jobs
// of two families opted in, under las (which stops any job) and
// asrpt-preempt, with and without a restart cost and lost work, and checks
// for every job: the time it ran less what it lost is its true run time
// (plain jobs run at α = 1); what it lost is at most the restart cost and
// the lost work of each stop, and at least one restart cost (its last run
// is a restart that completes); asrpt-preempt stops
// only jobs that opted in, at most MaxPreemptions times each, and stops
// some.
func TestPreemptionAccounting(t *testing.T) {
	c := cluster.Uniform(2, 8)
	jobs := randomJobs(3, 300, c.TotalGPUs())
	for i := range jobs {
		jobs[i].Profile, jobs[i].Iterations = "", 0 // plain jobs: α = 1
		jobs[i].RunTime *= 4                        // longer than the exemption, often
	}
	optIn := func(j *job.Job) bool { return j.Name == "fam1" || j.Name == "fam2" }
	cases := []struct {
		policy            string
		restart, lostWork float64
	}{
		{"las", 0, 0},
		{"las", 300, 120},
		{"asrpt-preempt", 0, 0},
		{"asrpt-preempt", 300, 0},
		{"asrpt-preempt", 300, 120},
	}
	for _, tc := range cases {
		params := policy.DefaultParams()
		params.RestartCost, params.LostWork = tc.restart, tc.lostWork
		params.PreemptExempt = 600
		r, err := replayJobs(jobs, c, params, Config{Policy: tc.policy,
			Predictor: predictor.NewMean(), Preemptible: optIn, Check: true})
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		stops := 0
		for i, j := range r.Jobs {
			n := float64(j.Preemptions)
			stops += int(j.Preemptions)
			if got := j.RunTime - j.Lost; math.Abs(got-jobs[i].RunTime) > 1e-6*jobs[i].RunTime {
				t.Errorf("%s restart %v lost %v: job %s ran %v, lost %v: %v of work, want %v",
					tc.policy, tc.restart, tc.lostWork, r.ID(i), j.RunTime, j.Lost, got, jobs[i].RunTime)
			}
			if n > 0 && j.Lost < tc.restart-1e-6 || j.Lost > n*(tc.restart+tc.lostWork)+1e-6 {
				t.Errorf("%s: job %s stopped %d times lost %v", tc.policy, r.ID(i), j.Preemptions, j.Lost)
			}
			if tc.policy == "asrpt-preempt" && j.Preemptions > 0 && !optIn(&jobs[i]) {
				t.Errorf("asrpt-preempt stopped job %s, which did not opt in", r.ID(i))
			}
			if tc.policy == "asrpt-preempt" && int(j.Preemptions) > params.MaxPreemptions {
				t.Errorf("asrpt-preempt stopped job %s %d times, at most %d", r.ID(i), j.Preemptions, params.MaxPreemptions)
			}
		}
		if stops == 0 {
			t.Errorf("%s restart %v: nobody was stopped: the workload tests nothing", tc.policy, tc.restart)
		}
	}
}

// TestLASExemption: under las a long job that has crossed into a lower
// priority queue is stopped as soon as a new job arrives, unless it is
// within its exemption (Params.LASExempt) after its start; then it is
// stopped when the exemption ends.
func TestLASExemption(t *testing.T) {
	c := cluster.Uniform(1, 8)
	jobs := []job.Job{
		{ID: "long", GPUs: 8, RunTime: 10000, TimeLimit: 20000, Submit: 0},
		{ID: "short", GPUs: 8, RunTime: 100, TimeLimit: 200, Submit: 500},
	}
	for _, tc := range []struct {
		exempt, shortStart float64
	}{
		{0, 500},
		{300, 500},
		{3600, 3600},
		{20000, 10000}, // never stopped: the short job waits for the end
	} {
		params := policy.DefaultParams()
		params.LASExempt = tc.exempt
		r, err := replayJobs(jobs, c, params, Config{Policy: "las", Predictor: predictor.Oracle{}, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		long, short := r.Jobs[0], r.Jobs[1]
		wantStops, wantEnd := int32(1), 10100.0
		if tc.shortStart == 10000 {
			wantStops, wantEnd = 0, 10000
		}
		if short.Start != tc.shortStart || long.Preemptions != wantStops || long.End != wantEnd {
			t.Errorf("exemption %v: short starts at %v, long stopped %d times, ends at %v; want %v, %d, %v",
				tc.exempt, short.Start, long.Preemptions, long.End, tc.shortStart, wantStops, wantEnd)
		}
	}
}
