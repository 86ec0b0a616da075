package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// allPolicies is every registered policy plus an oracle variant.
var allPolicies = append(append([]string(nil), policy.Names...), "asrpt-oracle", "spjf-oracle")

// TestRefereeCounterexample keeps the referee's counterexample to the paper's
// dispatch: G = 100 (two nodes of 50), τ = 0, perfect predictions; job A
// (1 GPU, 100000 s) and job B (50 GPUs, 2000 s) arrive at 0 with equal
// virtual sizes 1000, ties A first. Paper mode releases A at 1000 and B at
// 2000 and leaves every GPU idle until 1000; backfill mode starts both at 0.
func TestRefereeCounterexample(t *testing.T) {
	c := cluster.Uniform(2, 50)
	jobs := []job.Job{
		{ID: "A", User: "u", Name: "a", GPUs: 1, RunTime: 100000, Submit: 0},
		{ID: "B", User: "u", Name: "b", GPUs: 50, RunTime: 2000, Submit: 0},
	}
	params := policy.DefaultParams()
	params.Tau = 0
	cases := []struct {
		policy             string
		startA, startB     float64
		totalJCT, idleTill float64
	}{
		{"asrpt-paper", 1000, 2000, 101000 + 4000, 1000},
		{"asrpt", 0, 0, 100000 + 2000, 0},
	}
	lb := computeLowerBound(jobSlice(jobs), c.TotalGPUs())
	if lb.Virtual != 3000 || lb.Length != 102000 || lb.Total != 102000 {
		t.Errorf("lower bound = %+v, want virtual 3000, length 102000, total 102000", lb)
	}
	for _, tc := range cases {
		t.Run(tc.policy, func(t *testing.T) {
			r, err := replayJobs(jobs, c, params, Config{Policy: tc.policy, Predictor: predictor.Oracle{}, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			a, b := r.Jobs[0], r.Jobs[1]
			if a.Start != tc.startA || b.Start != tc.startB {
				t.Errorf("starts A=%v B=%v, want A=%v B=%v", a.Start, b.Start, tc.startA, tc.startB)
			}
			total := a.JCT() + b.JCT()
			if total != tc.totalJCT {
				t.Errorf("total JCT %v, want %v", total, tc.totalJCT)
			}
			if first := math.Min(a.Start, b.Start); first != tc.idleTill {
				t.Errorf("GPUs idle until %v, want %v", first, tc.idleTill)
			}
			if total < lb.Total {
				t.Errorf("total JCT %v below the lower bound %v", total, lb.Total)
			}
		})
	}
}

// randomJobs returns a seeded mixed workload on a cluster of g GPUs: plain
// jobs of 1–16 GPUs and profiled jobs from the catalogue.
func randomJobs(seed uint64, n, g int) []job.Job {
	rng := rand.New(rand.NewPCG(seed, 7))
	models := placement.Models()
	sizes := []int{1, 1, 1, 1, 2, 4, 8, 8, 16}
	jobs := make([]job.Job, n)
	at := 0.0
	for i := range jobs {
		at += rng.ExpFloat64() * 120
		gp := min(sizes[rng.IntN(len(sizes))], g)
		j := job.Job{ID: fmt.Sprint(i), Submit: math.Round(at), User: fmt.Sprintf("u%d", rng.IntN(5)),
			Name: fmt.Sprintf("fam%d", rng.IntN(8)), GPUs: gp, RunTime: math.Round(math.Exp(rng.NormFloat64()*1.2 + 7)),
			TimeLimit: 86400}
		if gp >= 2 && rng.IntN(3) == 0 {
			for _, m := range models {
				if _, err := placement.Lookup(m, gp); err == nil && rng.IntN(2) == 0 {
					j.Profile, j.Iterations = m, float64(1000+rng.IntN(20000))
					break
				}
			}
		}
		jobs[i] = j
	}
	return jobs
}

// TestInvariants replays a mixed workload through every policy and checks:
// never more GPUs in use than exist (Check), every job finishes, JCT ≥ run
// time ≥ run time at α_min, starts not before submits, and the total not
// below the lower bound.
func TestInvariants(t *testing.T) {
	c := cluster.Uniform(4, 8)
	jobs := randomJobs(1, 400, c.TotalGPUs())
	env := policy.NewEnv(c, policy.DefaultParams())
	w, err := prepareJobs(jobs, env)
	if err != nil {
		t.Fatal(err)
	}
	lb := w.LowerBound()
	for _, name := range allPolicies {
		t.Run(name, func(t *testing.T) {
			r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name,
				Predictor: predictor.NewMean(), Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Jobs) != len(jobs) {
				t.Fatalf("%d results for %d jobs", len(r.Jobs), len(jobs))
			}
			total := 0.0
			for i, j := range r.Jobs {
				if math.IsNaN(j.Start) || j.End <= 0 {
					t.Fatalf("job %s never finished: %+v", r.ID(i), j)
				}
				if j.Start < j.Submit {
					t.Errorf("job %s starts at %v before its submit %v", r.ID(i), j.Start, j.Submit)
				}
				if j.JCT() < j.RunTime-1e-6 || j.RunTime < j.Reference*(1-1e-9) {
					t.Errorf("job %s: JCT %v, run time %v, reference %v", r.ID(i), j.JCT(), j.RunTime, j.Reference)
				}
				if j.Preemptions > 0 && name != "las" {
					t.Errorf("job %s preempted under non-preemptive %s", r.ID(i), name)
				}
				total += j.JCT()
			}
			if total < lb.Total*(1-1e-9) {
				t.Errorf("total JCT %v below the lower bound %v", total, lb.Total)
			}
		})
	}
}

// TestDeterministic checks that the same input gives the same schedule.
func TestDeterministic(t *testing.T) {
	c := cluster.Uniform(4, 8)
	jobs := randomJobs(2, 300, c.TotalGPUs())
	for _, name := range allPolicies {
		r1, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: predictor.NewMean()})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: predictor.NewMean()})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r1.Jobs, r2.Jobs) {
			t.Errorf("%s: two runs of the same input differ", name)
		}
	}
}

