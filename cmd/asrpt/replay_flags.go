package main

import (
	"fmt"
	"slices"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/trace"
)

// Bounds of the replay's numeric flags besides the policy tunables
// (policy.Params.Validate) and the generator's (trace.MaxGenJobs,
// trace.MaxGenLoad).
const (
	// maxReplayNodes is the largest --nodes: 65,536 nodes.
	maxReplayNodes = 1 << 16
	// maxParallel is the largest --parallel: 1024 replays at once.
	maxParallel = 1024
	// maxTop is the largest --top-accounts, --top-users and --longest.
	maxTop = 100000
	// maxRetrainEvery is the largest --retrain-every: 100 years of
	// simulated seconds (3,153,600,000 s); the forest then never retrains.
	maxRetrainEvery = 100 * 365 * 86400
)

// progressModes are the values of --progress.
var progressModes = []string{"auto", "always", "never"}

// validate checks every flag of the replay that the flag package cannot:
// each out-of-range value is a usage error naming the flag and the values
// allowed. NaN and infinities are out of every range.
func (f *replayFlags) validate() error {
	bad := func(flag string, v any, want string) error {
		return fmt.Errorf("%w: --%s %v: want %s", errUsage, flag, v, want)
	}
	if err := checkParams(f.params); err != nil {
		return err
	}
	if f.nodes < 1 || f.nodes > maxReplayNodes {
		return bad("nodes", f.nodes, fmt.Sprintf("1..%d", maxReplayNodes))
	}
	if f.gpn < 1 || f.gpn > cluster.MaxGPUsPerNode {
		return bad("gpus-per-node", f.gpn, fmt.Sprintf("1..%d", cluster.MaxGPUsPerNode))
	}
	if f.jobs < 1 || f.jobs > trace.MaxGenJobs {
		return bad("jobs", f.jobs, fmt.Sprintf("1..%d", trace.MaxGenJobs))
	}
	if !(f.load > 0 && f.load <= trace.MaxGenLoad) {
		return bad("load", f.load, fmt.Sprintf("a number in (0, %d] (share of the cluster's GPUs)", trace.MaxGenLoad))
	}
	if !(f.retrainEvery > 0 && f.retrainEvery <= maxRetrainEvery) {
		return bad("retrain-every", f.retrainEvery, fmt.Sprintf("seconds in (0, %d]", maxRetrainEvery))
	}
	if f.parallel < 1 || f.parallel > maxParallel {
		return bad("parallel", f.parallel, fmt.Sprintf("1..%d", maxParallel))
	}
	for _, t := range []struct {
		flag string
		v    int
	}{{"top-accounts", f.topAccounts}, {"top-users", f.topUsers}, {"longest", f.top}} {
		if t.v < 0 || t.v > maxTop {
			return bad(t.flag, t.v, fmt.Sprintf("0..%d", maxTop))
		}
	}
	if !slices.Contains(progressModes, f.progress) {
		return bad("progress", fmt.Sprintf("%q", f.progress), "auto, always or never")
	}
	return nil
}
