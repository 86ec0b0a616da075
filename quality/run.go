package quality

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/loop"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/preemptrule"
	"github.com/asrpt/asrpt/replay"
	"github.com/asrpt/asrpt/report"
	"github.com/asrpt/asrpt/sim"
)

// Config is one run of the suite.
type Config struct {
	// Policies are the policy names replayed on every case (policy.Names,
	// each optionally with policy.OracleSuffix).
	Policies []string
	// Params are the policy tunables.
	Params policy.Params
	// Preemptible is the opt-in rule: which jobs asrpt-preempt may stop
	// (the zero rule: none).
	Preemptible preemptrule.Rule
	// Site is the priority configuration of the multifactor model
	// (multifactor, asrpt-factor); nil: policy.ExampleSite().
	Site *policy.Site
	// Sidecar, when not nil, is the site's sidecar configuration the
	// closed-loop policies run (replay.Config.Sidecar).
	Sidecar *loop.Site
	// NewPredictor returns a fresh predictor with the given seed for one
	// replay; it is called once per replay. The oracle variants ignore
	// what it returns.
	NewPredictor func(seed int64) (predictor.Predictor, error)
	// Seeds are the predictor seeds every case is replayed with (empty:
	// seed 1 alone). With more than one, each case appears once per seed,
	// named "CASE/seedSEED" (helios-16n/seed2), and the summary's means
	// are over every (case, seed); a policy whose decisions do not read
	// predictions (policy.UsesPredictions) is replayed once per case with
	// the first seed and its figures repeated for the others, since the
	// seed cannot change its schedule.
	Seeds []int64
	// Reference, when not nil, makes the reference predictor (the family
	// median, predictor.Mean) the candidate is replayed with once more on
	// every case, once per case whatever the seeds (it has none), so that
	// the summary tells the run's predictor against the simple rule
	// (Summary.VsReference); ReferenceName names it ("mean"). The
	// reference replay ranks by the median whatever Params.Rank says: the
	// simple rule is the family median, ranking included. The candidate
	// must be among Policies.
	Reference     func() (predictor.Predictor, error)
	ReferenceName string
	// Noise, with Reference, is how many times the candidate is replayed
	// once more on every case (once per case, like the reference) with the
	// reference predictor perturbed (predictor.Perturb: each prediction
	// times a per-job factor within exp(±NoiseScale), drawn with
	// perturbation seeds 1 … Noise): how far a case's total JCT moves when
	// nothing but a sliver of every prediction does, against which the
	// candidate's ratio to the reference is judged (Summary.Noise). At
	// most MaxNoise; 0: none.
	Noise int
	// NoiseScale is the perturbation's relative size (0.01: ±1%), in
	// (0, predictor.MaxPerturbScale]; 0 with Noise > 0 means
	// DefaultNoiseScale.
	NoiseScale float64
	// Parallel is how many replays run at once (0: GOMAXPROCS).
	Parallel int
	// Candidate and Preemptive name the policy judged and the preemptive
	// policy kept out of the baselines in the summary ("" : "asrpt" and
	// "las"; see Summarize).
	Candidate, Preemptive string
	// Progress, when not nil, is called once per finished case, in the
	// order the cases finish, with the count of finished cases and the
	// total; calls do not overlap.
	Progress func(done, total int, c *CaseResult)
}

// MaxNoise bounds Config.Noise: each perturbed replay is one more replay
// of the candidate per case.
const MaxNoise = 16

// DefaultNoiseScale is Config.NoiseScale's default: ±1%, far below the
// difference between any two predictors measured (predictor/README.md).
const DefaultNoiseScale = 0.01

// Default names of the summary's candidate and preemptive policy.
const (
	DefaultCandidate  = "asrpt"
	DefaultPreemptive = "las"
)

// Result is everything a run of the suite produces. The JSON names are the
// output contract of `asrpt quality --json`.
type Result struct {
	Policies []string `json:"policies"`
	// Seeds are the predictor seeds each case was replayed with.
	Seeds []int64 `json:"seeds"`
	// Skipped names the suite's cases left out of the run (trace files not
	// given).
	Skipped []string     `json:"skipped_cases,omitempty"`
	Cases   []CaseResult `json:"cases"`
	Summary Summary      `json:"summary"`
	// Reference names the reference predictor the candidate was also
	// replayed with (Config.ReferenceName); empty when none.
	Reference string `json:"reference_predictor,omitempty"`
	// Rank is the statistic the replays ranked waiting jobs by
	// (policy.Rank: median or expected); the reference's, perturbed or
	// not, always rank by the median.
	Rank string `json:"rank"`
	// NoiseScale is the relative size of the perturbation of the
	// reference's predictions (Config.NoiseScale); 0 when none ran.
	NoiseScale float64 `json:"noise_scale,omitempty"`
	// WallSeconds is the run's wall time, seconds.
	WallSeconds float64 `json:"wall_s"`
}

