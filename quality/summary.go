package quality

import (
	"math"

	"github.com/asrpt/asrpt/policy"
)

// Verdicts of a case: the candidate's total JCT against the best baseline's.
const (
	// Below: lower than every baseline's.
	Below = "below"
	// Within5: at most 5% above the best baseline's.
	Within5 = "within5"
	// Above: more than 5% above the best baseline's.
	Above = "above"
)

// WithinTolerance is the ratio to the best baseline up to which a case is
// Within5.
const WithinTolerance = 1.05

// Summary compares the candidate policy with the others across cases.
// Every ratio is candidate / X: the candidate's total JCT over X's on the
// same case (< 1: the candidate is better). The baselines of a case are the
// policies run without the oracle suffix other than the candidate and the
// preemptive policy and the candidate run another way (its factor mode,
// FactorSuffix, and its closed loop, SidecarSuffix); the
// oracle baselines are the oracle variants of the
// same. Means are geometric, over the cases where both sides were run.
type Summary struct {
	Candidate  string `json:"candidate"`
	Preemptive string `json:"preemptive"`
	// VsBestBaseline is candidate / best baseline of each case.
	VsBestBaseline Mean `json:"vs_best_baseline"`
	// VsPreemptive is candidate / the preemptive policy.
	VsPreemptive Mean `json:"vs_preemptive"`
	// VsOracle is candidate / its own oracle variant (the cost of
	// predicting).
	VsOracle Mean `json:"vs_oracle"`
	// VsReference is candidate / the candidate replayed with the
	// reference predictor, the family median (CaseResult.Reference): what
	// the run's predictor gains (< 1) or loses against the simple rule.
	VsReference Mean `json:"vs_reference"`
	// Noise tells VsReference from noise, when the reference was also
	// replayed perturbed (Config.Noise); nil otherwise.
	Noise *NoiseSummary `json:"noise,omitempty"`
	// OracleVsBestOracleBaseline is the candidate's oracle variant / the
	// best oracle baseline of each case.
	OracleVsBestOracleBaseline Mean `json:"oracle_vs_best_oracle_baseline"`
	// Headroom says how far below its oracle any policy of the run gets,
	// which bounds what the candidate can hope for with these predictions.
	Headroom Headroom `json:"headroom"`
	// Factor compares the candidate in factor mode with multifactor (nil
	// when the run lacks one of them).
	Factor *FactorSummary `json:"factor,omitempty"`
	// Below, Within5 and Above count the cases of each verdict.
	Below   int `json:"cases_below"`
	Within5 int `json:"cases_within5"`
	Above   int `json:"cases_above"`
	// Cases are the per-case comparisons, in case order.
	Cases []CaseSummary `json:"cases"`
	// RatioToLB is each policy's ×LB across the cases, in policy order.
	RatioToLB []PolicyMean `json:"ratio_to_lb"`
	// PerSeed are the means over each predictor seed's cases alone, in
	// seed order, when the suite ran with more than one: their spread is
	// how much the figures above owe to one seed.
	PerSeed []SeedSummary `json:"per_seed,omitempty"`
}

// SeedSummary is the summary's means over one predictor seed's cases.
type SeedSummary struct {
	Seed           int64 `json:"seed"`
	VsBestBaseline Mean  `json:"vs_best_baseline"`
	VsPreemptive   Mean  `json:"vs_preemptive"`
	VsOracle       Mean  `json:"vs_oracle"`
	VsReference    Mean  `json:"vs_reference"`
}

// perSeed summarises each seed's cases (CaseResult.Seed) on their own.
func perSeed(cases []CaseResult, policies []string, seeds []int64, candidate, preemptive string) []SeedSummary {
	out := make([]SeedSummary, 0, len(seeds))
	for _, seed := range seeds {
		var mine []CaseResult
		for _, c := range cases {
			if c.Seed == seed {
				mine = append(mine, c)
			}
		}
		s := Summarize(mine, policies, candidate, preemptive)
		out = append(out, SeedSummary{Seed: seed, VsBestBaseline: s.VsBestBaseline, VsPreemptive: s.VsPreemptive,
			VsOracle: s.VsOracle, VsReference: s.VsReference})
	}
	return out
}

// Mean is a geometric mean of ratios across cases; all zero when no case
// had both sides.
type Mean struct {
	Geomean float64 `json:"geomean"`
	// Min and Max are the smallest and largest ratio.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Cases is how many ratios the mean is over.
	Cases int `json:"cases"`
}

