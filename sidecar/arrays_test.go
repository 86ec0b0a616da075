package sidecar

import (
	"context"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
	"github.com/asrpt/asrpt/predictor"
)

// TestArrayTaskSizedBySiblings: with the history read from accounting, a
// pending array (its remainder, the record that holds the tasks not yet
// started) is predicted from the finished tasks of the array (estimator
// "array"), while a job of the same (user, name) group outside the array
// gets the group's estimate.
func TestArrayTaskSizedBySiblings(t *testing.T) {
	h := newHarness(t, 2, 4, true, func(c *Config) { c.History = 24 * time.Hour })
	h.pred = predictor.WithArrays(predictor.NewMean())
	h.s = h.newSidecar()
	base := float64(t0.Add(-6 * time.Hour).Unix())
	h.fake.AddAccounting(
		job.Job{ID: "30", User: "u", Name: "sweep", Partition: "gpu", Submit: base, RunTime: 9000, State: "COMPLETED", GPUs: 1},
		job.Job{ID: "41", ArrayJobID: "40", User: "u", Name: "sweep", Partition: "gpu", Submit: base + 100, RunTime: 1200, State: "COMPLETED", GPUs: 1},
		job.Job{ID: "42", ArrayJobID: "40", User: "u", Name: "sweep", Partition: "gpu", Submit: base + 100, RunTime: 5, State: "FAILED", GPUs: 1},
	)
	task := pend("40", "sweep", 1, t0)
	task.Array.JobID, task.Array.TaskID, task.Array.Tasks = "40", -1, "2-5"
	h.fake.Submit(task)
	h.fake.Submit(pend("60", "sweep", 1, t0))
	h.cycle(t0)
	rep, err := h.s.Plan(context.Background(), t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]decision.PlanRow{}
	for _, r := range rep.Plan {
		got[r.JobID] = r
	}
	if r := got["40"]; r.Estimator != string(prediction.ByArray) || r.Predicted != 1200 {
		t.Errorf("array task: estimator %q, %v s; want array, 1200 s (its finished task)", r.Estimator, r.Predicted)
	}
	if r := got["60"]; r.Estimator != string(prediction.ByGroup) || r.Predicted == 1200 {
		t.Errorf("job outside the array: estimator %q, %v s; want the group's", r.Estimator, r.Predicted)
	}
}
