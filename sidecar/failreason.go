package sidecar

import (
	"context"
	"errors"

	"github.com/asrpt/asrpt/slurmclient"
)

// FailReason is a short, stable label for an error from Slurm, for
// metrics and for deduplicating log lines; its methods say what a write
// that failed with it means for the cycle and for the job.
type FailReason string

// The FailReasons Reason returns ("" for no error).
const (
	FailNone                FailReason = ""
	FailJobGone             FailReason = "job_gone"
	FailPermission          FailReason = "permission"
	FailAuth                FailReason = "auth"
	FailNotPending          FailReason = "not_pending"
	FailInvalid             FailReason = "invalid"
	FailIgnoredField        FailReason = "ignored_field"
	FailNotApplied          FailReason = "not_applied"
	FailAppliedDespiteError FailReason = "applied_despite_error"
	FailHeld                FailReason = "held"
	FailNotPersistent       FailReason = "not_persistent"
	FailBadRecord           FailReason = "bad_record"
	FailBadResponse         FailReason = "bad_response"
	FailUnsupported         FailReason = "unsupported"
	FailServer              FailReason = "server"
	FailCanceled            FailReason = "canceled"
	FailTimeout             FailReason = "timeout"
	FailOther               FailReason = "other"
)

// String is the label.
func (r FailReason) String() string { return string(r) }

// Systemic reports a failure that is not the job's: every write would
// fail alike (credentials, permission, the daemon stopping, a timeout),
// so the cycle writes no more.
func (r FailReason) Systemic() bool {
	switch r {
	case FailAuth, FailPermission, FailCanceled, FailTimeout:
		return true
	}
	return false
}

// Raced reports a job that changed between the read and the write
// (cancelled, started, held): the next read shows it, and nothing is
// written to it before.
func (r FailReason) Raced() bool {
	return r == FailJobGone || r == FailNotPending || r == FailHeld
}

// Refused reports a request slurmctld took and refused, or answered
// without applying what it asked: the job's, not a sign of Slurm's
// health, so it does not count toward the failures in a row.
func (r FailReason) Refused() bool {
	return r == FailInvalid || r == FailIgnoredField || r == FailNotApplied
}

// NodesFinal reports a node list refused so that no other node list
// would be taken: no more are written to the job.
func (r FailReason) NodesFinal() bool { return r == FailInvalid || r == FailIgnoredField }

// StillPending reports a write outcome after which the job is known to be
// still pending: success, a refusal, or an error with the value applied.
func (r FailReason) StillPending() bool {
	return r == FailNone || r.Refused() || r == FailAppliedDespiteError
}

// Reason classifies an error from Slurm.
func Reason(err error) FailReason {
	switch {
	case err == nil:
		return FailNone
	case errors.Is(err, slurmclient.ErrJobGone):
		return FailJobGone
	case errors.Is(err, slurmclient.ErrPermission):
		return FailPermission
	case errors.Is(err, slurmclient.ErrAuth):
		return FailAuth
	case errors.Is(err, slurmclient.ErrNotPending):
		return FailNotPending
	case errors.Is(err, slurmclient.ErrInvalid):
		return FailInvalid
	case errors.Is(err, slurmclient.ErrIgnoredField):
		return FailIgnoredField
	case errors.Is(err, slurmclient.ErrNotApplied):
		return FailNotApplied
	case errors.Is(err, slurmclient.ErrAppliedDespiteError):
		return FailAppliedDespiteError
	case errors.Is(err, slurmclient.ErrHeld):
		return FailHeld
	case errors.Is(err, slurmclient.ErrNotPersistent):
		return FailNotPersistent
	case errors.Is(err, slurmclient.ErrBadRecord):
		return FailBadRecord
	case errors.Is(err, slurmclient.ErrBadResponse):
		return FailBadResponse
	case errors.Is(err, slurmclient.ErrUnsupported):
		return FailUnsupported
	case errors.Is(err, slurmclient.ErrServer):
		return FailServer
	case errors.Is(err, context.Canceled):
		return FailCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return FailTimeout
	}
	return FailOther
}
