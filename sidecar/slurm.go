package sidecar

import (
	"context"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/slurmclient"
)

// Slurm is what the sidecar asks of Slurm: the methods of
// slurmclient.Client it calls. Tests pass an in-memory fake
// (sidecartest.Fake); production passes the REST client.
type Slurm interface {
	// Jobs returns the pending and running jobs. The sidecar keeps no
	// reference to the slice past its next call.
	Jobs(ctx context.Context) ([]slurmclient.Job, error)
	// Nodes returns every node.
	Nodes(ctx context.Context) ([]slurmclient.Node, error)
	// UpdateJob changes one pending job; see slurmclient.Client.
	UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error
	// AccountingJobs returns the jobs that finished in [from, to).
	AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error)
	// SupportsSiteFactor reports whether UpdateJob can write a site
	// factor; see slurmclient.Client.
	SupportsSiteFactor() bool
	// SignalJob sends a stop signal to a running job that opted in to
	// preemption; SupportsDelivery says which deliveries the release can
	// make. See slurmclient.Client.
	SignalJob(ctx context.Context, id, signal string, d slurmclient.Delivery) error
	SupportsDelivery(d slurmclient.Delivery) bool
}

var _ Slurm = slurmclient.Client(nil)
