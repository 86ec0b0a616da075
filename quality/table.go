package quality

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/policy"
)

// WriteTable prints the result for people: the cases, each policy's ×LB
// per case with its geometric mean (one table without and one with perfect
// predictions), the candidate against the others per case, and the
// geometric means a change is decided by. It prints no wall time, so the
// same run prints the same table.
func (r *Result) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	s := &r.Summary
	fmt.Fprintf(ew, "quality suite: %d cases × %d policies, candidate %s, preemptive %s\n",
		len(r.Cases), len(r.Policies), s.Candidate, s.Preemptive)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(ew, "skipped (no trace directory): %s\n", strings.Join(r.Skipped, ", "))
	}
	fmt.Fprintln(ew)

	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tnodes×GPUs\tjobs\texcluded\tlower bound s\t  source")
	for _, c := range r.Cases {
		fmt.Fprintf(tw, "%s\t%d×%d\t%d\t%d\t%s\t  %s\n", c.Name, c.Nodes, c.GPUsPerNode, c.Jobs, c.Excluded, num(c.LowerBound), c.Source)
	}
	tw.Flush()

	var plain, oracle []string
	for _, p := range r.Policies {
		if _, o := policy.Split(p); o {
			oracle = append(oracle, p)
		} else {
			plain = append(plain, p)
		}
	}
	if len(plain) > 0 {
		fmt.Fprintf(ew, "\n×LB (total JCT / lower bound), predictor %s\n", r.predictorName(plain))
		r.writeRatios(ew, plain)
	}
	if len(oracle) > 0 {
		fmt.Fprintf(ew, "\n×LB with perfect predictions (the %s variants)\n", policy.OracleSuffix)
		r.writeRatios(ew, oracle)
	}

	cand, orc := s.Candidate, s.Candidate+policy.OracleSuffix
	fmt.Fprintf(ew, "\n%s against the others per case (%s / X: total JCT of %s over that of X on the same case; < 1: %s better)\n",
		cand, cand, cand, cand)
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "case\tbest baseline\t%s/best\tverdict\t%s/%s\t%s/%s\tbest oracle baseline\t%s/best\t\n",
		cand, cand, s.Preemptive, cand, orc, orc)
	for _, c := range s.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Case, dash(c.BestBaseline), ratio(c.VsBestBaseline),
			verdictText(c.Verdict), ratio(c.VsPreemptive), ratio(c.VsOracle), dash(c.BestOracleBaseline), ratio(c.OracleVsBestOracleBaseline))
	}
	tw.Flush()

	fmt.Fprintf(ew, "\ngeometric means over the cases (min … max):\n")
	writeMeans(ew, []namedMean{
		{fmt.Sprintf("%s / best non-oracle non-preemptive baseline", cand), s.VsBestBaseline},
		{fmt.Sprintf("%s / %s", cand, s.Preemptive), s.VsPreemptive},
		{fmt.Sprintf("%s / %s", cand, orc), s.VsOracle},
		{fmt.Sprintf("%s / best oracle non-preemptive baseline", orc), s.OracleVsBestOracleBaseline},
	})
	if h := s.Headroom; h.BestOtherVsOracle.Cases > 0 {
		fmt.Fprintf(ew, "\nheadroom: the other policies against %s (perfect predictions), and the baselines against their own:\n", orc)
		writeMeans(ew, []namedMean{
			{fmt.Sprintf("best non-oracle non-preemptive baseline / %s", orc), h.BestBaselineVsOracle},
			{fmt.Sprintf("%s / %s", s.Preemptive, orc), h.PreemptiveVsOracle},
			{fmt.Sprintf("best of every other non-oracle policy, per case / %s", orc), h.BestOtherVsOracle},
			{"best non-oracle baseline / best oracle baseline", h.BestBaselineVsBestOracleBaseline},
		})
	}
	writeFactor(ew, s.Factor, cand)
	r.writeReference(ew)
	r.writeSeedMeans(ew)
	if n := s.Below + s.Within5 + s.Above; n > 0 {
		fmt.Fprintf(ew, "%s is below every baseline on %d of %d cases, within %.0f%% of the best on %d, above on %d.\n",
			cand, s.Below, n, (WithinTolerance-1)*100, s.Within5, s.Above)
	}
	return ew.err
}

