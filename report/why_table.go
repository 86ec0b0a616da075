package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/sim"
)

// writeWhy writes, for each policy, the story of the job traced with
// --why: each step's time since its submission, what happened or why it
// waits, its place in the waiting order, the jobs started past it and the
// free GPUs.
func (r *Report) writeWhy(w io.Writer) error {
	if r.WhyJob == "" {
		return nil
	}
	fmt.Fprintf(w, "\nwhy job %s waited: each change of what it did or why it waited, and each move of its rank by a factor of four or more; jobs started past it since the step before, GPUs free after the decisions\n", safetext.EscapeN(r.WhyJob, 64))
	for _, s := range r.Policies {
		fmt.Fprintf(w, "%s:\n", s.Policy)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  since submit s\tevent\treason\trank\tpassed\tfree GPUs\tdetail")
		submit := 0.0
		for _, st := range s.Why {
			if st.Event == sim.WhySubmitted {
				submit = st.Time
			}
			code, rank, detail := "-", "-", "-"
			if !st.Reason.None() {
				code, detail = string(st.Reason.Code), st.Reason.Detail
			}
			if st.Rank > 0 {
				rank = fmt.Sprintf("%d/%d", st.Rank, st.Waiting)
			}
			fmt.Fprintf(tw, "  %.0f\t%s\t%s\t%s\t%d\t%d\t%s\n", st.Time-submit, st.Event, code, rank, st.Passed, st.Free, detail)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if s.WhyDropped > 0 {
			fmt.Fprintf(w, "  … %d later steps not kept (at most %d)\n", s.WhyDropped, sim.MaxWhySteps)
		}
	}
	return nil
}
