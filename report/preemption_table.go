package report

import (
	"fmt"
	"io"
)

// writePreemption prints, when some policy preempted, what preemption
// cost each policy that preempted: how many preemptions, how many jobs they hit, the most
// restarts of one job, and the GPU-hours wasted on restart costs and lost
// work. Nothing when no policy preempted.
func (r *Report) writePreemption(w io.Writer) error {
	return r.writePolicyBlock(w, "preemption: jobs stopped and put back in the queue; lost GPU-h are restart costs and lost work",
		"preemptions\tjobs preempted\tmost per job\tlost GPU-h", func(s *Summary) string {
			if s.Preemptions == 0 {
				return ""
			}
			return fmt.Sprintf("%d\t%d\t%d\t%s", s.Preemptions, s.PreemptedJobs, s.MostPreemptions, gpuHours(s.LostGPUHours))
		})
}