// writeReference prints, when the candidate was also replayed with the
// reference predictor, its total JCT with the run's predictor over that
// with the reference, per case and on the geometric mean.
func (r *Result) writeReference(w io.Writer) {
	s := &r.Summary
	if s.VsReference.Cases == 0 {
		return
	}
	cand, pred := s.Candidate, r.predictorName([]string{s.Candidate})
	what := "the family median"
	if r.Rank == policy.RankExpected.String() {
		what = "the family median, ranked by its median (the run: --rank expected)"
	}
	fmt.Fprintf(w, "\n%s with predictor %s against %s with the reference predictor %s, %s (< 1: %s better):\n",
		cand, pred, cand, r.Reference, what, pred)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "case\t%s/%s(%s)\t", cand, cand, r.Reference)
	if s.Noise != nil {
		fmt.Fprintf(tw, "noise band\tverdict\t")
	}
	fmt.Fprintln(tw)
	worst, worstCase := 0.0, ""
	for _, c := range s.Cases {
		fmt.Fprintf(tw, "%s\t%s\t", c.Case, ratio(c.VsReference))
		if s.Noise != nil {
			fmt.Fprintf(tw, "%s\t%s\t", ratio(c.NoiseBand), dash(c.VsReferenceVerdict))
		}
		fmt.Fprintln(tw)
		if c.VsReference > worst {
			worst, worstCase = c.VsReference, c.Case
		}
	}
	tw.Flush()
	m := s.VsReference
	fmt.Fprintf(w, "geometric mean %.3f over %d cases (%.3f … %.3f); worst %s\n", m.Geomean, m.Cases, m.Min, m.Max, worstCase)
	if n := s.Noise; n != nil {
		fmt.Fprintf(w, "noise: %s with the reference's predictions perturbed by up to ±%.3g%% (%d replays per case) moves a case by up to ×%.3f (band geometric mean %.3f) and the suite's geometric mean %.3f … %.3f; %s is better than %s beyond the band on %d cases, within it on %d, worse beyond it on %d\n",
			cand, 100*r.NoiseScale, n.Replays, n.Band.Max, n.Band.Geomean, n.Suite.Min, n.Suite.Max, pred, r.Reference, n.Better, n.Within, n.Worse)
	}
}

