package decision

import (
	"slices"
	"strings"

	"github.com/asrpt/asrpt/slurmclient"
)

// HeldBack returns Slurm's pending reason when it says the job cannot start
// for a reason other than free resources and its priority (a dependency, a
// begin time, an association or QOS limit, a reservation not yet active, a
// partition down, licenses, a burst buffer), and "" when the job waits only
// for resources or its turn. Such a job stays in the policy and is ranked,
// so that it is in order the moment Slurm lets it go, but it is never
// dispatched, never given a node list, and holds no GPUs in the free model
// (policy.Task.Blocked). A reason asrpt does not know is taken as holding
// the job back: only Slurm's words for "resources" and "its turn" let it
// through, so that no GPUs are set aside for a job Slurm will not start.
func HeldBack(reason string) string {
	if slices.Contains(startableReasons, reason) ||
		// Its required nodes are busy, down or reserved: resources (a node
		// list asrpt wrote is replaced after DispatchGrace).
		strings.HasPrefix(reason, "ReqNodeNotAvail") || strings.HasPrefix(reason, "Nodes required for job") {
		return ""
	}
	if len(reason) > maxReason {
		// slurmrestd's text, kept in the plan and the state: bounded.
		reason = reason[:maxReason]
	}
	return reason
}

// maxReason bounds, in bytes, the pending reason a held-back job keeps.
const maxReason = 64

// jobHeldBack is heldBack of a job record at now (Unix seconds): besides
// its pending reason, a dependency still listed or an eligible time still
// to come hold it back, since a job fresh from sbatch shows Reason=None
// until the scheduler's next pass sets Dependency or BeginTime.
func jobHeldBack(sj *slurmclient.Job, now float64) string {
	if why := HeldBack(sj.Reason); why != "" {
		return why
	}
	switch {
	case sj.Dependency != "":
		return "Dependency"
	case !sj.Eligible.IsZero() && unixSeconds(sj.Eligible) > now:
		return "BeginTime"
	}
	return ""
}

// startableReasons are the pending reasons of a job that waits only for
// resources or for its turn: Slurm starts it as soon as they allow. "" and
// None are a job Slurm has not looked at yet (or a release), SchedDefer one
// deferred to the next scheduling pass, NodeDown one whose nodes are down.
var startableReasons = []string{"", "None", "Resources", "Priority", "SchedDefer", "NodeDown"}
