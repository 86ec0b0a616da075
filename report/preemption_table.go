package report

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// writePreemption prints, when some policy preempted, what preemption
// cost each policy that preempted: how many preemptions, how many jobs they hit, the most
// restarts of one job, and the GPU-hours wasted on restart costs and lost
// work. Nothing when no policy preempted.
func (r *Report) writePreemption(w io.Writer) error {
	any := false
	for _, s := range r.Policies {
		any = any || s.Preemptions > 0
	}
	if !any {
		return nil
	}
	fmt.Fprintf(w, "\npreemption: jobs stopped and put back in the queue; lost GPU-h are restart costs and lost work\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tpreemptions\tjobs preempted\tmost per job\tlost GPU-h\t")
	for _, s := range r.Policies {
		if s.Preemptions == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t\n", s.Policy, s.Preemptions, s.PreemptedJobs, s.MostPreemptions, gpuHours(s.LostGPUHours))
	}
	return tw.Flush()
}
