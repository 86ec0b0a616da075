package quality

import (
	"math"
	"testing"

	"github.com/asrpt/asrpt/report"
)

// hand builds a case of lower bound 100 s from policy → total JCT.
func hand(name string, totals map[string]float64, order []string) CaseResult {
	c := CaseResult{Name: name, LowerBound: 100}
	for _, p := range order {
		if t, ok := totals[p]; ok {
			c.Policies = append(c.Policies, report.Summary{Policy: p, TotalJCT: t, RatioToLB: t / 100})
		}
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	order := []string{"fifo", "spjf", "las", "asrpt", "asrpt-v2", "fifo-oracle", "asrpt-oracle", "asrpt-v2-oracle"}
	a := map[string]float64{"fifo": 400, "spjf": 250, "las": 180, "asrpt": 200, "asrpt-v2": 150,
		"fifo-oracle": 320, "asrpt-oracle": 160, "asrpt-v2-oracle": 140}
	b := map[string]float64{"fifo": 290, "spjf": 310, "las": 300, "asrpt": 300, "asrpt-v2": 400,
		"fifo-oracle": 300, "asrpt-oracle": 300, "asrpt-v2-oracle": 600}
	tie := map[string]float64{"fifo": 100, "spjf": 100, "asrpt": 100}
	tests := []struct {
		name                  string
		cases                 []CaseResult
		candidate, preemptive string
		want                  []CaseSummary
		best, pre, orc, orcB  Mean
		below, within, above  int
		lbMeans               map[string]float64 // policy → geomean ×LB
	}{
		{
			name:      "asrpt against the baselines",
			cases:     []CaseResult{hand("a", a, order), hand("b", b, order)},
			candidate: "asrpt", preemptive: "las",
			// a: best of fifo 400, spjf 250, asrpt-v2 150 is asrpt-v2 → 200/150.
			// b: best of fifo 290, spjf 310, asrpt-v2 400 is fifo → 300/290.
			want: []CaseSummary{
				{Case: "a", BestBaseline: "asrpt-v2", VsBestBaseline: 200.0 / 150, Verdict: Above, VsPreemptive: 200.0 / 180,
					VsOracle: 200.0 / 160, BestOracleBaseline: "asrpt-v2-oracle", OracleVsBestOracleBaseline: 160.0 / 140},
				{Case: "b", BestBaseline: "fifo", VsBestBaseline: 300.0 / 290, Verdict: Within5, VsPreemptive: 1,
					VsOracle: 1, BestOracleBaseline: "fifo-oracle", OracleVsBestOracleBaseline: 1},
			},
			best:    Mean{Geomean: math.Sqrt(200.0 / 150 * 300 / 290), Min: 300.0 / 290, Max: 200.0 / 150, Cases: 2},
			pre:     Mean{Geomean: math.Sqrt(200.0 / 180), Min: 1, Max: 200.0 / 180, Cases: 2},
			orc:     Mean{Geomean: math.Sqrt(200.0 / 160), Min: 1, Max: 200.0 / 160, Cases: 2},
			orcB:    Mean{Geomean: math.Sqrt(160.0 / 140), Min: 1, Max: 160.0 / 140, Cases: 2},
			within:  1,
			above:   1,
			lbMeans: map[string]float64{"fifo": math.Sqrt(4 * 2.9), "asrpt": math.Sqrt(2 * 3), "las": math.Sqrt(1.8 * 3)},
		},
		{
			name:      "a variant as candidate: asrpt becomes a baseline",
			cases:     []CaseResult{hand("a", a, order), hand("b", b, order)},
			candidate: "asrpt-v2", preemptive: "las",
			want: []CaseSummary{
				{Case: "a", BestBaseline: "asrpt", VsBestBaseline: 150.0 / 200, Verdict: Below, VsPreemptive: 150.0 / 180,
					VsOracle: 150.0 / 140, BestOracleBaseline: "asrpt-oracle", OracleVsBestOracleBaseline: 140.0 / 160},
				{Case: "b", BestBaseline: "fifo", VsBestBaseline: 400.0 / 290, Verdict: Above, VsPreemptive: 400.0 / 300,
					VsOracle: 400.0 / 600, BestOracleBaseline: "fifo-oracle", OracleVsBestOracleBaseline: 600.0 / 300},
			},
			best:  Mean{Geomean: math.Sqrt(150.0 / 200 * 400 / 290), Min: 150.0 / 200, Max: 400.0 / 290, Cases: 2},
			pre:   Mean{Geomean: math.Sqrt(150.0 / 180 * 400 / 300), Min: 150.0 / 180, Max: 400.0 / 300, Cases: 2},
			orc:   Mean{Geomean: math.Sqrt(150.0 / 140 * 400 / 600), Min: 400.0 / 600, Max: 150.0 / 140, Cases: 2},
			orcB:  Mean{Geomean: math.Sqrt(140.0 / 160 * 600 / 300), Min: 140.0 / 160, Max: 2, Cases: 2},
			below: 1,
			above: 1,
		},
		{
			name:      "missing policies and a tie",
			cases:     []CaseResult{hand("tie", tie, order)},
			candidate: "asrpt", preemptive: "las",
			// The tie goes to the first in policy order; equal totals are
			// within 5%, not below.
			want:    []CaseSummary{{Case: "tie", BestBaseline: "fifo", VsBestBaseline: 1, Verdict: Within5}},
			best:    Mean{Geomean: 1, Min: 1, Max: 1, Cases: 1},
			within:  1,
			lbMeans: map[string]float64{"fifo": 1, "las": 0},
		},
		{
			name:      "candidate not run",
			cases:     []CaseResult{hand("x", map[string]float64{"fifo": 200, "las": 100}, order)},
			candidate: "asrpt", preemptive: "las",
			want: []CaseSummary{{Case: "x", BestBaseline: "fifo"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.cases, order, tc.candidate, tc.preemptive)
			if s.Candidate != tc.candidate || s.Preemptive != tc.preemptive {
				t.Errorf("candidate %q preemptive %q", s.Candidate, s.Preemptive)
			}
			if len(s.Cases) != len(tc.want) {
				t.Fatalf("%d case summaries, want %d", len(s.Cases), len(tc.want))
			}
			for i, w := range tc.want {
				g := s.Cases[i]
				if g.Case != w.Case || g.BestBaseline != w.BestBaseline || g.Verdict != w.Verdict || g.BestOracleBaseline != w.BestOracleBaseline ||
					!near(g.VsBestBaseline, w.VsBestBaseline) || !near(g.VsPreemptive, w.VsPreemptive) ||
					!near(g.VsOracle, w.VsOracle) || !near(g.OracleVsBestOracleBaseline, w.OracleVsBestOracleBaseline) {
					t.Errorf("case %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
			for _, m := range []struct {
				what      string
				got, want Mean
			}{{"vs best", s.VsBestBaseline, tc.best}, {"vs preemptive", s.VsPreemptive, tc.pre},
				{"vs oracle", s.VsOracle, tc.orc}, {"oracle vs best oracle", s.OracleVsBestOracleBaseline, tc.orcB}} {
				if m.got.Cases != m.want.Cases || !near(m.got.Geomean, m.want.Geomean) || !near(m.got.Min, m.want.Min) || !near(m.got.Max, m.want.Max) {
					t.Errorf("%s: got %+v, want %+v", m.what, m.got, m.want)
				}
			}
			if s.Below != tc.below || s.Within5 != tc.within || s.Above != tc.above {
				t.Errorf("below/within/above %d/%d/%d, want %d/%d/%d", s.Below, s.Within5, s.Above, tc.below, tc.within, tc.above)
			}
			if len(s.RatioToLB) != len(order) {
				t.Fatalf("%d ×LB means, want one per policy (%d)", len(s.RatioToLB), len(order))
			}
			for _, m := range s.RatioToLB {
				if w, ok := tc.lbMeans[m.Policy]; ok && !near(m.Geomean, w) {
					t.Errorf("geomean ×LB of %s = %v, want %v", m.Policy, m.Geomean, w)
				}
			}
		})
	}
}

func TestGeomean(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{1, 4}, 2},
		{[]float64{2, 8, 4}, 4},
		{[]float64{0.5, 2}, 1},
		{[]float64{4, 0, -1, math.NaN(), math.Inf(1), 9}, 6}, // only positive finite values count
	}
	for _, tc := range tests {
		if got := Geomean(tc.in...); !near(got, tc.want) {
			t.Errorf("Geomean(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestHeadroom: the others against the candidate's oracle, by hand.
func TestHeadroom(t *testing.T) {
	order := []string{"fifo", "spjf", "las", "asrpt", "fifo-oracle", "spjf-oracle", "asrpt-oracle"}
	a := map[string]float64{"fifo": 400, "spjf": 250, "las": 180, "asrpt": 200,
		"fifo-oracle": 320, "spjf-oracle": 200, "asrpt-oracle": 160}
	b := map[string]float64{"fifo": 290, "spjf": 310, "las": 350, "asrpt": 300,
		"fifo-oracle": 300, "spjf-oracle": 280, "asrpt-oracle": 250}
	s := Summarize([]CaseResult{hand("a", a, order), hand("b", b, order)}, order, "asrpt", "las")
	h := s.Headroom
	for _, tc := range []struct {
		name string
		got  Mean
		a, b float64 // the two cases' ratios
	}{
		// a: best baseline spjf 250, b: fifo 290.
		{"best baseline / asrpt-oracle", h.BestBaselineVsOracle, 250.0 / 160, 290.0 / 250},
		{"las / asrpt-oracle", h.PreemptiveVsOracle, 180.0 / 160, 350.0 / 250},
		// a: las 180 is the best other; b: fifo 290 (las 350 is worse).
		{"best other / asrpt-oracle", h.BestOtherVsOracle, 180.0 / 160, 290.0 / 250},
		{"best baseline / best oracle baseline", h.BestBaselineVsBestOracleBaseline, 250.0 / 200, 290.0 / 280},
	} {
		if tc.got.Cases != 2 || !near(tc.got.Geomean, math.Sqrt(tc.a*tc.b)) ||
			!near(tc.got.Min, math.Min(tc.a, tc.b)) || !near(tc.got.Max, math.Max(tc.a, tc.b)) {
			t.Errorf("%s: %+v, want the geometric mean of %v and %v", tc.name, tc.got, tc.a, tc.b)
		}
	}
	// Without the candidate's oracle there is no headroom to report.
	if s := Summarize([]CaseResult{hand("a", a, order[:4])}, order[:4], "asrpt", "las"); s.Headroom.BestOtherVsOracle.Cases != 0 {
		t.Errorf("headroom without an oracle: %+v", s.Headroom)
	}
}

// TestSummarizeNoise: a case's noise band is the largest factor between a
// perturbed replay and the reference, either way; the candidate's ratio
// to the reference is judged against it; the suite's noise is the spread
// over perturbation seeds of the cases' geometric means.
func TestSummarizeNoise(t *testing.T) {
	withRef := func(name string, cand, ref float64, noise ...float64) CaseResult {
		c := hand(name, map[string]float64{"asrpt": cand}, []string{"asrpt"})
		c.Reference = &report.Summary{Policy: "asrpt", TotalJCT: ref}
		c.Noise = noise
		return c
	}
	cases := []CaseResult{
		withRef("worse", 130, 100, 110, 95),                               // band 1.1: 1.3 above it
		withRef("better", 80, 100, 105, 110),                              // band 1.1: 0.8 below 1/1.1
		withRef("within", 104, 100, 90, 102),                              // band 1/0.9: 1.04 inside
		withRef("edge", 110, 100, 110, 100),                               // band 1.1: at its edge, inside
		withRef("no-noise", 200, 100),                                     // no perturbed replay: no verdict
		hand("no-ref", map[string]float64{"asrpt": 1}, []string{"asrpt"}), // nothing to judge
	}
	s := Summarize(cases, []string{"asrpt"}, "asrpt", "las")
	tests := []struct {
		band    float64
		verdict string
	}{{1.1, RefWorse}, {1.1, RefBetter}, {1 / 0.9, RefWithinNoise}, {1.1, RefWithinNoise}, {0, ""}, {0, ""}}
	for i, want := range tests {
		c := s.Cases[i]
		if !near(c.NoiseBand, want.band) || c.VsReferenceVerdict != want.verdict {
			t.Errorf("%s: band %v verdict %q, want %v %q", c.Case, c.NoiseBand, c.VsReferenceVerdict, want.band, want.verdict)
		}
	}
	n := s.Noise
	if n == nil {
		t.Fatal("no noise summary")
	}
	if n.Replays != 2 || n.Worse != 1 || n.Better != 1 || n.Within != 2 || n.Band.Cases != 4 || !near(n.Band.Max, 1/0.9) {
		t.Errorf("noise %+v: want 2 replays, 1 worse, 1 better, 2 within, 4 bands, largest 1/0.9", n)
	}
	// Seed 1: 1.10, 1.05, 0.90, 1.10; seed 2: 0.95, 1.10, 1.02, 1.00.
	s1 := math.Pow(1.10*1.05*0.90*1.10, 0.25)
	s2 := math.Pow(0.95*1.10*1.02*1.00, 0.25)
	if n.Suite.Cases != 2 || !near(n.Suite.Min, math.Min(s1, s2)) || !near(n.Suite.Max, math.Max(s1, s2)) {
		t.Errorf("suite noise %+v, want %v and %v", n.Suite, s1, s2)
	}
	for _, tc := range []struct {
		r, band float64
		want    string
	}{{1.2, 1.1, RefWorse}, {1.1, 1.1, RefWithinNoise}, {1 / 1.1, 1.1, RefWithinNoise}, {0.9, 1.1, RefBetter}, {1, 1, RefWithinNoise}, {0, 1.1, ""}, {1.2, 0, ""}} {
		if got := refVerdict(tc.r, tc.band); got != tc.want {
			t.Errorf("refVerdict(%v, %v) = %q, want %q", tc.r, tc.band, got, tc.want)
		}
	}
	if Summarize(cases[4:], []string{"asrpt"}, "asrpt", "las").Noise != nil {
		t.Error("no case with perturbed replays: want no noise summary")
	}
}