// writeSeedMeans prints, when the suite ran with more than one seed, each
// case's ratios as geometric means over its seeds, then the summary's
// means over each seed's cases alone.
func (r *Result) writeSeedMeans(w io.Writer) {
	s := &r.Summary
	cand, orc := s.Candidate, s.Candidate+policy.OracleSuffix
	if ns := len(r.Seeds); ns > 1 && len(s.Cases) == len(r.Cases) {
		fmt.Fprintf(w, "\nper case, geometric means over the %d seeds (min … max of %s/best):\n", ns, cand)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "case\t%s/best\t\t%s/%s\t%s/%s\t", cand, cand, s.Preemptive, cand, orc)
		ref := s.VsReference.Cases > 0
		if ref {
			fmt.Fprintf(tw, "%s/%s(%s)\t", cand, cand, r.Reference)
		}
		if s.Noise != nil {
			fmt.Fprintf(tw, "noise band\tverdict\t")
		}
		fmt.Fprintln(tw)
		for i := 0; i+ns <= len(s.Cases); i += ns {
			var best, pre, vsOrc, vsRef ratios
			for _, c := range s.Cases[i : i+ns] {
				best.add(c.VsBestBaseline, 1)
				pre.add(c.VsPreemptive, 1)
				vsOrc.add(c.VsOracle, 1)
				vsRef.add(c.VsReference, 1)
			}
			b := best.mean()
			spread := "-"
			if b.Cases > 0 {
				spread = fmt.Sprintf("[%.3f … %.3f]", b.Min, b.Max)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t", r.Cases[i].Case, ratio(b.Geomean), spread,
				ratio(pre.mean().Geomean), ratio(vsOrc.mean().Geomean))
			if ref {
				fmt.Fprintf(tw, "%s\t", ratio(vsRef.mean().Geomean))
			}
			if s.Noise != nil {
				// Every seed of a case shares its reference and band.
				band := s.Cases[i].NoiseBand
				fmt.Fprintf(tw, "%s\t%s\t", ratio(band), dash(refVerdict(vsRef.mean().Geomean, band)))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	if len(s.PerSeed) > 0 {
		fmt.Fprintf(w, "\nthe same means over each predictor seed's cases alone:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		ref := s.VsReference.Cases > 0
		fmt.Fprintf(tw, "seed\t%s / best baseline\t%s / %s\t%s / %s\t", cand, cand, s.Preemptive, cand, orc)
		if ref {
			fmt.Fprintf(tw, "%s / %s(%s)\t", cand, cand, r.Reference)
		}
		fmt.Fprintln(tw)
		for _, p := range s.PerSeed {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t", p.Seed, ratio(p.VsBestBaseline.Geomean), ratio(p.VsPreemptive.Geomean), ratio(p.VsOracle.Geomean))
			if ref {
				fmt.Fprintf(tw, "%s\t", ratio(p.VsReference.Geomean))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

// namedMean is one line of a block of geometric means.
type namedMean struct {
	what string
	m    Mean
}

// writeMeans prints one aligned line per mean: its geometric mean, case
// count and extremes, or "(not run)".
func writeMeans(w io.Writer, means []namedMean) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range means {
		if m.m.Cases == 0 {
			fmt.Fprintf(tw, "  %s\t-\t(not run)\n", m.what)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%.3f\t(%d cases, %.3f … %.3f)\n", m.what, m.m.Geomean, m.m.Cases, m.m.Min, m.m.Max)
	}
	tw.Flush()
}

// writeRatios prints the ×LB of names per case, and their geometric means.
func (r *Result) writeRatios(w io.Writer, names []string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "case\t")
	for _, n := range names {
		base, _ := policy.Split(n)
		fmt.Fprintf(tw, "%s\t", base)
	}
	fmt.Fprintln(tw)
	for i := range r.Cases {
		c := &r.Cases[i]
		fmt.Fprintf(tw, "%s\t", c.Name)
		for _, n := range names {
			if p := c.Policy(n); p != nil {
				fmt.Fprintf(tw, "%.3f\t", p.RatioToLB)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "geomean\t")
	for _, n := range names {
		g := "-"
		for _, m := range r.Summary.RatioToLB {
			if m.Policy == n && m.Cases > 0 {
				g = fmt.Sprintf("%.3f", m.Geomean)
			}
		}
		fmt.Fprintf(tw, "%s\t", g)
	}
	fmt.Fprintln(tw)
	tw.Flush()
}

// predictorName is the predictor the policies names ran with, as the
// replays report it ("mixed" when they differ).
func (r *Result) predictorName(names []string) string {
	seen := ""
	for i := range r.Cases {
		for _, n := range names {
			p := r.Cases[i].Policy(n)
			if p == nil {
				continue
			}
			if seen == "" {
				seen = p.Predictor
			} else if p.Predictor != seen {
				return "mixed"
			}
		}
	}
	return seen
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func verdictText(v string) string {
	switch v {
	case Below:
		return "below all"
	case Within5:
		return fmt.Sprintf("within %.0f%%", (WithinTolerance-1)*100)
	case Above:
		return "above"
	}
	return "-"
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// num formats seconds compactly: integers up to 1e7, then scientific (as
// the replay table does).
func num(v float64) string {
	if v >= 1e7 {
		return strconv.FormatFloat(v, 'e', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// writeFactor prints the factor-mode comparison (Summary.Factor).
func writeFactor(w io.Writer, f *FactorSummary, cand string) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "\nfactor mode: %s against %s (what the site runs today), and %s against it:\n", f.Factor, f.Baseline, cand)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "case\t%s/%s\t%s/%s\tmax wait s\t%s max wait s\tp99 wait s\t%s p99 wait s\tworst account\tshare change\t%s harmed\t%s harmed\t\n",
		f.Factor, f.Baseline, cand, f.Baseline, f.Baseline, f.Baseline, f.Factor, cand)
	for _, c := range f.Cases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.0f\t%.0f\t%s\t%+.1f%%\t%.2f%%\t%.2f%%\t\n", c.Case, ratio(c.FactorVsBaseline),
			ratio(c.CandidateVsBaseline), c.MaxWait, c.BaselineMaxWait, c.P99Wait, c.BaselineP99Wait, safetext.Escape(dash(c.WorstAccount)), 100*c.ShareChange,
			100*c.Harmed, 100*c.CandidateHarmed)
	}
	tw.Flush()
	fmt.Fprintf(w, "%s keeps %.0f%% of %s's gain over %s (geometric means %.3f and %.3f); its longest wait exceeds %s's on %d of %d cases (geometric mean of the ratios %.3f), its p99 wait on %d (%.3f); an account's share of the contended GPU-hours (accounts of at least %.0f%%) moves by more than %.0f%% on %d (mean of the worst changes %.1f%%).\n",
		f.Factor, 100*f.GainKept, cand, f.Baseline, f.FactorVsBaseline, f.CandidateVsBaseline, f.Baseline,
		f.MaxWaitAbove, len(f.Cases), f.MaxWaitVsBaseline.Geomean, f.P99WaitAbove, f.P99WaitVsBaseline.Geomean,
		100*MinComparedShare, 100*ShareTolerance, f.SharesOff, 100*f.MeanShareChange)
	fmt.Fprintf(w, "job by job against %s, %s harms %.2f%% of the jobs on the mean of the cases and %s %.2f%% (harmed: JCT longer by more than max(1 h, the job's run time)).\n",
		f.Baseline, f.Factor, 100*f.Harmed, cand, 100*f.CandidateHarmed)
}
