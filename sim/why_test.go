package sim

import (
	"strings"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/reason"
)

// TestWhy: the traced job's story on one 8-GPU node where a long job holds
// every GPU: submitted, waiting (on A-SRPT's virtual machine first, then
// for room), passed by nobody, started when the long job ends, finished.
func TestWhy(t *testing.T) {
	c := cluster.Uniform(1, 8)
	jobs := []job.Job{
		{ID: "long", User: "u", GPUs: 8, RunTime: 1000, TimeLimit: 1000},
		{ID: "b", User: "u", Submit: 10, GPUs: 8, RunTime: 50, TimeLimit: 50},
	}
	type step struct {
		at    float64
		event string
		code  reason.Code
	}
	tests := []struct {
		policy string
		want   []step
	}{
		{"fifo", []step{{10, WhySubmitted, ""}, {10, WhyWaiting, reason.NoRoom}, {1000, WhyStarted, ""}, {1050, WhyFinished, ""}}},
		{"asrpt", []step{{10, WhySubmitted, ""}, {10, WhyWaiting, reason.VirtualQueue}, {60, WhyWaiting, reason.NoRoom},
			{1000, WhyStarted, ""}, {1050, WhyFinished, ""}}},
	}
	for _, tc := range tests {
		r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: tc.policy, Predictor: predictor.Oracle{}, Why: "b"})
		if err != nil {
			t.Fatal(err)
		}
		var got []step
		for _, s := range r.Why {
			got = append(got, step{s.Time, s.Event, s.Reason.Code})
			if s.Event == WhyWaiting && (s.Rank != 1 || s.Waiting != 1 || s.Passed != 0 || s.Reason.Detail == "") {
				t.Errorf("%s: waiting step %+v: want rank 1 of 1, none passed, a detail", tc.policy, s)
			}
		}
		if len(got) != len(tc.want) {
			t.Fatalf("%s: steps %+v, want %+v", tc.policy, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: step %d %+v, want %+v", tc.policy, i, got[i], tc.want[i])
			}
		}
	}
	// Untraced replays keep nothing; an unknown job is an error.
	if r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: "fifo"}); err != nil || r.Why != nil {
		t.Errorf("untraced: %v %v", r.Why, err)
	}
	if _, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: "fifo", Why: "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown job: error %v", err)
	}
}

// TestWhyPassed: jobs that start while the traced job waits are counted.
func TestWhyPassed(t *testing.T) {
	c := cluster.Uniform(1, 8)
	jobs := []job.Job{
		{ID: "hold", User: "u", GPUs: 4, RunTime: 1000, TimeLimit: 1000},
		{ID: "wide", User: "u", Submit: 1, GPUs: 8, RunTime: 10, TimeLimit: 10},
		{ID: "s1", User: "u", Submit: 2, GPUs: 2, RunTime: 5, TimeLimit: 5},
		{ID: "s2", User: "u", Submit: 3, GPUs: 2, RunTime: 5, TimeLimit: 5},
	}
	r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: "wcs-subtime", Predictor: predictor.Oracle{}, Why: "wide"})
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, s := range r.Why {
		passed += s.Passed
	}
	if passed != 2 {
		t.Errorf("steps %+v: %d passed, want 2 (s1, s2 start while wide waits)", r.Why, passed)
	}
}
