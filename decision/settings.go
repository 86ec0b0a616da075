package decision

import (
	"slices"
	"strings"
	"time"

	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/policy"
)

// Settings are what the decide step reads of the sidecar's configuration
// (sidecar.Config.Settings builds them): the policy, the jobs in scope and
// the write rules. Durations are wall time; SiteFactorMax is in Slurm
// priority units.
type Settings struct {
	// Policy is the policy name (asrpt, asrpt-preempt, asrpt-paper, or a
	// non-preemptive baseline) and Params its tunables.
	Policy string
	Params policy.Params
	// Scope limits the jobs asrpt manages.
	Scope Scope
	// Interval is the time between two cycles: a signalled job may run
	// this long twice (at least a minute) past its grace before it counts
	// as having ignored the signal.
	Interval time.Duration
	// DispatchGrace is how long a job whose turn has come may stay pending
	// on the nodes chosen for it before they are chosen again.
	DispatchGrace time.Duration
	// SiteFactorMax is the site factor of the head of the order in factor
	// mode; the last job gets 0.
	SiteFactorMax uint32
	// RequiredNodes enables the Heavy-Edge node list; GPUsPerNode the
	// per-node GPU count for --gpus=N jobs spread evenly over nodes.
	RequiredNodes, GPUsPerNode bool
	// Profiles resolves each placed job's communication profile (nil: no
	// rules, the data-parallel default).
	Profiles *jobprofile.Resolver
	// Preemption is the site's opt-in to preemption.
	Preemption PreemptionConfig
}

// WriteMode is how the sidecar writes the order: WriteFactor or
// WritePriority.
type WriteMode string

const (
	// WriteFactor writes each managed job's site factor, rank-linear in
	// the order (multifactor.SiteFactors): multifactor's fair share, QOS,
	// partition and age keep counting.
	WriteFactor WriteMode = "factor"
	// WritePriority writes absolute priorities in asrpt's bands
	// (HighBand, LowBand): the order alone decides among managed jobs.
	WritePriority WriteMode = "priority"
)

// Scope lists the partitions, QOS and accounts whose jobs asrpt manages;
// an empty list means any. A job must match every non-empty list.
type Scope struct {
	Partitions, QOS, Accounts []string
}

// Contains reports whether a job with these attributes is in scope. A
// job's partition may be a comma-separated list of candidates; all of them
// must be in scope.
func (s Scope) Contains(partition, qos, account string) bool {
	if len(s.Partitions) > 0 {
		for _, p := range strings.Split(partition, ",") {
			if !slices.Contains(s.Partitions, p) {
				return false
			}
		}
	}
	return (len(s.QOS) == 0 || slices.Contains(s.QOS, qos)) && (len(s.Accounts) == 0 || slices.Contains(s.Accounts, account))
}
