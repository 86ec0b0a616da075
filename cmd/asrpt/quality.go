package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/preemptrule"
	"github.com/asrpt/asrpt/quality"
	"github.com/asrpt/asrpt/report"
)

func init() {
	register("quality", "replay the quality suite of traces and summarise the candidate against the others", runQuality)
}

// qualityPolicies is the default policy list of the suite: every
// registered policy, then each one's oracle variant.
func qualityPolicies() []string {
	out := append([]string(nil), policy.Names...)
	for _, n := range policy.Names {
		out = append(out, n+policy.OracleSuffix)
	}
	return out
}

func runQuality(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("quality", stderr)
	params := policy.DefaultParams()
	var (
		tracesDir, policies, cases   string
		predName, candidate, preempt string
		refName                      string
		jsonPath                     string
		asJSON                       bool
		seed                         int64
		seedList                     string
		parallel                     int
		retrainEvery                 float64
		list, heldOut                bool
		noise                        int
		noiseScale                   float64
	)
	fs.StringVar(&tracesDir, "traces", "", "`dir` holding the trace excerpts (helios-15k-excerpt/, philly-15k-excerpt/); without it the trace-file cases are skipped")
	fs.StringVar(&policies, "policies", strings.Join(qualityPolicies(), ","), "comma-separated policies (any with -oracle for perfect predictions)")
	fs.StringVar(&cases, "cases", "", "comma-separated substrings: run only the cases whose name contains one (default: all)")
	fs.BoolVar(&list, "list", false, "list the cases and exit")
	fs.BoolVar(&heldOut, "held-out", false, "replay the held-out cases (generated with seeds drawn once, never tuned on) instead of the suite")
	fs.StringVar(&predName, "predictor", predictor.Default, "run-time predictor: oracle, limit, mean, mean-gpus, mean-gpus-running, forest or select")
	fs.StringVar(&refName, "reference", "mean", "reference predictor the candidate is also replayed with once per case, to tell --predictor against the simple rule: mean (the family median, ranked by its median whatever --rank says) or none; none as well when --predictor is oracle, or mean ranked by the median, or the candidate is not run or reads no prediction")
	fs.IntVar(&noise, "noise", 0, fmt.Sprintf("replay the candidate this many times more per case (0 to %d) with the reference predictor's every prediction perturbed by up to ±--noise-scale, to tell the ratios to the reference from noise", quality.MaxNoise))
	fs.Float64Var(&noiseScale, "noise-scale", quality.DefaultNoiseScale, fmt.Sprintf("relative size of --noise's perturbation: each prediction times a per-job factor within exp(±scale), more than 0, at most %v", predictor.MaxPerturbScale))
	fs.Int64Var(&seed, "seed", 1, "seed of the predictor")
	fs.StringVar(&seedList, "seeds", "", "comma-separated predictor seeds: every case is replayed with each, and the means are over all (default: --seed alone; a predictor that reads no seed, as mean-gpus, is replayed with the first alone)")
	retrainEvery = predictor.DefaultConfig().RetrainEvery
	fs.Var(secondsFlag{p: &retrainEvery}, "retrain-every", "simulated time between two trainings of the online forest: seconds, or a duration (24h, 30d)")
	fs.StringVar(&candidate, "candidate", quality.DefaultCandidate, "policy the summary judges against the others")
	fs.StringVar(&preempt, "preemptive", quality.DefaultPreemptive, "preemptive policy the summary keeps out of the baselines")
	fs.StringVar(&jsonPath, "out", "", "write the whole result as JSON to `file` (all or nothing)")
	fs.BoolVar(&asJSON, "json", false, "print the whole result as JSON on stdout instead of the table")
	fs.IntVar(&parallel, "parallel", runtime.GOMAXPROCS(0), "replays run at once")
	readParams := policyFlags(fs, &params)
	var optIn preemptrule.Rule
	preemptFlag(fs, &optIn)
	siteOpts := siteFlags(fs)
	readSidecar := sidecarConfigFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	sidecarCfg, err := readSidecar()
	if err != nil {
		return err
	}
	if err := readParams(predName); err != nil {
		return err
	}
	if err := checkParams(params); err != nil {
		return err
	}

	all, skipped := quality.Suite(tracesDir)
	if heldOut {
		all, skipped = quality.HeldOut(), nil
	}
	if sel := splitList(cases); len(sel) > 0 {
		all = quality.Select(all, sel)
		skipped = selectNames(skipped, sel)
		if len(all) == 0 {
			return fmt.Errorf("%w: --cases %q selects no case", errUsage, cases)
		}
	}
	if list {
		for _, c := range all {
			fmt.Fprintf(stdout, "%-16s %3d×%d  %s\n", c.Name, c.Nodes, c.GPUsPerNode, c.Source)
		}
		for _, n := range skipped {
			fmt.Fprintf(stdout, "%-16s skipped: no --traces\n", n)
		}
		return nil
	}

	names := splitList(policies)
	if len(names) == 0 {
		return fmt.Errorf("%w: --policies is empty", errUsage)
	}
	site, err := siteOpts.site("")
	if err != nil {
		return err
	}
	env := policy.NewEnv(cluster.Uniform(1, 8), params)
	for _, n := range names {
		if err := policy.Validate(n, env); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
	}
	for _, n := range []string{candidate, preempt} {
		if _, oracle := policy.Split(n); oracle || n == "" {
			return fmt.Errorf("%w: --candidate %q --preemptive %q: want policy names without %s", errUsage, candidate, preempt, policy.OracleSuffix)
		}
	}
	if !(retrainEvery > 0) {
		return fmt.Errorf("%w: --retrain-every %v: want > 0 seconds", errUsage, retrainEvery)
	}
	seeds, err := parseSeeds(seedList, seed)
	if err != nil {
		return fmt.Errorf("%w: --seeds %q: %w", errUsage, seedList, err)
	}
	if _, err := newPredictor(predName, seed, retrainEvery); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(seeds) > 1 && !predictor.Seeded(predName) {
		// Every seed would replay the same schedules: keep the first.
		fmt.Fprintf(stderr, "asrpt quality: --predictor %s reads no seed: replaying with seed %d alone, not --seeds %s\n", predName, seeds[0], seedList)
		seeds = seeds[:1]
	}
	var reference func() (predictor.Predictor, error)
	switch refName {
	case "none":
	case "mean":
		same := predName == "mean" && params.Rank == policy.RankMedian // the run is the reference
		if !same && predName != "oracle" && slices.Contains(names, candidate) && policy.UsesPredictions(candidate) {
			reference = func() (predictor.Predictor, error) { return predictor.NewMean(), nil }
		}
	default:
		return fmt.Errorf("%w: --reference %q: want mean or none", errUsage, refName)
	}
	if reference == nil {
		refName = ""
	}
	if noise < 0 || noise > quality.MaxNoise {
		return fmt.Errorf("%w: --noise %d: want 0 to %d", errUsage, noise, quality.MaxNoise)
	}
	if !(noiseScale > 0 && noiseScale <= predictor.MaxPerturbScale) {
		return fmt.Errorf("%w: --noise-scale %v: want more than 0, at most %v", errUsage, noiseScale, predictor.MaxPerturbScale)
	}
	if noise > 0 && reference == nil {
		return fmt.Errorf("%w: --noise %d perturbs the reference predictor, and none is replayed (--reference none, --predictor %s, or candidate %s not run or reading no prediction)", errUsage, noise, predName, candidate)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(stderr, "asrpt quality: no --traces: skipping the %d trace-file cases (%s); they read DIR/helios-15k-excerpt/ (the public SenseTime Helios trace, github.com/S-Lab-System-Group/HeliosData) and DIR/philly-15k-excerpt/ (the public Microsoft Philly trace, github.com/msr-fiddle/philly-traces), 15,000-job excerpts in the helios format (trace/FORMAT.md): pass --traces DIR (make quality TRACES=DIR)\n", len(skipped), strings.Join(skipped, ", "))
	}

	start := time.Now()
	res, err := quality.Run(ctx, all, quality.Config{
		Policies:      names,
		Params:        params,
		Sidecar:       sidecarCfg,
		Preemptible:   optIn,
		Site:          site,
		NewPredictor:  func(seed int64) (predictor.Predictor, error) { return newPredictor(predName, seed, retrainEvery) },
		Seeds:         seeds,
		Reference:     reference,
		ReferenceName: refName,
		Noise:         noise,
		NoiseScale:    noiseScale,
		Parallel:      parallel,
		Candidate:     candidate,
		Preemptive:    preempt,
		Progress: func(done, total int, c *quality.CaseResult) {
			fmt.Fprintf(stderr, "asrpt quality: [%d/%d] %s: %d replays, %.1f s of replay, %.1f s elapsed\n",
				done, total, c.Name, c.Replays, c.WallSeconds, time.Since(start).Seconds())
		},
	})
	if err != nil {
		return err
	}
	res.Skipped = skipped
	show := res.WriteTable
	if asJSON {
		show = res.WriteJSON
	}
	if err := show(stdout); err != nil {
		return err
	}
	if jsonPath != "" {
		if err := report.WriteFileAtomic(jsonPath, res.WriteJSON); err != nil {
			return err
		}
	}
	return nil
}

// selectNames returns the names that contain one of the substrings.
func selectNames(names, substrings []string) []string {
	var out []string
	for _, n := range names {
		for _, s := range substrings {
			if strings.Contains(n, s) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// maxSeeds bounds --seeds: each seed replays the whole suite again.
const maxSeeds = 16

// parseSeeds reads --seeds (comma-separated integers, distinct, at most
// maxSeeds); empty gives the single seed def.
func parseSeeds(list string, def int64) ([]int64, error) {
	parts := splitList(list)
	if len(parts) == 0 {
		return []int64{def}, nil
	}
	if len(parts) > maxSeeds {
		return nil, fmt.Errorf("%d seeds, want at most %d", len(parts), maxSeeds)
	}
	seen := map[int64]bool{}
	out := make([]int64, 0, len(parts))
	for _, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seed %q is not an integer", p)
		}
		if seen[v] {
			return nil, fmt.Errorf("seed %d given twice", v)
		}
		seen[v] = true
		out = append(out, v)
	}
	return out, nil
}
