package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Code
	}{
		{nil, Fits},
		{placement.ErrNoFit, DoesNotFit},
		{errors.New("placement: free-GPU state has 3 nodes, cluster has 4"), Failed},
	} {
		st := StatusOf(tc.err)
		if st.Code != tc.want || (st.Code == Failed) != (st.Err != nil) {
			t.Errorf("StatusOf(%v) = %v %v, want %v", tc.err, st.Code, st.Err, tc.want)
		}
	}
}

// TestPlacementFailureIsNotNoFit: every policy, given a free-GPU state of
// another cluster (a snapshot out of step), starts nothing, does not
// panic, and reports the failure through TakeErrors, which a lack of free
// GPUs does not.
func TestPlacementFailureIsNotNoFit(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			env := NewEnv(cluster.Uniform(2, 4), DefaultParams())
			pol, err := New(name, env)
			if err != nil {
				t.Fatal(err)
			}
			j := &job.Job{ID: "1", User: "u", GPUs: 2, RunTime: 100, TimeLimit: 1000}
			task, err := env.NewTask(j, 0, prediction.Estimate{Seconds: 100, Known: true})
			if err != nil {
				t.Fatal(err)
			}
			pol.Arrive(0, task)
			// A full cluster: does not fit, no error.
			full := placement.NewFree(env.Cluster)
			for i := range env.Cluster.Nodes {
				_ = full.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: full.Mask(i)}}})
			}
			if ds := pol.Schedule(1000, full); len(ds) != 0 {
				t.Fatalf("started %d on a full cluster", len(ds))
			}
			if errs, n := env.TakeErrors(); n != 0 {
				t.Fatalf("does not fit reported as %d failures: %v", n, errs)
			}
			// Free GPUs of a three-node cluster: the placer refuses them.
			other := placement.NewFree(cluster.Uniform(3, 4))
			if ds := pol.Schedule(2000, other); len(ds) != 0 {
				t.Fatalf("started %d on a free-GPU state of another cluster", len(ds))
			}
			errs, n := env.TakeErrors()
			if n == 0 || len(errs) == 0 || !strings.Contains(errs[0].Error(), "job 1") {
				t.Fatalf("failure not reported: %d %v", n, errs)
			}
			if _, n := env.TakeErrors(); n != 0 {
				t.Errorf("TakeErrors did not forget: %d", n)
			}
		})
	}
}
