package sim

import (
	"context"
	"sync"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/trace"
)

// TestRunConcurrently: replays prepared with one Env run at once
// (as asrpt quality runs them) give the results each gives alone; under
// -race, they share no mutable state.
func TestRunConcurrently(t *testing.T) {
	c := cluster.Uniform(4, 8)
	gen := trace.DefaultGenConfig()
	gen.Jobs, gen.Seed, gen.ClusterGPUs, gen.GPUsPerNode = 400, 3, c.TotalGPUs(), 8
	jobs, err := trace.Generate(gen)
	if err != nil {
		t.Fatal(err)
	}
	env := policy.NewEnv(c, policy.DefaultParams())
	w, err := prepareJobs(jobs, env)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"asrpt", "las", "easypp", "backfill", "asrpt", "wcs-workload"}
	cfg := func(name string) Config {
		return Config{Policy: name, Predictor: predictor.NewMean()}
	}
	alone := make([]float64, len(names))
	for i, n := range names {
		r, err := w.Run(context.Background(), cfg(n))
		if err != nil {
			t.Fatal(err)
		}
		alone[i] = totalJCT(r)
	}
	together := make([]float64, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := w.Run(context.Background(), cfg(n))
			if err != nil {
				t.Error(err)
				return
			}
			together[i] = totalJCT(r)
		}()
	}
	wg.Wait()
	for i := range names {
		if alone[i] != together[i] {
			t.Errorf("%s: total JCT %v alone, %v beside the others", names[i], alone[i], together[i])
		}
	}
}

func totalJCT(r *Result) float64 {
	s := 0.0
	for i := range r.Jobs {
		s += r.Jobs[i].JCT()
	}
	return s
}
