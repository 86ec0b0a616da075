package predictor

import (
	"strconv"
	"testing"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
)

// countingMean is a Mean that counts the calls it gets.
type countingMean struct {
	*Mean
	predicts, repredicts, observes int
}

func (c *countingMean) Predict(j *job.Job) Estimate { c.predicts++; return c.Mean.Predict(j) }
func (c *countingMean) Repredict(j *job.Job, now float64) Estimate {
	c.repredicts++
	return c.Mean.Repredict(j, now)
}
func (c *countingMean) Observe(j *job.Job, end float64) { c.observes++; c.Mean.Observe(j, end) }

// TestArrays: array tasks are sized from their array's finished, not
// failed, tasks that ended before the instant asked about; everything else
// is the wrapped predictor's; the wrapped predictor hears every call.
func TestArrays(t *testing.T) {
	inner := &countingMean{Mean: NewMean()}
	a := WithArrays(inner)
	task := func(id string, submit, run float64, state string) job.Job {
		return job.Job{ID: id, ArrayJobID: "100", User: "u", Name: "sweep", Submit: submit, RunTime: run, State: state, GPUs: 1}
	}
	other := job.Job{ID: "9", User: "u", Name: "sweep", Submit: 0, RunTime: 5000, State: "COMPLETED", GPUs: 1}
	a.Observe(&other, 5000)
	if g, ok := a.RepredictGroup(&other, 5000); !ok || g != inner.Mean.Predict(&other) {
		t.Fatalf("RepredictGroup before any array task: %+v %v", g, ok)
	}
	t1, t2, t3, t4 := task("101", 6000, 100, "COMPLETED"), task("102", 6000, 300, "COMPLETED"),
		task("103", 6000, 7, "FAILED"), task("104", 6000, 0, "PENDING")
	if got, want := a.Predict(&t4), inner.Mean.Predict(&t4); got != want {
		t.Errorf("no finished task yet: %+v, want the wrapped %+v", got, want)
	}
	if _, ok := a.RepredictGroup(&other, 6000); ok {
		t.Error("RepredictGroup claims one estimate per group once an array task was predicted")
	}
	a.Observe(&t3, 6007) // failed: not a sibling to size by
	if got := a.Repredict(&t4, 7000); got.Estimator == prediction.ByArray {
		t.Errorf("sized by a failed task: %+v", got)
	}
	a.Observe(&t1, 6100)
	a.Observe(&t2, 6300)
	tests := []struct {
		name string
		est  Estimate
		want Estimate
	}{
		{"one sibling by 6200", a.Repredict(&t4, 6200), Estimate{Seconds: 100, Median: 100, Known: true, Estimator: prediction.ByArray}},
		{"two siblings by 6300", a.Repredict(&t4, 6300), Estimate{Seconds: 200, Median: 173.20508075688772, Known: true, Estimator: prediction.ByArray}},
		{"submitted at 6300: only what ended before", a.Predict(&job.Job{ID: "105", ArrayJobID: "100", User: "u", Name: "sweep", Submit: 6300}),
			Estimate{Seconds: 100, Median: 100, Known: true, Estimator: prediction.ByArray}},
		{"capped at the time limit", a.Repredict(&job.Job{ID: "106", ArrayJobID: "100", User: "u", Name: "sweep", Submit: 6000, TimeLimit: 150}, 7000),
			Estimate{Seconds: 150, Median: 150, Known: true, Estimator: prediction.ByArray}},
		{"not an array task", a.Repredict(&other, 7000), inner.Mean.Repredict(&other, 7000)},
		{"another array", a.Repredict(&job.Job{ID: "201", ArrayJobID: "200", User: "u", Name: "sweep", Submit: 6000}, 7000),
			inner.Mean.Repredict(&other, 7000)},
	}
	for _, tc := range tests {
		if tc.est != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, tc.est, tc.want)
		}
	}
	if inner.predicts != 2 || inner.repredicts != 6 || inner.observes != 4 {
		t.Errorf("wrapped predictor heard %d predicts, %d repredicts, %d observes; want 2, 6, 4", inner.predicts, inner.repredicts, inner.observes)
	}
	if a.Name() != "mean" || a.Unwrap() != Predictor(inner) || Unwrap(a) != Predictor(inner) {
		t.Error("name or unwrap")
	}
}

// TestArraysBounded: at most MaxArrays arrays and Window tasks an array are
// kept; the array seen first is forgotten first.
func TestArraysBounded(t *testing.T) {
	a := WithArrays(NewMean())
	for i := range MaxArrays + 1 {
		j := job.Job{ID: strconv.Itoa(i), ArrayJobID: strconv.Itoa(i), User: "u", RunTime: 10, State: "COMPLETED", GPUs: 1}
		a.Observe(&j, 10)
	}
	if len(a.arrays) != MaxArrays || a.arrays["0"] != nil || a.arrays["1"] == nil {
		t.Fatalf("%d arrays kept; first %v second %v", len(a.arrays), a.arrays["0"] != nil, a.arrays["1"] != nil)
	}
	for i := range 3 * Window {
		j := job.Job{ID: "t" + strconv.Itoa(i), ArrayJobID: "big", User: "u", RunTime: float64(1 + i), State: "COMPLETED", GPUs: 1}
		a.Observe(&j, float64(i))
	}
	if r := a.arrays["big"]; len(r.end) != Window || cap(r.end) > 2*Window || r.secs[0] != float64(1+2*Window) || r.secs[Window-1] != float64(3*Window) {
		t.Fatalf("array keeps %d tasks, oldest %v s", len(r.end), r.secs[0])
	}
}
