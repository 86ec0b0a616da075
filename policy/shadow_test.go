package policy

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
)

// TestShadowWait: each arriving job gets its start in the age shadow (the
// jobs in arrival order on a virtual machine of the cluster's GPUs, each
// for GPUs × prediction / G seconds) and becomes overdue ShadowWait ×
// max(prediction, ShadowFloor) past it; without the bound it never does.
func TestShadowWait(t *testing.T) {
	type arrival struct {
		submit float64
		gpus   int
		pred   float64
	}
	arrivals := []arrival{
		{submit: 0, gpus: 8, pred: 7200}, // the whole cluster for 7200 s
		{submit: 10, gpus: 4, pred: 100}, // behind it: 7200, then 50 s of the machine
		{submit: 20, gpus: 2, pred: 40000},
		{submit: 1e5, gpus: 1, pred: 10}, // after an idle gap: its own submit
	}
	for _, tc := range []struct {
		wait   float64
		starts []float64
		dues   []float64
	}{
		{wait: 1, starts: []float64{0, 7200, 7250, 1e5},
			dues: []float64{7200, 7200 + 3600, 7250 + 40000, 1e5 + 3600}},
		{wait: 0.5, starts: []float64{0, 7200, 7250, 1e5},
			dues: []float64{3600, 7200 + 1800, 7250 + 20000, 1e5 + 1800}},
		{wait: 0, dues: []float64{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}},
	} {
		params := DefaultParams()
		params.ShadowWait = tc.wait
		env := NewEnv(cluster.Uniform(2, 4), params)
		pol, err := New("asrpt", env)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range arrivals {
			tk, err := env.NewTask(&job.Job{ID: string(rune('a' + i)), User: "u", Account: "a", Submit: a.submit, GPUs: a.gpus, RunTime: a.pred, TimeLimit: a.pred},
				i+1, prediction.Estimate{Seconds: a.pred, Known: true})
			if err != nil {
				t.Fatal(err)
			}
			pol.Arrive(a.submit, tk)
			if tc.starts != nil && tk.shadowStart != tc.starts[i] {
				t.Errorf("wait %g, job %d: shadow start %v, want %v", tc.wait, i, tk.shadowStart, tc.starts[i])
			}
			if tk.due != tc.dues[i] {
				t.Errorf("wait %g, job %d: due %v, want %v", tc.wait, i, tk.due, tc.dues[i])
			}
		}
	}
}
