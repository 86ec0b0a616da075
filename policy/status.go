package policy

import (
	"errors"
	"fmt"

	"github.com/asrpt/asrpt/placement"
)

// Code says how an attempt to place or start a job ended.
type Code uint8

const (
	// Fits: a placement was found.
	Fits Code = iota
	// DoesNotFit: not enough free GPUs now; the job waits, nothing is wrong.
	DoesNotFit
	// Failed: placing or starting the job failed for another reason (an
	// inconsistent free-GPU state, a profile that does not match the job);
	// the job is skipped this pass and the error is kept for the caller
	// (Env.TakeErrors).
	Failed
)

func (c Code) String() string {
	switch c {
	case Fits:
		return "fits"
	case DoesNotFit:
		return "does_not_fit"
	}
	return "failed"
}

// Status is the outcome of placing a job, with the reason when it failed
// (in the spirit of the Kubernetes scheduler framework's Status).
type Status struct {
	Code Code
	// Err is the reason of a Failed status, nil otherwise.
	Err error
}

// StatusOf classifies an error of placement.Placer.Place: nil fits,
// placement.ErrNoFit does not fit, anything else failed.
func StatusOf(err error) Status {
	switch {
	case err == nil:
		return Status{Code: Fits}
	case errors.Is(err, placement.ErrNoFit):
		return Status{Code: DoesNotFit}
	}
	return Status{Code: Failed, Err: err}
}

// maxKeptErrors bounds the errors an Env keeps between two TakeErrors.
const maxKeptErrors = 64

// fail records a placement or start failure of t (kept until TakeErrors;
// beyond maxKeptErrors only counted).
func (e *Env) fail(t *Task, err error) {
	e.failed++
	if len(e.errs) < maxKeptErrors {
		e.errs = append(e.errs, fmt.Errorf("job %s: %w", t.ID, err))
	}
}

// TakeErrors returns the placement and start failures since the last call
// (at most 64 of them) and how many there were in all, and forgets them.
// A failure is not "does not fit": the replay stops on one, the sidecar
// logs and counts it and goes on.
func (e *Env) TakeErrors() (errs []error, n int) {
	errs, n = e.errs, e.failed
	e.errs, e.failed = nil, 0
	return errs, n
}

// ControllerErr returns the error of the Controller's last poll, nil when
// it succeeded, and forgets it.
func (e *Env) ControllerErr() error {
	err := e.controllerErr
	e.controllerErr = nil
	return err
}
