package decision

import "github.com/asrpt/asrpt/slurmclient"

// Snapshot is one cycle's read of Slurm, which the cycle's decisions are
// made from.
type Snapshot struct {
	// Nodes are the compute nodes with their states and GPUs in use.
	Nodes []slurmclient.Node
	// Jobs is the job list (pending and running).
	Jobs []slurmclient.Job
}
