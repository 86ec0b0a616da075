package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writePolicyBlock prints a block of the report: title on a line of its
// own, then a right-aligned table of the policies row gives a line for
// (tab-separated cells under header's, "" for none), each after its
// name. Nothing at all when row gives no policy a line.
func (r *Report) writePolicyBlock(w io.Writer, title, header string, row func(*Summary) string) error {
	var lines []string
	for i := range r.Policies {
		if cells := row(&r.Policies[i]); cells != "" {
			lines = append(lines, r.Policies[i].Policy+"\t"+cells+"\t")
		}
	}
	if len(lines) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\t"+header+"\t")
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	return tw.Flush()
}