// TestFIFOBlocksBackfillDoesNot pins the difference between head-of-line
// blocking and EASY backfilling on a hand-made case: one 8-GPU node; a
// 6-GPU job runs, an 8-GPU job waits, and a 2-GPU job of 100 s arrives.
func TestFIFOBlocksBackfillDoesNot(t *testing.T) {
	c := cluster.Uniform(1, 8)
	jobs := []job.Job{
		{ID: "run", GPUs: 6, RunTime: 1000, TimeLimit: 1000, Submit: 0},
		{ID: "big", GPUs: 8, RunTime: 100, TimeLimit: 100, Submit: 1},
		{ID: "small", GPUs: 2, RunTime: 100, TimeLimit: 100, Submit: 2},
		{ID: "long", GPUs: 2, RunTime: 5000, TimeLimit: 5000, Submit: 3},
	}
	want := map[string][]float64{ // starts of run, big, small, long
		"fifo":        {0, 1000, 1100, 1100},
		"backfill":    {0, 1000, 2, 1100},
		"wcs-subtime": {0, 5102, 2, 102},
	}
	for name, starts := range want {
		r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: predictor.Oracle{}, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range starts {
			if r.Jobs[i].Start != s {
				t.Errorf("%s: job %s starts at %v, want %v", name, r.ID(i), r.Jobs[i].Start, s)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	c := cluster.Uniform(2, 4)
	cases := []struct {
		name string
		jobs []job.Job
		want string
	}{
		{"zero GPUs", []job.Job{{ID: "1", GPUs: 0, RunTime: 10}}, "0 GPUs"},
		{"zero run time", []job.Job{{ID: "1", GPUs: 1, RunTime: 0}}, "run time"},
		{"unsorted", []job.Job{{ID: "1", GPUs: 1, RunTime: 1, Submit: 5}, {ID: "2", GPUs: 1, RunTime: 1, Submit: 1}}, "not sorted"},
		{"unknown policy", []job.Job{{ID: "1", GPUs: 1, RunTime: 1}}, "unknown policy"},
	}
	for _, tc := range cases {
		pol := "fifo"
		if tc.name == "unknown policy" {
			pol = "nope"
		}
		_, err := replayJobs(tc.jobs, c, policy.DefaultParams(), Config{Policy: pol})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	// Jobs larger than the cluster are excluded and counted, the rest runs.
	r, err := replayJobs([]job.Job{{ID: "big", GPUs: 9, RunTime: 10}, {ID: "ok", GPUs: 8, RunTime: 10}}, c, policy.DefaultParams(), Config{Policy: "asrpt"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Excluded != 1 || len(r.Jobs) != 1 || r.ID(0) != "ok" {
		t.Errorf("excluded %d, jobs %+v; want 1 excluded and job ok run", r.Excluded, r.Jobs)
	}
	// An empty trace is an empty result, not a hang.
	r, err = replayJobs(nil, c, policy.DefaultParams(), Config{Policy: "asrpt"})
	if err != nil || len(r.Jobs) != 0 {
		t.Errorf("empty trace: %v, %v", r, err)
	}
}

// TestCommHeavyWaitsForConsolidation pins the τ rule of A-SRPT dispatch
// (design §5) on three 8-GPU NVLink nodes, each with 5 GPUs busy until
// t = 1000: a communication-heavy 8-GPU job released at 1+2000/3 can only be
// split three ways. With τ = 0 it starts at once on the split placement and
// runs longer than at α_min; with τ = 1 it waits (deadline twice that, less 1) for a
// whole node, which frees at 1000, and runs at α_min.
func TestCommHeavyWaitsForConsolidation(t *testing.T) {
	c := cluster.Uniform(3, 8)
	prof, err := placement.Lookup("gpt2-1.5b", 8)
	if err != nil {
		t.Fatal(err)
	}
	pl := placement.NewPlacer(c)
	amin, amax := pl.Bounds(prof)
	if amax < 1.5*amin {
		t.Fatalf("gpt2-1.5b on 8 GPUs is not communication-heavy here: α %v..%v", amin, amax)
	}
	jobs := []job.Job{
		{ID: "A", GPUs: 5, RunTime: 1000, Submit: 0},
		{ID: "B", GPUs: 5, RunTime: 1000, Submit: 0},
		{ID: "C", GPUs: 5, RunTime: 1000, Submit: 0},
		{ID: "H", GPUs: 8, Profile: "gpt2-1.5b", Iterations: 2000 / amin, Submit: 1},
	}
	for _, tc := range []struct {
		tau   float64
		start float64
		slow  bool
	}{{0, 1 + 2000.0/3, true}, {1, 1000, false}} {
		params := policy.DefaultParams()
		params.Tau = tc.tau
		r, err := replayJobs(jobs, c, params, Config{Policy: "asrpt", Predictor: predictor.Oracle{}, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		h := r.Jobs[3]
		if math.Abs(h.Start-tc.start) > 1e-3 {
			t.Errorf("τ=%v: H starts at %v, want %v", tc.tau, h.Start, tc.start)
		}
		if slow := h.RunTime > h.Reference*1.05; slow != tc.slow {
			t.Errorf("τ=%v: H ran %v s against %v s at α_min; want slowed down %v", tc.tau, h.RunTime, h.Reference, tc.slow)
		}
	}
}

// TestUsesPredictions checks policy.UsesPredictions against replays: a
// policy it says ignores predictions gives the same schedule with two
// predictors that disagree (the running means and the time limits); the
// predicting ones are told apart by at least one of them moving.
func TestUsesPredictions(t *testing.T) {
	c := cluster.Uniform(4, 8)
	jobs := randomJobs(3, 400, c.TotalGPUs())
	moved := 0
	for _, name := range allPolicies {
		run := func(p predictor.Predictor) float64 {
			r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: p})
			if err != nil {
				t.Fatal(err)
			}
			total := 0.0
			for _, j := range r.Jobs {
				total += j.JCT()
			}
			return total
		}
		a, b := run(predictor.NewMean()), run(predictor.Limit{})
		if !policy.UsesPredictions(name) && a != b {
			t.Errorf("%s: total JCT %v with the running means, %v with the limits: it reads predictions", name, a, b)
		}
		if policy.UsesPredictions(name) && a != b {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no predicting policy's schedule moved with the predictor")
	}
}

// TestJobResultNames: each result carries its job's user and account.
func TestJobResultNames(t *testing.T) {
	jobs := []job.Job{
		{ID: "1", User: "ann", Account: "physics", Name: "a", GPUs: 1, RunTime: 10, Submit: 0},
		{ID: "2", User: "bob", Name: "b", GPUs: 2, RunTime: 20, Submit: 1},
	}
	r, err := replayJobs(jobs, cluster.Uniform(1, 4), policy.DefaultParams(), Config{Policy: "fifo"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][2]string{{"ann", "physics"}, {"bob", ""}} {
		if got := [2]string{r.User(i), r.Account(i)}; got != want {
			t.Errorf("job %s: user, account = %q, want %q", r.ID(i), got, want)
		}
	}
}

// prepareJobs is Prepare on a copy of jobs.
func prepareJobs(jobs []job.Job, env *policy.Env) (*Workload, error) {
	t, err := job.TableOf(jobs)
	if err != nil {
		return nil, err
	}
	return Prepare(t, env)
}

// replayJobs replays jobs on cluster c with params under cfg, leaving jobs
// as they are.
func replayJobs(jobs []job.Job, c *cluster.Cluster, params policy.Params, cfg Config) (*Result, error) {
	w, err := prepareJobs(jobs, policy.NewEnv(c, params))
	if err != nil {
		return nil, err
	}
	return w.Run(context.Background(), cfg)
}