// CaseSummary is one case's comparison. A ratio is 0 (and left out of the
// JSON) when a side of it was not run.
type CaseSummary struct {
	Case string `json:"case"`
	// BestBaseline is the baseline with the lowest total JCT (the first in
	// policy order on a tie); empty when there is none.
	BestBaseline   string  `json:"best_baseline,omitempty"`
	VsBestBaseline float64 `json:"vs_best_baseline,omitempty"`
	// Verdict is Below, Within5 or Above; empty without a ratio.
	Verdict      string  `json:"verdict,omitempty"`
	VsPreemptive float64 `json:"vs_preemptive,omitempty"`
	VsOracle     float64 `json:"vs_oracle,omitempty"`
	VsReference  float64 `json:"vs_reference,omitempty"`
	// NoiseBand is exp(max |log(perturbed / reference)|) over the case's
	// perturbed replays (≥ 1; 0 when none ran), and VsReferenceVerdict
	// VsReference against it: RefBetter, RefWithinNoise or RefWorse.
	NoiseBand                  float64 `json:"noise_band,omitempty"`
	VsReferenceVerdict         string  `json:"vs_reference_verdict,omitempty"`
	BestOracleBaseline         string  `json:"best_oracle_baseline,omitempty"`
	OracleVsBestOracleBaseline float64 `json:"oracle_vs_best_oracle_baseline,omitempty"`
}

// Headroom holds ratios to the candidate's oracle variant (perfect
// predictions) of the other policies, and of the baselines to their own
// oracles: when every policy stays far above the candidate's oracle, the
// loss is in the predictions, not in the candidate's dispatch.
type Headroom struct {
	// BestBaselineVsOracle is the best baseline / the candidate's oracle.
	BestBaselineVsOracle Mean `json:"best_baseline_vs_oracle"`
	// PreemptiveVsOracle is the preemptive policy / the candidate's oracle.
	PreemptiveVsOracle Mean `json:"preemptive_vs_oracle"`
	// BestOtherVsOracle is, case by case, the best of every policy run
	// without the oracle suffix other than the candidate (the preemptive
	// one included) / the candidate's oracle.
	BestOtherVsOracle Mean `json:"best_other_vs_oracle"`
	// BestBaselineVsBestOracleBaseline is the best baseline / the best
	// oracle baseline: what the baselines lose to prediction error.
	BestBaselineVsBestOracleBaseline Mean `json:"best_baseline_vs_best_oracle_baseline"`
}

// Verdicts of a case's VsReference against its noise band.
const (
	// RefBetter: below 1 / the band.
	RefBetter = "better"
	// RefWithinNoise: within the band either way.
	RefWithinNoise = "within_noise"
	// RefWorse: above the band.
	RefWorse = "worse"
)

// NoiseSummary is how far the candidate's total JCT moves with the
// reference predictor perturbed (CaseResult.Noise: each prediction times a
// factor within exp(±Result.NoiseScale)), and the candidate's ratios to
// the reference judged against it. A ratio inside a case's band is one the
// reference itself reaches by a sliver of change to its predictions, so
// it tells nothing about which predictor is better there.
type NoiseSummary struct {
	// Replays is the perturbed replays per case.
	Replays int `json:"replays_per_case"`
	// Band is the cases' noise bands (CaseSummary.NoiseBand).
	Band Mean `json:"band"`
	// Suite is, per perturbation seed, the geometric mean over the cases
	// of perturbed / reference, summarised over the seeds: how far the
	// suite's VsReference moves on noise alone.
	Suite Mean `json:"suite"`
	// Better, Within and Worse count the cases of each verdict
	// (CaseSummary.VsReferenceVerdict).
	Better int `json:"cases_better"`
	Within int `json:"cases_within_noise"`
	Worse  int `json:"cases_worse"`
}

// noiseBand returns exp(max |log(x / ref)|) over the perturbed totals xs
// (≥ 1), or 0 when there is none or ref is not positive.
func noiseBand(xs []float64, ref float64) float64 {
	var r ratios
	for _, x := range xs {
		r.add(x, ref)
	}
	m := r.mean()
	if m.Cases == 0 {
		return 0
	}
	return math.Max(m.Max, 1/m.Min)
}

// refVerdict judges a ratio to the reference r against a noise band
// (≥ 1): RefWorse above it, RefBetter below its inverse, RefWithinNoise
// between; "" when either is missing (0).
func refVerdict(r, band float64) string {
	switch {
	case r == 0 || band == 0:
		return ""
	case r > band:
		return RefWorse
	case r < 1/band:
		return RefBetter
	}
	return RefWithinNoise
}

// summarizeNoise fills the cases' noise bands and verdicts (cs, in the
// order of cases) and returns the summary, nil when no case has both a
// reference and perturbed replays.
func summarizeNoise(cases []CaseResult, cs []CaseSummary) *NoiseSummary {
	var out NoiseSummary
	var bands ratios
	var perSeed []ratios // by perturbation seed: perturbed / reference
	for i := range cases {
		c := &cases[i]
		if c.Reference == nil || len(c.Noise) == 0 {
			continue
		}
		band := noiseBand(c.Noise, c.Reference.TotalJCT)
		if band == 0 {
			continue
		}
		out.Replays = max(out.Replays, len(c.Noise))
		for len(perSeed) < len(c.Noise) {
			perSeed = append(perSeed, nil)
		}
		for n, x := range c.Noise {
			perSeed[n].add(x, c.Reference.TotalJCT)
		}
		bands.add(band, 1)
		cs[i].NoiseBand = band
		switch cs[i].VsReferenceVerdict = refVerdict(cs[i].VsReference, band); cs[i].VsReferenceVerdict {
		case RefWorse:
			out.Worse++
		case RefBetter:
			out.Better++
		case RefWithinNoise:
			out.Within++
		}
	}
	if len(bands) == 0 {
		return nil
	}
	out.Band = bands.mean()
	var suite ratios
	for _, r := range perSeed {
		suite.add(r.mean().Geomean, 1)
	}
	out.Suite = suite.mean()
	return &out
}