// CaseResult is one case: its workload, lower bound and every policy's
// figures (report.Summary, RatioToLB being total JCT / LowerBound).
type CaseResult struct {
	// Name is Case, with "/seedN" after it when the suite ran with more
	// than one seed.
	Name string `json:"name"`
	// Case is the suite's name of the case (Case.Name).
	Case string `json:"case"`
	// Seed is the predictor seed of this replay of the case.
	Seed        int64  `json:"seed"`
	Source      string `json:"source"`
	Nodes       int    `json:"nodes"`
	GPUsPerNode int    `json:"gpus_per_node"`
	GPUs        int    `json:"gpus"`
	// Jobs is the number of jobs replayed; Excluded those left out as
	// larger than the cluster.
	Jobs     int `json:"jobs"`
	Excluded int `json:"excluded_jobs"`
	// LowerBound is the lower bound on the total JCT, seconds.
	LowerBound float64 `json:"lower_bound_total_jct_s"`
	// Policies are in Config.Policies order.
	Policies []report.Summary `json:"policies"`
	// WallSeconds is the sum of the case's replay wall times, seconds.
	WallSeconds float64 `json:"wall_s"`
	// Replays is how many replays ran for this seed: the Policies replayed
	// afresh (the others repeat the first seed's figures, Config.Seeds),
	// plus the Reference replay on the first seed.
	Replays int `json:"replays"`
	// Reference is the candidate replayed with the reference predictor
	// (Config.Reference; Predictor names it), the same for every seed; nil
	// when none ran.
	Reference *report.Summary `json:"reference,omitempty"`
	// Noise are the candidate's total JCTs, seconds, with the reference
	// predictor perturbed (Config.Noise), in perturbation seed order, the
	// same for every seed; empty when none ran.
	Noise []float64 `json:"noise_total_jct_s,omitempty"`
}

// Policy returns the figures of policy name, or nil when it was not run.
func (c *CaseResult) Policy(name string) *report.Summary {
	for i := range c.Policies {
		if c.Policies[i].Policy == name {
			return &c.Policies[i]
		}
	}
	return nil
}

