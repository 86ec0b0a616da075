package sidecar

import (
	"context"
	"errors"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/slurmclient"
)

// Slurm is what the sidecar asks of Slurm: the methods of
// slurmclient.Client it calls. Tests pass an in-memory fake
// (sidecartest.Fake); production passes the REST client.
type Slurm interface {
	// Jobs returns the pending and running jobs.
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

// Reason returns a short, stable label for an error from Slurm, for
// metrics and for deduplicating log lines: job_gone, permission, auth,
// not_pending, invalid, ignored_field, not_applied, held, not_persistent,
// bad_record, bad_response, unsupported, server, canceled, timeout or
// other.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, slurmclient.ErrJobGone):
		return "job_gone"
	case errors.Is(err, slurmclient.ErrPermission):
		return "permission"
	case errors.Is(err, slurmclient.ErrAuth):
		return "auth"
	case errors.Is(err, slurmclient.ErrNotPending):
		return "not_pending"
	case errors.Is(err, slurmclient.ErrInvalid):
		return "invalid"
	case errors.Is(err, slurmclient.ErrIgnoredField):
		return "ignored_field"
	case errors.Is(err, slurmclient.ErrNotApplied):
		return "not_applied"
	case errors.Is(err, slurmclient.ErrAppliedDespiteError):
		return "applied_despite_error"
	case errors.Is(err, slurmclient.ErrHeld):
		return "held"
	case errors.Is(err, slurmclient.ErrNotPersistent):
		return "not_persistent"
	case errors.Is(err, slurmclient.ErrBadRecord):
		return "bad_record"
	case errors.Is(err, slurmclient.ErrBadResponse):
		return "bad_response"
	case errors.Is(err, slurmclient.ErrUnsupported):
		return "unsupported"
	case errors.Is(err, slurmclient.ErrServer):
		return "server"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "other"
}
