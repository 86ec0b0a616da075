package quality

import (
	"math"
	"slices"
	"strings"
)

// FactorBaseline is the policy the factor mode is compared with: Slurm's
// multifactor priority with backfill, what a site runs today.
const FactorBaseline = "multifactor"

// FactorSuffix, appended to the candidate's name, is the candidate in the
// sidecar's factor write mode replayed on top of FactorBaseline
// ("asrpt-factor"). It is not one of the candidate's baselines.
const FactorSuffix = "-factor"

// SidecarSuffix, appended to the candidate's name, is the closed loop
// ("asrpt-sidecar", package loop): the sidecar's own code polling the
// replay's multifactor model and writing site factors into it. When it
// ran, the factor-mode comparison is of it (the system a site runs), else
// of the candidate with FactorSuffix (the replay's model of it). Neither
// is one of the candidate's baselines.
const SidecarSuffix = "-sidecar"

// variant reports whether policy base (no oracle suffix) is candidate run
// another way — its factor mode, or the closed loop in either write mode
// — and so no baseline of it.
func variant(base, candidate string) bool {
	return base == candidate+FactorSuffix || strings.HasPrefix(base, candidate+SidecarSuffix)
}

// factorName is the policy the factor-mode comparison is of among
// policies: the candidate's closed loop when it ran, else its factor mode.
func factorName(policies []string, candidate string) string {
	if slices.Contains(policies, candidate+SidecarSuffix) {
		return candidate + SidecarSuffix
	}
	return candidate + FactorSuffix
}

// MinComparedShare is the least share of the contended GPU-hours under
// FactorBaseline for which an account's share is compared: below it a
// handful of jobs moves the share by more than the tolerance.
const MinComparedShare = 0.02

// ShareTolerance is the relative change of an account's share of the
// contended GPU-hours, against FactorBaseline's, that the factor mode may
// cause.
const ShareTolerance = 0.10

// factorCompared reports whether a replay of name takes part in the
// factor-mode comparison.
func factorCompared(name string, cfg Config) bool {
	cand := cfg.Candidate
	if cand == "" {
		cand = DefaultCandidate
	}
	return name == FactorBaseline || name == cand || name == factorName(cfg.Policies, cand)
}

// FactorSummary compares the candidate in factor mode (Factor, e.g.
// asrpt-factor) with FactorBaseline and with the candidate in priority
// mode: how much of the candidate's total-JCT gain over the baseline the
// factor mode keeps, and whether it makes anyone wait longer or moves
// the accounts' shares.
type FactorSummary struct {
	Factor   string `json:"factor"`
	Baseline string `json:"baseline"`
	// FactorVsBaseline and CandidateVsBaseline are the geometric means of
	// the total JCT over the baseline's.
	FactorVsBaseline    float64 `json:"factor_vs_baseline"`
	CandidateVsBaseline float64 `json:"candidate_vs_baseline"`
	// GainKept is (1 − FactorVsBaseline) / (1 − CandidateVsBaseline): the
	// share of the candidate's gain the factor mode keeps.
	GainKept float64 `json:"gain_kept"`
	// MaxWaitAbove and P99WaitAbove count the cases where the factor
	// mode's longest (p99) wait exceeds the baseline's; SharesOff those
	// where an account's share moved by more than ShareTolerance.
	MaxWaitAbove int `json:"max_wait_above"`
	P99WaitAbove int `json:"p99_wait_above"`
	SharesOff    int `json:"shares_off"`
	// MaxWaitVsBaseline and P99WaitVsBaseline are the geometric means of
	// the factor mode's longest and p99 waits over the baseline's, over
	// the cases where both waited.
	MaxWaitVsBaseline Mean `json:"max_wait_vs_baseline"`
	P99WaitVsBaseline Mean `json:"p99_wait_vs_baseline"`
	// MeanShareChange is the mean over the cases of |ShareChange|.
	MeanShareChange float64 `json:"mean_share_change"`
	// Harmed and CandidateHarmed are the means over the cases of the
	// share of jobs the factor mode, and the candidate, harm against the
	// baseline (report.Paired.HarmedShare: JCT longer by more than
	// max(1 h, the job's run time)).
	Harmed          float64      `json:"harmed_share"`
	CandidateHarmed float64      `json:"candidate_harmed_share"`
	Cases           []FactorCase `json:"cases"`
}

