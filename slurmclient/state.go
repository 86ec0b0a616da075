package slurmclient

import "github.com/asrpt/asrpt/job/jobstate"

// Slurm's base job and node state names as the adapters report them; the
// rest of the project asks the methods below instead of comparing strings.
const (
	statePending = jobstate.Pending
	stateRunning = jobstate.Running
	nodeIdle     = "IDLE"
	nodeMixed    = "MIXED"
)

// Pending reports whether the job waits to start (held jobs included: see
// Held).
func (j *Job) Pending() bool { return j.State == statePending }

// Running reports whether the job runs now.
func (j *Job) Running() bool { return j.State == stateRunning }

// unschedulableFlags are the node state flags under which Slurm starts no
// new job on a node, whatever its base state.
var unschedulableFlags = map[string]bool{
	"DRAIN": true, "NOT_RESPONDING": true, "MAINTENANCE": true, "RESERVED": true,
	"REBOOT_REQUESTED": true, "REBOOT_ISSUED": true, "POWERED_DOWN": true,
	"POWERING_DOWN": true, "POWERING_UP": true, "POWER_DOWN": true,
	"COMPLETING": true, "FAIL": true,
}

// Schedulable reports whether Slurm can start a new job on the node now:
// its base state is IDLE or MIXED and no flag (drain, maintenance,
// reservation, reboot, power saving, completing, failure, not responding)
// keeps jobs off it.
func (n *Node) Schedulable() bool {
	if n.State != nodeIdle && n.State != nodeMixed {
		return false
	}
	for _, f := range n.Flags {
		if unschedulableFlags[f] {
			return false
		}
	}
	return true
}
