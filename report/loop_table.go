package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writeLoop prints, when a closed-loop policy ran, what its sidecar did:
// its cycles and the writes it sent to the replay's Slurm by kind.
// Nothing otherwise.
func (r *Report) writeLoop(w io.Writer) error {
	any := false
	for _, s := range r.Policies {
		any = any || s.Loop != nil
	}
	if !any {
		return nil
	}
	fmt.Fprintf(w, "\nclosed loop: the sidecar's cycles and the writes it sent to the replay's Slurm\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tcycles\tsite factors\tpriorities\tnode lists\t")
	for _, s := range r.Policies {
		if l := s.Loop; l != nil {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", s.Policy, l.Cycles, l.Writes["site_factor"], l.Writes["priority"], l.Writes["nodes"])
		}
	}
	return tw.Flush()
}