// Run replays every policy of cfg on every case and summarises the result.
// Cases are loaded and prepared first, in order; the replays then run
// cfg.Parallel at a time, case after case (replay.Run). It stops at the
// first error, or with ctx's error when ctx is done.
func Run(ctx context.Context, cases []Case, cfg Config) (*Result, error) {
	start := time.Now()
	if len(cfg.Policies) == 0 {
		return nil, errors.New("quality: no policy to replay")
	}
	if len(cases) == 0 {
		return nil, errors.New("quality: no case to replay")
	}
	if cfg.NewPredictor == nil {
		return nil, errors.New("quality: no predictor")
	}
	seeds := cfg.Seeds
	if len(seeds) == 0 {
		seeds = []int64{1}
	}
	ns := len(seeds)
	res := &Result{Policies: append([]string(nil), cfg.Policies...), Seeds: append([]int64(nil), seeds...),
		Cases: make([]CaseResult, len(cases)*ns)}
	// replayed reports whether policy p is replayed for seed index k; the
	// others copy seed index 0's figures at the end.
	replayed := func(k, p int) bool { return k == 0 || policy.UsesPredictions(cfg.Policies[p]) }
	// slot is a replay's place: (case, seed) entry of res.Cases, and
	// policy index, or refSlot for the candidate with the reference
	// predictor.
	type slot struct{ e, p int }
	const refSlot = -1
	// noiseSlot is the slot index of perturbation n ≥ 1; noiseOf inverts it.
	noiseSlot := func(n int) int { return refSlot - n }
	noiseOf := func(p int) int { return refSlot - p }
	cand := cfg.Candidate
	if cand == "" {
		cand = DefaultCandidate
	}
	if cfg.Reference != nil && !slices.Contains(cfg.Policies, cand) {
		return nil, fmt.Errorf("quality: the reference predictor replays the candidate %s, which is not among the policies", cand)
	}
	noiseScale, err := checkNoise(cfg)
	if err != nil {
		return nil, err
	}
	newRef := func(int64) (predictor.Predictor, error) { return cfg.Reference() }
	// newNoisy returns the reference perturbed with seed n.
	newNoisy := func(n int) func(int64) (predictor.Predictor, error) {
		return func(int64) (predictor.Predictor, error) {
			ref, err := cfg.Reference()
			if err != nil {
				return nil, err
			}
			return predictor.Perturb(ref, noiseScale, uint64(n))
		}
	}
	var (
		specs []replay.Spec
		slots []slot
	)
	left := make([]int, len(res.Cases)) // replays left per (case, seed)
	for i, c := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, lb, err := prepare(c, cfg)
		if err != nil {
			return nil, fmt.Errorf("case %s: %w", c.Name, err)
		}
		wRef := medianRanked(w, c, cfg)
		optIn := cfg.Preemptible.Selector(w.Jobs)
		for k, seed := range seeds {
			name := c.Name
			if ns > 1 {
				name = fmt.Sprintf("%s/seed%d", c.Name, seed)
			}
			e := i*ns + k
			res.Cases[e] = CaseResult{Name: name, Case: c.Name, Seed: seed, Source: c.Source, Nodes: c.Nodes, GPUsPerNode: c.GPUsPerNode,
				GPUs: w.Env.G, Jobs: w.Jobs.Len(), Excluded: w.Excluded, LowerBound: lb,
				Policies: make([]report.Summary, len(cfg.Policies))}
			for p, pol := range cfg.Policies {
				if !replayed(k, p) {
					continue
				}
				specs = append(specs, replay.Spec{Label: "case " + c.Name, Workload: w, LowerBound: lb,
					Policy: pol, Seed: seed, Preemptible: optIn})
				slots = append(slots, slot{e, p})
				left[e]++
			}
			if k == 0 && cfg.Reference != nil {
				specs = append(specs, replay.Spec{Label: "case " + c.Name + " (reference predictor)", Workload: wRef, LowerBound: lb,
					Policy: cand, Seed: seed, Preemptible: optIn, NewPredictor: newRef})
				slots = append(slots, slot{e, refSlot})
				left[e]++
				res.Cases[e].Noise = make([]float64, cfg.Noise)
				for n := 1; n <= cfg.Noise; n++ {
					specs = append(specs, replay.Spec{Label: fmt.Sprintf("case %s (reference predictor, perturbation %d)", c.Name, n), Workload: wRef,
						LowerBound: lb, Policy: cand, Seed: seed, Preemptible: optIn, NewPredictor: newNoisy(n)})
					slots = append(slots, slot{e, noiseSlot(n)})
					left[e]++
				}
			}
			res.Cases[e].Replays = left[e]
		}
	}
	done := 0
	caseLeft := make([]int, len(cases)) // replays left per case, every seed
	for _, sl := range slots {
		caseLeft[sl.e/ns]++
	}
	kept := newPairing(cfg, ns)
	_, err = replay.Run(ctx, specs, replay.Config{NewPredictor: cfg.NewPredictor, Parallel: cfg.Parallel, Keep: true, Sidecar: cfg.Sidecar,
		Done: func(i int, o *replay.Outcome) {
			sl := slots[i]
			cr := &res.Cases[sl.e]
			s := o.Summary
			switch {
			case sl.p == refSlot:
				o.Result = nil
				s.FairnessReport = nil // the comparison reads the totals alone
				cr.Reference = &s
			case sl.p < refSlot:
				o.Result = nil
				cr.Noise[noiseOf(sl.p)-1] = s.TotalJCT
			default:
				kept.keep(sl.e, sl.p, o.Result)
				o.Result = nil
				// Who waited: every policy's overall figures; the accounts'
				// shares only where the factor-mode comparison reads them
				// (FactorSummary), which keeps the suite's JSON small.
				s.FairnessReport.Users = nil
				if !factorCompared(cfg.Policies[sl.p], cfg) {
					s.FairnessReport.Accounts = nil
				}
				cr.Policies[sl.p] = s
			}
			cr.WallSeconds += s.WallSeconds
			if left[sl.e]--; left[sl.e] == 0 {
				done++
				if cfg.Progress != nil {
					cfg.Progress(done, len(res.Cases), cr)
				}
			}
			if caseLeft[sl.e/ns]--; caseLeft[sl.e/ns] == 0 {
				kept.pair(res.Cases, sl.e/ns)
			}
		}})
	if err == nil {
		err = kept.err
	}
	if err != nil {
		return nil, err
	}
	for e := range res.Cases {
		for p := range cfg.Policies {
			if !replayed(e%ns, p) {
				res.Cases[e].Policies[p] = res.Cases[e-e%ns].Policies[p]
			}
		}
		res.Cases[e].Reference = res.Cases[e-e%ns].Reference
		res.Cases[e].Noise = res.Cases[e-e%ns].Noise
	}
	res.Reference = cfg.ReferenceName
	res.Rank = cfg.Params.Rank.String()
	if cfg.Noise > 0 {
		res.NoiseScale = noiseScale
	}
	pre := cfg.Preemptive
	if pre == "" {
		pre = DefaultPreemptive
	}
	res.Summary = Summarize(res.Cases, res.Policies, cand, pre)
	if ns > 1 {
		res.Summary.PerSeed = perSeed(res.Cases, res.Policies, seeds, cand, pre)
	}
	res.WallSeconds = time.Since(start).Seconds()
	return res, nil
}

