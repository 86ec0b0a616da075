package report

import (
	"fmt"
	"io"
)

// writeLoop prints, when a closed-loop policy ran, what its sidecar did:
// its cycles and the writes it sent to the replay's Slurm by kind.
// Nothing otherwise.
func (r *Report) writeLoop(w io.Writer) error {
	return r.writePolicyBlock(w, "closed loop: the sidecar's cycles and the writes it sent to the replay's Slurm",
		"cycles\tsite factors\tpriorities\tnode lists", func(s *Summary) string {
			l := s.Loop
			if l == nil {
				return ""
			}
			return fmt.Sprintf("%d\t%d\t%d\t%d", l.Cycles, l.Writes["site_factor"], l.Writes["priority"], l.Writes["nodes"])
		})
}
