package sidecar

import (
	"context"
	"time"

	"github.com/asrpt/asrpt/slurmclient"
)

// Snapshot is one cycle's read of Slurm, which the cycle's decisions are
// made from.
type Snapshot struct {
	// Nodes are the compute nodes with their states and GPUs in use.
	Nodes []slurmclient.Node
	// Jobs is the job list (pending and running).
	Jobs []slurmclient.Job
}

// read takes the cycle's snapshot: the nodes, then the accounting records
// finished since the last cycle (fed to the predictor as they arrive, so a
// failed accounting read only delays learning), then the job list, read
// last, just before the decisions and writes, to keep short the window in
// which Slurm can start a job asrpt then writes to (accounting queries are
// the slow ones). On error it returns the failed operation's name.
func (s *Sidecar) read(ctx context.Context, now time.Time) (Snapshot, string, error) {
	var snap Snapshot
	var err error
	if snap.Nodes, err = s.slurm.Nodes(ctx); err != nil {
		return snap, "nodes", err
	}
	s.pollAccounting(ctx, now)
	if snap.Jobs, err = s.slurm.Jobs(ctx); err != nil {
		return snap, "jobs", err
	}
	return snap, "", nil
}
