package replay

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/internal/testworkload"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/sim"
)

// workload returns a small generated workload prepared for a 4×8 cluster.
func workload(t *testing.T, seed int64) *sim.Workload {
	t.Helper()
	return testworkload.Generated(t, 300, seed, 4, 8)
}

func newMean(int64) (predictor.Predictor, error) { return predictor.NewMean(), nil }

// TestRunMatchesOneByOne: replays run together give, in spec order, the
// figures each gives alone, and Done sees each once.
func TestRunMatchesOneByOne(t *testing.T) {
	w1, w2 := workload(t, 1), workload(t, 2)
	var specs []Spec
	for _, w := range []*sim.Workload{w1, w2} {
		lb := w.LowerBound().Total
		for _, p := range []string{"asrpt", "fifo", "las", "asrpt-oracle"} {
			specs = append(specs, Spec{Workload: w, LowerBound: lb, Policy: p, Seed: 1})
		}
	}
	seen := make([]int, len(specs))
	together, err := Run(context.Background(), specs, Config{NewPredictor: newMean, Parallel: 3, Keep: true,
		Done: func(i int, o *Outcome) { seen[i]++ }})
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range specs {
		if seen[i] != 1 {
			t.Errorf("spec %d: Done called %d times", i, seen[i])
		}
		alone, err := Run(context.Background(), []Spec{sp}, Config{NewPredictor: newMean, Parallel: 1})
		if err != nil {
			t.Fatal(err)
		}
		a, b := alone[0].Summary, together[i].Summary
		if a.Policy != sp.Policy || b.Policy != sp.Policy || a.TotalJCT != b.TotalJCT || a.RatioToLB != b.RatioToLB {
			t.Errorf("spec %d (%s): alone %s %v, together %s %v", i, sp.Policy, a.Policy, a.TotalJCT, b.Policy, b.TotalJCT)
		}
		if together[i].Result == nil || alone[0].Result != nil {
			t.Errorf("spec %d: Keep not honoured (kept %v, not kept %v)", i, together[i].Result != nil, alone[0].Result != nil)
		}
		if b.FairnessReport == nil {
			t.Errorf("spec %d: no fairness report", i)
		}
	}
}

// TestRunStops: the first error is returned with its label and policy,
// and a cancelled context stops the run.
func TestRunStops(t *testing.T) {
	w := workload(t, 1)
	specs := []Spec{{Label: "case x", Workload: w, Policy: "asrpt"}, {Label: "case x", Workload: w, Policy: "nope"}}
	_, err := Run(context.Background(), specs, Config{NewPredictor: newMean, Parallel: 1})
	if err == nil || !strings.Contains(err.Error(), "case x: policy nope") {
		t.Errorf("error %v, want one naming case x and policy nope", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, specs[:1], Config{NewPredictor: newMean}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v", err)
	}
	if _, err := Run(context.Background(), specs[:1], Config{}); err == nil {
		t.Error("no predictor: no error")
	}
}

// TestRunClosedLoop: the closed loop runs through Run, its sidecar with a
// predictor of its own, and every job ends; its oracle variant is refused.
func TestRunClosedLoop(t *testing.T) {
	w := workload(t, 1)
	lb := w.LowerBound().Total
	out, err := Run(context.Background(), []Spec{{Workload: w, LowerBound: lb, Policy: "asrpt-sidecar", Seed: 1}},
		Config{NewPredictor: newMean, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := out[0].Summary.Loop; l == nil || l.Cycles == 0 || l.Writes["site_factor"] == 0 || l.Writes["nodes"] == 0 {
		t.Fatalf("closed-loop figures %+v: want cycles, site factors and node lists", l)
	}
	r := out[0].Result
	for i := range r.Jobs {
		if j := r.Jobs[i]; !(j.End >= j.Start && j.Start >= j.Submit) {
			t.Fatalf("job %s: submit %.0f start %.0f end %.0f", r.ID(i), j.Submit, j.Start, j.End)
		}
	}
	if _, err := Run(context.Background(), []Spec{{Workload: w, LowerBound: lb, Policy: "asrpt-sidecar-oracle", Seed: 1}},
		Config{NewPredictor: newMean}); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Fatalf("asrpt-sidecar-oracle: %v, want a refusal naming the oracle", err)
	}
}