// PolicyMean is one policy's geometric mean ×LB over the cases it ran on.
type PolicyMean struct {
	Policy  string  `json:"policy"`
	Geomean float64 `json:"geomean"`
	Cases   int     `json:"cases"`
}

// Summarize compares candidate with the other policies on cases; policies
// gives the policy order (of RatioToLB and of ties). candidate and
// preemptive are base names (without the oracle suffix).
func Summarize(cases []CaseResult, policies []string, candidate, preemptive string) Summary {
	s := Summary{Candidate: candidate, Preemptive: preemptive}
	oracle := candidate + policy.OracleSuffix
	var best, pre, orc, orcBest, ref ratios
	var hBest, hPre, hOther, hBase ratios
	for i := range cases {
		c := &cases[i]
		cs := CaseSummary{Case: c.Name}
		total := func(name string) float64 {
			if p := c.Policy(name); p != nil && p.TotalJCT > 0 {
				return p.TotalJCT
			}
			return 0
		}
		cand, candOracle := total(candidate), total(oracle)
		var bestTotal, bestOracleTotal, bestOther float64
		for _, name := range policies {
			t := total(name)
			base, isOracle := policy.Split(name)
			if t > 0 && !isOracle && base != candidate && !variant(base, candidate) && (bestOther == 0 || t < bestOther) {
				bestOther = t
			}
			if t == 0 || base == candidate || base == preemptive || variant(base, candidate) || (policy.Preemptive(base) && base != candidate) {
				continue
			}
			if !isOracle && (bestTotal == 0 || t < bestTotal) {
				cs.BestBaseline, bestTotal = name, t
			}
			if isOracle && (bestOracleTotal == 0 || t < bestOracleTotal) {
				cs.BestOracleBaseline, bestOracleTotal = name, t
			}
		}
		cs.VsBestBaseline = best.add(cand, bestTotal)
		cs.VsPreemptive = pre.add(cand, total(preemptive))
		cs.VsOracle = orc.add(cand, candOracle)
		if c.Reference != nil {
			cs.VsReference = ref.add(cand, c.Reference.TotalJCT)
		}
		cs.OracleVsBestOracleBaseline = orcBest.add(candOracle, bestOracleTotal)
		hBest.add(bestTotal, candOracle)
		hPre.add(total(preemptive), candOracle)
		hOther.add(bestOther, candOracle)
		hBase.add(bestTotal, bestOracleTotal)
		switch r := cs.VsBestBaseline; {
		case r == 0:
		case r < 1:
			cs.Verdict = Below
			s.Below++
		case r <= WithinTolerance:
			cs.Verdict = Within5
			s.Within5++
		default:
			cs.Verdict = Above
			s.Above++
		}
		s.Cases = append(s.Cases, cs)
	}
	s.VsBestBaseline, s.VsPreemptive, s.VsOracle, s.VsReference, s.OracleVsBestOracleBaseline =
		best.mean(), pre.mean(), orc.mean(), ref.mean(), orcBest.mean()
	s.Noise = summarizeNoise(cases, s.Cases)
	s.Headroom = Headroom{BestBaselineVsOracle: hBest.mean(), PreemptiveVsOracle: hPre.mean(),
		BestOtherVsOracle: hOther.mean(), BestBaselineVsBestOracleBaseline: hBase.mean()}
	s.Factor = SummarizeFactor(cases, policies, candidate)
	for _, name := range policies {
		var r ratios
		for i := range cases {
			if p := cases[i].Policy(name); p != nil {
				r.add(p.RatioToLB, 1)
			}
		}
		m := r.mean()
		s.RatioToLB = append(s.RatioToLB, PolicyMean{Policy: name, Geomean: m.Geomean, Cases: m.Cases})
	}
	return s
}

// ratios accumulates ratios for a geometric mean.
type ratios []float64

// add records a/b and returns it; it records nothing and returns 0 unless
// both are positive and finite.
func (r *ratios) add(a, b float64) float64 {
	if !(a > 0) || !(b > 0) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0
	}
	x := a / b
	*r = append(*r, x)
	return x
}

// mean is the geometric mean with the extremes.
func (r ratios) mean() Mean {
	if len(r) == 0 {
		return Mean{}
	}
	m := Mean{Min: math.Inf(1), Max: math.Inf(-1), Cases: len(r)}
	logSum := 0.0
	for _, x := range r {
		logSum += math.Log(x)
		m.Min, m.Max = math.Min(m.Min, x), math.Max(m.Max, x)
	}
	m.Geomean = math.Exp(logSum / float64(len(r)))
	return m
}

// Geomean returns the geometric mean of positive finite values, ignoring
// the others; 0 when none is left.
func Geomean(xs ...float64) float64 {
	var r ratios
	for _, x := range xs {
		r.add(x, 1)
	}
	return r.mean().Geomean
}
