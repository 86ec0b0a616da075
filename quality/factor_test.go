package quality

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/report"
)

// TestSummarizeFactor checks the factor-mode block by hand on two cases:
// the gain kept from the geometric means, the waits counted against
// multifactor's, the accounts' shares compared only at 2% and above, and
// asrpt-factor kept out of asrpt's baselines.
func TestSummarizeFactor(t *testing.T) {
	order := []string{"spwf", "multifactor", "asrpt", "asrpt-factor"}
	a := hand("a", map[string]float64{"spwf": 300, "multifactor": 400, "asrpt": 200, "asrpt-factor": 240}, order)
	b := hand("b", map[string]float64{"spwf": 90, "multifactor": 100, "asrpt": 80, "asrpt-factor": 85}, order)
	fair := func(maxWait, p99 float64, shares map[string]float64) *report.FairnessReport {
		f := &report.FairnessReport{MaxWait: maxWait, P99Wait: p99}
		for _, name := range []string{"big", "small", "tiny"} {
			if s, ok := shares[name]; ok {
				f.Accounts = append(f.Accounts, report.Group{Name: name, ContendedShare: s})
			}
		}
		return f
	}
	// a: asrpt-factor waits longer than multifactor at the top, shares
	// move by 5% (big) and by 50% on an account of 1% (not compared).
	a.Policy("multifactor").FairnessReport = fair(100, 50, map[string]float64{"big": 0.6, "small": 0.39, "tiny": 0.01})
	a.Policy("asrpt-factor").FairnessReport = fair(120, 40, map[string]float64{"big": 0.63, "small": 0.355, "tiny": 0.015})
	// b: shorter waits, the small account's share moves by −20%.
	b.Policy("multifactor").FairnessReport = fair(100, 50, map[string]float64{"big": 0.5, "small": 0.5})
	b.Policy("asrpt-factor").FairnessReport = fair(90, 50, map[string]float64{"big": 0.6, "small": 0.4})

	s := Summarize([]CaseResult{a, b}, order, "asrpt", "las")
	f := s.Factor
	if f == nil || len(f.Cases) != 2 {
		t.Fatalf("factor summary %+v", f)
	}
	fac, cand := math.Sqrt(240.0/400*85.0/100), math.Sqrt(200.0/400*80.0/100)
	if !near(f.FactorVsBaseline, fac) || !near(f.CandidateVsBaseline, cand) || !near(f.GainKept, (1-fac)/(1-cand)) {
		t.Errorf("means %v %v, gain kept %v; want %v %v %v", f.FactorVsBaseline, f.CandidateVsBaseline, f.GainKept, fac, cand, (1-fac)/(1-cand))
	}
	if f.MaxWaitAbove != 1 || f.P99WaitAbove != 0 || f.SharesOff != 1 {
		t.Errorf("above: max %d p99 %d shares %d, want 1 0 1", f.MaxWaitAbove, f.P99WaitAbove, f.SharesOff)
	}
	if !near(f.MaxWaitVsBaseline.Geomean, math.Sqrt(120.0/100*90.0/100)) || !near(f.P99WaitVsBaseline.Geomean, math.Sqrt(40.0/50)) {
		t.Errorf("wait means %+v %+v", f.MaxWaitVsBaseline, f.P99WaitVsBaseline)
	}
	if want := (math.Abs((0.355-0.39)/0.39) + 0.2) / 2; !near(f.MeanShareChange, want) {
		t.Errorf("mean share change %v, want %v", f.MeanShareChange, want)
	}
	if c := f.Cases[0]; c.WorstAccount != "small" || !near(c.ShareChange, (0.355-0.39)/0.39) {
		t.Errorf("case a: worst %q %v, want small %v (tiny is below 2%%)", c.WorstAccount, c.ShareChange, (0.355-0.39)/0.39)
	}
	if c := f.Cases[1]; c.WorstAccount != "big" || !near(c.ShareChange, 0.2) {
		t.Errorf("case b: worst %q %v, want big +0.2 (ties: the first of the baseline's accounts)", c.WorstAccount, c.ShareChange)
	}
	// asrpt-factor is not one of asrpt's baselines: spwf is the best in a
	// though asrpt-factor is lower.
	if got := s.Cases[0].BestBaseline; got != "spwf" {
		t.Errorf("case a: best baseline %q, want spwf", got)
	}
	// Without multifactor there is nothing to compare.
	if s := Summarize([]CaseResult{hand("c", map[string]float64{"asrpt": 1, "asrpt-factor": 2}, order)}, order, "asrpt", "las"); s.Factor != nil {
		t.Errorf("no multifactor: factor summary %+v", s.Factor)
	}
}

// TestFactorNameClosedLoop: when the closed loop ran, the factor-mode
// comparison is of it, and neither it nor the model of the factor mode
// is a baseline of the candidate.
func TestFactorNameClosedLoop(t *testing.T) {
	order := []string{"spwf", "multifactor", "asrpt", "asrpt-factor", "asrpt-sidecar", "asrpt-sidecar-priority"}
	a := hand("a", map[string]float64{"spwf": 300, "multifactor": 400, "asrpt": 200, "asrpt-factor": 240,
		"asrpt-sidecar": 220, "asrpt-sidecar-priority": 150}, order)
	s := Summarize([]CaseResult{a}, order, "asrpt", "las")
	if s.Factor == nil || s.Factor.Factor != "asrpt-sidecar" || !near(s.Factor.FactorVsBaseline, 220.0/400) {
		t.Fatalf("factor summary %+v, want asrpt-sidecar at %v", s.Factor, 220.0/400)
	}
	if got := s.Cases[0].BestBaseline; got != "spwf" {
		t.Errorf("best baseline %q, want spwf (the closed loop is asrpt run another way)", got)
	}
	for name, want := range map[string]bool{"asrpt-factor": true, "asrpt-sidecar": true, "asrpt-sidecar-priority": true,
		"asrpt": false, "asrpt-factorx": false, "spwf": false} {
		if got := variant(name, "asrpt"); got != want {
			t.Errorf("variant(%q) = %v, want %v", name, got, want)
		}
	}
	if got := factorName([]string{"asrpt", "asrpt-factor"}, "asrpt"); got != "asrpt-factor" {
		t.Errorf("without the closed loop the factor mode is %q, want asrpt-factor", got)
	}
}