// checkNoise returns cfg's perturbation scale (DefaultNoiseScale for 0),
// or an error when cfg.Noise or cfg.NoiseScale is out of range, or
// perturbations are asked for without a reference predictor.
func checkNoise(cfg Config) (float64, error) {
	if cfg.Noise < 0 || cfg.Noise > MaxNoise {
		return 0, fmt.Errorf("quality: %d perturbed replays of the reference: want 0 to %d", cfg.Noise, MaxNoise)
	}
	if cfg.Noise == 0 {
		return 0, nil
	}
	if cfg.Reference == nil {
		return 0, errors.New("quality: perturbed replays of the reference predictor asked for without a reference predictor")
	}
	scale := cfg.NoiseScale
	if scale == 0 {
		scale = DefaultNoiseScale
	}
	if !(scale > 0 && scale <= predictor.MaxPerturbScale) {
		return 0, fmt.Errorf("quality: perturbation scale %v: want more than 0, at most %v", cfg.NoiseScale, predictor.MaxPerturbScale)
	}
	return scale, nil
}

// medianRanked returns w, prepared for case c under cfg, as the reference
// replays run it: ranking by the median. It is w itself when cfg ranks by
// the median; otherwise the same jobs on an Env of the same cluster whose
// tunables differ in the rank alone.
func medianRanked(w *sim.Workload, c Case, cfg Config) *sim.Workload {
	if cfg.Params.Rank == policy.RankMedian {
		return w
	}
	params := cfg.Params
	params.Rank = policy.RankMedian
	return &sim.Workload{Env: caseEnv(c, params, cfg.Site), Jobs: w.Jobs, Excluded: w.Excluded}
}

// caseEnv is the Env case c is replayed on: its uniform cluster, the
// policy tunables params and the site's priority configuration.
func caseEnv(c Case, params policy.Params, site *policy.Site) *policy.Env {
	env := policy.NewEnv(cluster.Uniform(c.Nodes, c.GPUsPerNode), params)
	env.Site = site
	return env
}

// prepare loads a case's jobs and returns them prepared for its cluster,
// with their lower bound on the total JCT (seconds).
func prepare(c Case, cfg Config) (*sim.Workload, float64, error) {
	if c.Nodes <= 0 || c.GPUsPerNode <= 0 || c.GPUsPerNode > cluster.MaxGPUsPerNode {
		return nil, 0, fmt.Errorf("cluster %d nodes × %d GPUs: want nodes > 0 and 1..%d GPUs per node",
			c.Nodes, c.GPUsPerNode, cluster.MaxGPUsPerNode)
	}
	jobs, err := c.Jobs()
	if err != nil {
		return nil, 0, err
	}
	t, err := job.TableOf(jobs)
	if err != nil {
		return nil, 0, err
	}
	env := caseEnv(c, cfg.Params, cfg.Site)
	w, err := sim.Prepare(t, env)
	if err != nil {
		return nil, 0, err
	}
	if w.Jobs.Len() == 0 {
		return nil, 0, fmt.Errorf("no job fits the cluster's %d GPUs (%d larger)", env.G, w.Excluded)
	}
	return w, w.LowerBound().Total, nil
}
