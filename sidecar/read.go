package sidecar

import (
	"context"
	"errors"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/slurmclient"
)

// read takes the cycle's snapshot: the nodes, then the accounting records
// finished since the last cycle (fed to the predictor as they arrive, so a
// failed accounting read only delays learning), then the job list, read
// last, just before the decisions and writes, to keep short the window in
// which Slurm can start a job asrpt then writes to (accounting queries are
// the slow ones). On error it returns the failed operation's name. Job
// records the client skipped (slurmclient.RecordErrors: a field out of
// range) fail only themselves: they are counted
// (asrpt_job_records_skipped_total), logged once per incident, and their
// jobs, which exist, count as listed (not absent) but get nothing.
func (s *Sidecar) read(ctx context.Context, now time.Time) (decision.Snapshot, string, error) {
	var snap decision.Snapshot
	var err error
	if snap.Nodes, err = s.slurm.Nodes(ctx); err != nil {
		return snap, "nodes", err
	}
	s.pollAccounting(ctx, now)
	clear(s.state.Unreadable)
	snap.Jobs, err = s.slurm.Jobs(ctx)
	var bad *slurmclient.RecordErrors
	switch {
	case errors.As(err, &bad):
		s.m.skippedRecords.Add(float64(len(bad.IDs)))
		s.incident("job_records", err)
		for _, id := range bad.IDs {
			s.state.Unreadable[id] = true
		}
	case err != nil:
		return snap, "jobs", err
	}
	return snap, "", nil
}
