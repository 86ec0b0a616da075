package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/asrpt/asrpt/internal/safetext"
)

// writePaired writes the paired comparison with the baseline: a row per
// policy (jobs harmed and helped, the JCT difference's distribution, the
// largest change of an account's share), then each policy's worst-harmed
// jobs.
func (r *Report) writePaired(w io.Writer) error {
	if r.Against == "" {
		return nil
	}
	fmt.Fprintf(w, "\npaired with %s: per job, JCT and wait under each policy minus under %s (harmed: JCT longer by more than max(1 h, its run time); share: an account's share of the contended GPU-hours against %s's, accounts with at least 2%% of the GPU-hours)\n",
		safetext.EscapeN(r.Against, 64), safetext.EscapeN(r.Against, 64), safetext.EscapeN(r.Against, 64))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tharmed\tharmed %\thelped %\tJCT diff p50 s\tp90 s\tp99 s\tmax s\twait diff p99 s\tshare change\taccount\t")
	for _, s := range r.Policies {
		p := s.Paired
		if p == nil {
			continue
		}
		acct := "-"
		if p.ShareAccount != "" {
			acct = safetext.EscapeN(p.ShareAccount, 32)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%s\t%s\t%s\t%s\t%s\t%+.1f%%\t%s\t\n", s.Policy, p.Harmed, 100*p.HarmedShare,
			100*float64(p.Helped)/float64(max(p.Jobs, 1)), signed(p.JCTDiff.P50), signed(p.JCTDiff.P90), signed(p.JCTDiff.P99),
			signed(p.JCTDiff.Max), signed(p.WaitDiff.P99), 100*p.ShareChange, acct)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Harm by job size: harmed jobs of each GPU size class, of its jobs.
	fmt.Fprintf(w, "\nharmed against %s by job size (GPUs): harmed / jobs\n", safetext.EscapeN(r.Against, 64))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "policy\t")
	for _, c := range sizeClasses {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for _, s := range r.Policies {
		p := s.Paired
		if p == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t", s.Policy)
		for _, c := range sizeClasses {
			cell := "-"
			for _, g := range p.Sizes {
				if g.Name == c {
					cell = fmt.Sprintf("%d/%d", g.Harmed, g.Jobs)
				}
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Policies {
		p := s.Paired
		if p == nil || len(p.Worst) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s against %s: the %d jobs whose JCT grew most\n", s.Policy, safetext.EscapeN(r.Against, 64), len(p.Worst))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "job\tuser\taccount\tGPUs\trun time s\twait s\tbaseline wait s\tJCT diff s\t")
		for _, j := range p.Worst {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", safetext.EscapeN(j.ID, 32), safetext.EscapeN(j.User, 32),
				safetext.EscapeN(j.Account, 32), j.GPUs, num(j.RunTime), num(j.Wait), num(j.BaseWait), signed(j.JCTDiff))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// signed formats a difference of seconds with its sign.
func signed(v float64) string {
	if v > 0 {
		return "+" + num(v)
	}
	if v < 0 {
		return "-" + num(-v)
	}
	return "0"
}
