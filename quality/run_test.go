package quality

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/trace"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// tinyCases are two small generated cases (a few hundred jobs on 4 nodes
// of 8 GPUs), one of them through the sacct writer and reader.
func tinyCases() []Case {
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.Seed, cfg.Load, cfg.ClusterGPUs = 300, 5, 1.2, 32
	sacct := cfg
	sacct.Seed, sacct.Jobs = 6, 200
	return []Case{
		GenCase("tiny-gen", "generated, 300 jobs, load 1.2, seed 5", cfg),
		SacctCase("tiny-sacct", "generated → sacct -P, 200 jobs, load 1.2, seed 6", sacct),
	}
}

func tinyConfig(parallel int) Config {
	return Config{
		Policies: []string{"fifo", "asrpt"},
		Params:   policy.DefaultParams(),
		NewPredictor: func(int64) (predictor.Predictor, error) {
			return predictor.ByName("mean", predictor.DefaultConfig())
		},
		Parallel: parallel,
	}
}

func TestRunTiny(t *testing.T) {
	var progress []string
	cfg := tinyConfig(2)
	cfg.Progress = func(done, total int, c *CaseResult) {
		if total != 2 || len(c.Policies) != 2 || c.Replays != 2 {
			t.Errorf("progress %d/%d for %s with %d policies", done, total, c.Name, len(c.Policies))
		}
		progress = append(progress, c.Name)
	}
	res, err := Run(context.Background(), tinyCases(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != 2 {
		t.Errorf("progress called for %v, want both cases", progress)
	}
	if len(res.Cases) != 2 {
		t.Fatalf("%d cases, want 2", len(res.Cases))
	}
	for _, c := range res.Cases {
		if c.Jobs == 0 || c.GPUs != 32 || !(c.LowerBound > 0) || len(c.Policies) != 2 {
			t.Errorf("case %s: %d jobs, %d GPUs, lower bound %v, %d policies", c.Name, c.Jobs, c.GPUs, c.LowerBound, len(c.Policies))
		}
		for i, p := range c.Policies {
			if p.Policy != cfg.Policies[i] || p.Predictor != "mean" || p.RatioToLB < 1-1e-9 || p.TotalJCT != p.RatioToLB*c.LowerBound {
				t.Errorf("case %s policy %d: %s predictor %s ×LB %v total %v", c.Name, i, p.Policy, p.Predictor, p.RatioToLB, p.TotalJCT)
			}
		}
	}
	s := res.Summary
	if s.Candidate != "asrpt" || s.Preemptive != "las" || s.VsBestBaseline.Cases != 2 || s.VsPreemptive.Cases != 0 || s.VsOracle.Cases != 0 {
		t.Errorf("summary %+v", s)
	}
	for _, c := range s.Cases {
		if c.BestBaseline != "fifo" || c.Verdict == "" {
			t.Errorf("case summary %+v: want fifo as the best (only) baseline and a verdict", c)
		}
	}

	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	table := buf.String()
	for _, want := range []string{"tiny-gen", "tiny-sacct", "geomean", "fifo", "asrpt/best", "asrpt / best non-oracle non-preemptive baseline", "of 2 cases"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "-oracle variants") {
		t.Errorf("table has an oracle section without oracle policies:\n%s", table)
	}

	golden := filepath.Join("testdata", "tiny.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./quality -run TestRunTiny -update to create it)", err)
	}
	if table != string(want) {
		t.Errorf("table differs from %s (rerun with -update if the change is meant):\n got:\n%s\nwant:\n%s", golden, table, want)
	}

	// One replay at a time gives the same table.
	res1, err := Run(context.Background(), tinyCases(), tinyConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	var buf1 bytes.Buffer
	if err := res1.WriteTable(&buf1); err != nil {
		t.Fatal(err)
	}
	if buf1.String() != table {
		t.Errorf("table with --parallel 1 differs:\n%s\nwith 2:\n%s", buf1.String(), table)
	}
	var js bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"cases"`, `"lower_bound_total_jct_s"`, `"total_jct_s"`, `"ratio_to_lb"`, `"vs_best_baseline"`, `"geomean"`} {
		if !bytes.Contains(js.Bytes(), []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, tinyCases(), tinyConfig(2)); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("boom")
	bad := []Case{{Name: "bad", Nodes: 1, GPUsPerNode: 8, Jobs: func() ([]job.Job, error) { return nil, boom }}}
	if _, err := Run(context.Background(), bad, tinyConfig(1)); !errors.Is(err, boom) || !strings.Contains(err.Error(), "case bad") {
		t.Errorf("error %v, want boom naming the case", err)
	}
	cfg := tinyConfig(1)
	cfg.Policies = []string{"fifo", "no-such-policy"}
	if _, err := Run(context.Background(), tinyCases(), cfg); err == nil || !strings.Contains(err.Error(), "no-such-policy") {
		t.Errorf("error %v, want one naming the unknown policy", err)
	}
}

func TestSuite(t *testing.T) {
	cases, skipped := Suite("")
	if len(cases) != 8 || len(skipped) != 6 {
		t.Errorf("without traces: %d cases, %d skipped; want 8 and 6", len(cases), len(skipped))
	}
	all, skipped := Suite("/traces")
	if len(all) != 14 || len(skipped) != 0 {
		t.Errorf("with traces: %d cases, %d skipped; want 14 and 0", len(all), len(skipped))
	}
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.Name] || strings.ContainsAny(c.Name, " ,") || c.Source == "" || c.Nodes <= 0 || c.GPUsPerNode <= 0 {
			t.Errorf("case %+v: duplicate or malformed", c)
		}
		seen[c.Name] = true
	}
	if got := Select(all, []string{"philly", "s2"}); len(got) != 5 {
		t.Errorf("Select philly, s2: %d cases, want 5 (3 philly, 2 seed 2)", len(got))
	}
	if got := Select(all, nil); len(got) != len(all) {
		t.Errorf("Select without substrings: %d cases, want all", len(got))
	}
}

func TestGeneratedCaseIsBuiltin(t *testing.T) {
	// The generated cases are the workload `asrpt replay` builds without
	// --trace: DefaultGenConfig, 5,000 jobs on 32 × 8 GPUs.
	c := GeneratedCase(1.3, 2)
	got, err := c.Jobs()
	if err != nil {
		t.Fatal(err)
	}
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.Seed, cfg.Load = 5000, 2, 1.3
	want, err := trace.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Nodes != 32 || c.GPUsPerNode != 8 || len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Errorf("generated case %s differs from the built-in workload", c.Name)
	}
}

func TestSacctCase(t *testing.T) {
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.ProfiledShare = 500, 0.5
	direct, err := trace.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SacctCase("s", "s", cfg).Jobs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(direct) {
		t.Fatalf("%d jobs through sacct, %d generated", len(got), len(direct))
	}
	for _, j := range got {
		if j.Profiled() {
			t.Fatalf("job %s kept a profile through sacct", j.ID)
		}
	}
}

// forestSeeds is a tiny config whose predictor is the online forest with
// the seed asked for, trained early and often so that seeds matter.
func forestSeeds(seeds ...int64) Config {
	cfg := tinyConfig(2)
	cfg.Policies = []string{"fifo", "asrpt", "asrpt-oracle"}
	cfg.Seeds = seeds
	cfg.NewPredictor = func(seed int64) (predictor.Predictor, error) {
		pc := predictor.DefaultConfig()
		pc.Train.Forest.Seed = uint64(seed)
		pc.Train.Forest.Trees = 10
		pc.MinTrainJobs, pc.RetrainEvery = 50, 3600
		return predictor.ByName("forest", pc)
	}
	return cfg
}

func TestRunSeeds(t *testing.T) {
	cases := tinyCases()[:1]
	res, err := Run(context.Background(), cases, forestSeeds(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 2 || res.Cases[0].Name != "tiny-gen/seed1" || res.Cases[1].Name != "tiny-gen/seed2" ||
		res.Cases[0].Seed != 1 || res.Cases[1].Seed != 2 {
		t.Fatalf("cases %+v, want tiny-gen/seed1 and /seed2", res.Cases)
	}
	// Only asrpt reads predictions: fifo and the oracle are replayed for
	// the first seed and repeated.
	if res.Cases[0].Replays != 3 || res.Cases[1].Replays != 1 {
		t.Errorf("replays %d and %d, want 3 and 1", res.Cases[0].Replays, res.Cases[1].Replays)
	}
	for _, name := range []string{"fifo", "asrpt-oracle"} {
		a, b := res.Cases[0].Policy(name), res.Cases[1].Policy(name)
		if a == nil || b == nil || a.TotalJCT != b.TotalJCT || a.Policy != name {
			t.Errorf("%s: %+v and %+v, want the same figures for both seeds", name, a, b)
		}
	}
	// Each seed's figures are those of a run with that seed alone.
	for k, seed := range []int64{1, 2} {
		one, err := Run(context.Background(), cases, forestSeeds(seed))
		if err != nil {
			t.Fatal(err)
		}
		if one.Cases[0].Name != "tiny-gen" {
			t.Errorf("a single seed's case is named %q, want tiny-gen", one.Cases[0].Name)
		}
		for i, p := range one.Cases[0].Policies {
			if got := res.Cases[k].Policies[i]; got.TotalJCT != p.TotalJCT {
				t.Errorf("seed %d %s: total JCT %v in the two-seed run, %v alone", seed, p.Policy, got.TotalJCT, p.TotalJCT)
			}
		}
	}
	s := res.Summary
	if s.VsOracle.Cases != 2 || len(s.PerSeed) != 2 || s.PerSeed[0].Seed != 1 || s.PerSeed[1].Seed != 2 ||
		s.PerSeed[0].VsOracle.Cases != 1 || s.PerSeed[1].VsOracle.Cases != 1 {
		t.Fatalf("summary %+v, want two cases and one per seed", s)
	}
	if g := math.Sqrt(s.PerSeed[0].VsOracle.Geomean * s.PerSeed[1].VsOracle.Geomean); math.Abs(g-s.VsOracle.Geomean) > 1e-9 {
		t.Errorf("geomean over both %v, want that of the seeds' %v", s.VsOracle.Geomean, g)
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "per case, geometric means over the 2 seeds") ||
		!regexp.MustCompile(`(?m)^\s+tiny-gen\s+\d\.\d{3}\s+\[\d\.\d{3} … \d\.\d{3}\]`).MatchString(buf.String()) {
		t.Errorf("table lacks the per-case means over the seeds:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "each predictor seed's cases alone") {
		t.Errorf("table lacks the per-seed means:\n%s", buf.String())
	}
}

// TestRunPaired: with the factor-mode comparison's policies, every seed's
// candidate and factor-mode replays are compared job by job with the
// baseline's (replayed once), the factor summary carries the harmed shares,
// and the other policies carry no comparison.
func TestRunPaired(t *testing.T) {
	cfg := tinyConfig(2)
	cfg.Policies = []string{"fifo", FactorBaseline, "asrpt", "asrpt" + FactorSuffix}
	cfg.Seeds = []int64{1, 2}
	res, err := Run(context.Background(), tinyCases(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 4 {
		t.Fatalf("%d case results, want 4", len(res.Cases))
	}
	var harmed float64
	for _, c := range res.Cases {
		for _, p := range c.Policies {
			compared := p.Policy == "asrpt" || p.Policy == "asrpt"+FactorSuffix
			if (p.Paired != nil) != compared {
				t.Errorf("%s %s: paired %v", c.Name, p.Policy, p.Paired != nil)
				continue
			}
			if !compared {
				continue
			}
			if p.Paired.Against != FactorBaseline || p.Paired.Jobs != c.Jobs || len(p.Paired.Worst) > pairedWorst {
				t.Errorf("%s %s: against %s, %d jobs of %d, %d worst", c.Name, p.Policy, p.Paired.Against, p.Paired.Jobs, c.Jobs, len(p.Paired.Worst))
			}
			if p.Policy == "asrpt"+FactorSuffix {
				harmed += p.Paired.HarmedShare
			}
		}
	}
	f := res.Summary.Factor
	if f == nil || math.Abs(f.Harmed-harmed/4) > 1e-12 || len(f.Cases) != 4 {
		t.Fatalf("factor summary %+v, want harmed %v over 4 cases", f, harmed/4)
	}
	var b strings.Builder
	if err := res.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "job by job against multifactor") {
		t.Errorf("table lacks the harmed summary:\n%s", b.String())
	}
}

// TestRunReference: with a reference predictor the candidate is replayed
// once more per case, whatever the seeds; every seed's case carries that
// replay, the summary gives candidate / reference per case and on the
// mean, and the reference's figures are a run of the candidate with the
// family median alone.
func TestRunReference(t *testing.T) {
	cases := tinyCases()
	cfg := forestSeeds(1, 2)
	cfg.Reference = func() (predictor.Predictor, error) { return predictor.NewMean(), nil }
	cfg.ReferenceName = "mean"
	res, err := Run(context.Background(), cases, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reference != "mean" {
		t.Errorf("reference %q, want mean", res.Reference)
	}
	alone := tinyConfig(2)
	alone.Policies = []string{"asrpt"}
	want, err := Run(context.Background(), cases, alone)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Cases {
		ref := want.Cases[i/2].Policy("asrpt")
		if c.Reference == nil || c.Reference.TotalJCT != ref.TotalJCT || c.Reference.Predictor != "mean" {
			t.Fatalf("%s: reference %+v, want asrpt with mean's total JCT %v", c.Name, c.Reference, ref.TotalJCT)
		}
		got := res.Summary.Cases[i].VsReference
		if w := c.Policy("asrpt").TotalJCT / ref.TotalJCT; math.Abs(got-w) > 1e-12 {
			t.Errorf("%s: asrpt/asrpt(mean) %v, want %v", c.Name, got, w)
		}
	}
	if res.Cases[0].Replays != 4 || res.Cases[1].Replays != 1 {
		t.Errorf("replays %d and %d, want 4 (three policies and the reference) and 1", res.Cases[0].Replays, res.Cases[1].Replays)
	}
	if m := res.Summary.VsReference; m.Cases != 4 || len(res.Summary.PerSeed) != 2 || res.Summary.PerSeed[0].VsReference.Cases != 2 {
		t.Errorf("summary %+v, per seed %+v: want 4 cases, 2 per seed", m, res.Summary.PerSeed)
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "against asrpt with the reference predictor mean") ||
		!regexp.MustCompile(`(?m)^\s+tiny-sacct/seed2\s+\d\.\d{3}\s*$`).MatchString(buf.String()) {
		t.Errorf("table lacks the reference block:\n%s", buf.String())
	}
	if res.Rank != "median" || strings.Contains(buf.String(), "--rank expected") {
		t.Errorf("rank %q: want median, told apart from expected", res.Rank)
	}
	res.Rank = "expected"
	buf.Reset()
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "reference predictor mean, the family median, ranked by its median (the run: --rank expected)") {
		t.Errorf("ranked by the expected value, the table does not say how the reference ranks:\n%s", buf.String())
	}
	cfg.Candidate = "fifo"
	cfg.Policies = []string{"asrpt"}
	if _, err := Run(context.Background(), cases, cfg); err == nil || !strings.Contains(err.Error(), "not among the policies") {
		t.Errorf("a reference for a candidate not run: %v, want an error", err)
	}
}

// TestRunReferenceRanksByMedian: a run ranking by the expected value
// still replays the reference (and its perturbations) ranking by the
// median, the simple rule whole; the candidate ranks as the run says.
func TestRunReferenceRanksByMedian(t *testing.T) {
	cases := tinyCases()
	run := func(rank policy.Rank, ref bool) *Result {
		t.Helper()
		cfg := tinyConfig(2)
		cfg.Policies = []string{"asrpt"}
		cfg.Params.Rank = rank
		if ref {
			cfg.Reference = func() (predictor.Predictor, error) { return predictor.NewMean(), nil }
			cfg.ReferenceName, cfg.Noise = "mean", 1
		}
		res, err := Run(context.Background(), cases, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	expected, median, expectedAlone := run(policy.RankExpected, true), run(policy.RankMedian, false), run(policy.RankExpected, false)
	if expected.Rank != "expected" {
		t.Errorf("rank %q, want expected", expected.Rank)
	}
	differs := false
	for i, c := range expected.Cases {
		if got, want := c.Reference.TotalJCT, median.Cases[i].Policy("asrpt").TotalJCT; got != want {
			t.Errorf("%s: reference %v, want asrpt with mean ranked by the median %v", c.Name, got, want)
		}
		if got, want := c.Policy("asrpt").TotalJCT, expectedAlone.Cases[i].Policy("asrpt").TotalJCT; got != want {
			t.Errorf("%s: candidate %v, want it ranked by the expected value %v", c.Name, got, want)
		}
		differs = differs || c.Policy("asrpt").TotalJCT != c.Reference.TotalJCT
	}
	if !differs {
		t.Error("the two rankings gave the same totals on every case: the test tells nothing")
	}
}

// TestRunNoise: with perturbed replays of the reference, every case (and
// every seed of it) carries their totals, each that of the candidate with
// the perturbed family median alone; the summary judges the ratios to
// the reference against their band; the table says so; a bad count or
// scale, or perturbations without a reference, are refused.
func TestRunNoise(t *testing.T) {
	cases := tinyCases()
	cfg := tinyConfig(2)
	cfg.Policies = []string{"asrpt"}
	cfg.Seeds = []int64{1, 2}
	cfg.NewPredictor = func(int64) (predictor.Predictor, error) { return predictor.NewMeanByGPUs(), nil }
	cfg.Reference = func() (predictor.Predictor, error) { return predictor.NewMean(), nil }
	cfg.ReferenceName = "mean"
	cfg.Noise, cfg.NoiseScale = 2, 0.2
	res, err := Run(context.Background(), cases, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.NoiseScale != 0.2 {
		t.Errorf("noise scale %v, want 0.2", res.NoiseScale)
	}
	for n := 1; n <= 2; n++ {
		alone := tinyConfig(2)
		alone.Policies = []string{"asrpt"}
		alone.NewPredictor = func(int64) (predictor.Predictor, error) {
			return predictor.Perturb(predictor.NewMean(), 0.2, uint64(n))
		}
		want, err := Run(context.Background(), cases, alone)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range res.Cases {
			w := want.Cases[i/2].Policy("asrpt").TotalJCT
			if len(c.Noise) != 2 || c.Noise[n-1] != w {
				t.Fatalf("%s: perturbed totals %v, want %v at %d", c.Name, c.Noise, w, n)
			}
		}
	}
	if res.Cases[0].Replays != 4 || res.Cases[1].Replays != 1 {
		t.Errorf("replays %d and %d, want 4 (asrpt, the reference, two perturbed) and 1", res.Cases[0].Replays, res.Cases[1].Replays)
	}
	n := res.Summary.Noise
	if n == nil || n.Replays != 2 || n.Band.Cases != 4 || n.Better+n.Within+n.Worse != 4 || !(n.Band.Min >= 1) {
		t.Fatalf("noise summary %+v: want 2 replays per case and 4 judged", n)
	}
	for _, c := range res.Summary.Cases {
		if c.NoiseBand < 1 || c.VsReferenceVerdict == "" {
			t.Errorf("%s: band %v verdict %q", c.Case, c.NoiseBand, c.VsReferenceVerdict)
		}
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+tiny-sacct/seed2\s+\d\.\d{3}\s+\d\.\d{3}\s+(better|within_noise|worse)\s*$`).MatchString(buf.String()) ||
		!strings.Contains(buf.String(), "perturbed by up to ±20% (2 replays per case)") ||
		!regexp.MustCompile(`(?m)^\s+tiny-gen(\s+-){4}\s+\d\.\d{3}\s+\d\.\d{3}\s+(better|within_noise|worse)\s*$`).MatchString(buf.String()) {
		t.Errorf("table lacks the noise columns or line:\n%s", buf.String())
	}

	for _, bad := range []struct {
		noise int
		scale float64
		ref   bool
		want  string
	}{
		{MaxNoise + 1, 0.01, true, "perturbed replays"},
		{-1, 0.01, true, "perturbed replays"},
		{1, 1.5, true, "perturbation scale"},
		{1, math.NaN(), true, "perturbation scale"},
		{1, 0.01, false, "without a reference"},
	} {
		c := cfg
		c.Noise, c.NoiseScale = bad.noise, bad.scale
		if !bad.ref {
			c.Reference = nil
		}
		if _, err := Run(context.Background(), cases, c); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("noise %d scale %v reference %v: error %v, want %q", bad.noise, bad.scale, bad.ref, err, bad.want)
		}
	}
}

// TestHeldOut: the held-out cases are apart from the suite (no name in
// common), generated with their written-down seeds, and load.
func TestHeldOut(t *testing.T) {
	suite, _ := Suite("")
	names := map[string]bool{}
	for _, c := range suite {
		names[c.Name] = true
	}
	for _, c := range HeldOut() {
		if names[c.Name] || !strings.HasPrefix(c.Name, "heldout-") || !strings.Contains(c.Source, "seed ") {
			t.Errorf("held-out case %s (%s): want a heldout- name apart from the suite's and its seed", c.Name, c.Source)
		}
		jobs, err := c.Jobs()
		if err != nil || len(jobs) < 1000 {
			t.Errorf("%s: %d jobs, %v", c.Name, len(jobs), err)
		}
	}
}