// FactorCase is one case of FactorSummary. Waits are seconds.
type FactorCase struct {
	Case                string  `json:"case"`
	FactorVsBaseline    float64 `json:"factor_vs_baseline"`
	CandidateVsBaseline float64 `json:"candidate_vs_baseline"`
	MaxWait             float64 `json:"max_wait_s"`
	BaselineMaxWait     float64 `json:"baseline_max_wait_s"`
	P99Wait             float64 `json:"p99_wait_s"`
	BaselineP99Wait     float64 `json:"baseline_p99_wait_s"`
	// WorstAccount is the account (of at least MinComparedShare of the
	// baseline's contended GPU-hours) whose share moved most, and
	// ShareChange that change relative to its share under the baseline.
	WorstAccount string  `json:"worst_account,omitempty"`
	ShareChange  float64 `json:"share_change"`
	// Harmed and CandidateHarmed are the shares of the jobs the factor
	// mode, and the candidate, harm against the baseline, job by job
	// (report.Paired.HarmedShare).
	Harmed          float64 `json:"harmed_share"`
	CandidateHarmed float64 `json:"candidate_harmed_share"`
}

// SummarizeFactor compares the candidate's factor mode among policies
// (factorName: its closed loop when it ran, else candidate+FactorSuffix)
// with FactorBaseline on the cases that ran both and the candidate; nil
// when there is none.
func SummarizeFactor(cases []CaseResult, policies []string, candidate string) *FactorSummary {
	name := factorName(policies, candidate)
	s := &FactorSummary{Factor: name, Baseline: FactorBaseline}
	var fac, cand, maxWait, p99Wait ratios
	var shareSum float64
	for i := range cases {
		c := &cases[i]
		f, b, k := c.Policy(name), c.Policy(FactorBaseline), c.Policy(candidate)
		if f == nil || b == nil || k == nil || b.TotalJCT <= 0 {
			continue
		}
		fc := FactorCase{Case: c.Name, FactorVsBaseline: fac.add(f.TotalJCT, b.TotalJCT),
			CandidateVsBaseline: cand.add(k.TotalJCT, b.TotalJCT)}
		if ff, bf := f.FairnessReport, b.FairnessReport; ff != nil && bf != nil {
			fc.MaxWait, fc.BaselineMaxWait = ff.MaxWait, bf.MaxWait
			fc.P99Wait, fc.BaselineP99Wait = ff.P99Wait, bf.P99Wait
			maxWait.add(fc.MaxWait, fc.BaselineMaxWait)
			p99Wait.add(fc.P99Wait, fc.BaselineP99Wait)
			if fc.MaxWait > fc.BaselineMaxWait {
				s.MaxWaitAbove++
			}
			if fc.P99Wait > fc.BaselineP99Wait {
				s.P99WaitAbove++
			}
			for _, g := range bf.Accounts {
				if g.ContendedShare < MinComparedShare {
					continue
				}
				got, _ := ff.Account(g.Name)
				if d := (got.ContendedShare - g.ContendedShare) / g.ContendedShare; math.Abs(d) > math.Abs(fc.ShareChange) {
					fc.WorstAccount, fc.ShareChange = g.Name, d
				}
			}
			if math.Abs(fc.ShareChange) > ShareTolerance {
				s.SharesOff++
			}
		}
		if f.Paired != nil {
			fc.Harmed = f.Paired.HarmedShare
		}
		if k.Paired != nil {
			fc.CandidateHarmed = k.Paired.HarmedShare
		}
		s.Harmed += fc.Harmed
		s.CandidateHarmed += fc.CandidateHarmed
		shareSum += math.Abs(fc.ShareChange)
		s.Cases = append(s.Cases, fc)
	}
	if len(s.Cases) == 0 {
		return nil
	}
	s.FactorVsBaseline, s.CandidateVsBaseline = fac.mean().Geomean, cand.mean().Geomean
	s.MaxWaitVsBaseline, s.P99WaitVsBaseline = maxWait.mean(), p99Wait.mean()
	s.MeanShareChange = shareSum / float64(len(s.Cases))
	s.Harmed /= float64(len(s.Cases))
	s.CandidateHarmed /= float64(len(s.Cases))
	if gain := 1 - s.CandidateVsBaseline; gain > 0 {
		s.GainKept = (1 - s.FactorVsBaseline) / gain
	}
	return s
}
