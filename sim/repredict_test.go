package sim

import (
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// learning predicts 1000 s for family "long" until one of its jobs has
// finished, then the true run time; family "mid" is always 500 s.
type learning struct{ seen map[string]bool }

func (*learning) Name() string { return "learning" }
func (l *learning) Predict(j *job.Job) predictor.Estimate {
	if j.Name == "long" && !l.seen[j.Name] {
		return predictor.Estimate{Seconds: 1000, Known: true}
	}
	if j.Name == "mid" {
		return predictor.Estimate{Seconds: 500, Known: true}
	}
	return predictor.Estimate{Seconds: j.RunTime, Known: true}
}
func (l *learning) Repredict(j *job.Job, _ float64) predictor.Estimate { return l.Predict(j) }
func (l *learning) Observe(j *job.Job, _ float64)                      { l.seen[j.Name] = true }

// TestRepredictReordersWaitingJobs checks design §5.3 through the replay:
// on one GPU, "long" family jobs are predicted 1000 s until the first one
// finishes after 10 s; its waiting sibling is then predicted 10 s and goes
// before a 500 s job submitted earlier. With predictions frozen at submit
// the sibling waits behind it.
func TestRepredictReordersWaitingJobs(t *testing.T) {
	c := cluster.Uniform(1, 1)
	jobs := []job.Job{
		{ID: "1", User: "u", Name: "long", GPUs: 1, RunTime: 10, Submit: 0},
		{ID: "2", User: "u", Name: "mid", GPUs: 1, RunTime: 500, Submit: 1},
		{ID: "3", User: "u", Name: "long", GPUs: 1, RunTime: 10, Submit: 2},
	}
	for _, tc := range []struct {
		policy string
		frozen bool
		start3 float64
	}{
		{"asrpt", false, 10},
		{"asrpt", true, 510},
		{"spjf", false, 10},
		{"spjf", true, 510},
	} {
		r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: tc.policy,
			Predictor: &learning{seen: map[string]bool{}}, Frozen: tc.frozen, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Jobs[2].Start; got != tc.start3 {
			t.Errorf("%s frozen=%v: job 3 started at %v, want %v", tc.policy, tc.frozen, got, tc.start3)
		}
	}
}
