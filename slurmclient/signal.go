package slurmclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/asrpt/asrpt/job/jobstate"
	"github.com/asrpt/asrpt/jobword"
)

// Delivery says which processes of a running job a signal reaches, as
// slurmrestd's DELETE …/job/{id}?flags= chooses them. What survives the
// signal depends on it (checked on the 22.05, 24.11 and 26.05 labs): a
// PyTorch Lightning or submitit job traps the checkpoint signal in its
// steps only, and dies of it when its batch shell gets it too.
type Delivery int

const (
	// DeliverSteps sends the signal to the job's steps only (flags
	// FULL_STEPS_ONLY), as `#SBATCH --signal=SIG@TIME` does; v0.0.42+.
	DeliverSteps Delivery = iota + 1
	// DeliverBatch sends it to the batch shell only (flags BATCH_JOB), as
	// `--signal=B:SIG@TIME` does; v0.0.42+.
	DeliverBatch
	// DeliverAll sends it to the batch shell and every step (flags
	// FULL_JOB): what v0.0.38, which has no flags, always does.
	DeliverAll
)

// String returns the delivery's name: steps, batch or all.
func (d Delivery) String() string {
	switch d {
	case DeliverSteps:
		return "steps"
	case DeliverBatch:
		return "batch"
	case DeliverAll:
		return "all"
	}
	return fmt.Sprintf("Delivery(%d)", int(d))
}

// flag is the delivery's value of the flags query parameter.
func (d Delivery) flag() string {
	switch d {
	case DeliverSteps:
		return "FULL_STEPS_ONLY"
	case DeliverBatch:
		return "BATCH_JOB"
	case DeliverAll:
		return "FULL_JOB"
	}
	return ""
}

// killStatus is the part of a v0.0.42+ signal answer that says, job by job,
// whether the signal was delivered: slurmrestd answers HTTP 200 even when
// it was not (a PENDING job: error code 2020), so status[] is what counts.
type killStatus struct {
	Status []struct {
		Error *struct {
			Code    *int64 `json:"code"`
			Message string `json:"message"`
			String  string `json:"string"`
		} `json:"error"`
		StepID string `json:"step_id"`
	} `json:"status"`
}

// signalJob sends signal (one of jobword.Signals, without the SIG prefix)
// to running job id of the adapter a, whose job paths start with jobPath,
// with delivery d; flags says whether the release takes the flags
// parameter (v0.0.42+). Every check is made before anything is sent: an id
// that is not a job id, a signal not in the list or a delivery the release
// cannot make is refused (ErrInvalid, ErrUnsupported); then the job is read
// and one that is not RUNNING, or is part of a heterogeneous job, is
// refused (ErrNotPending, ErrInvalid). The signal goes out spelled
// "SIGNAME", which every supported release reads; a misspelt name would
// make slurmctld send SIGKILL, which is why nothing else is ever sent. The
// request is sent once, never retried. A delivery error in the answer's
// status[] (HTTP 200 on v0.0.42+) is an *APIError like any other refusal.
func signalJob(ctx context.Context, r *rest, a jobAdapter, jobPath, id, signal string, d Delivery, flags bool) error {
	op := fmt.Sprintf("signal job %s", id)
	if !jobIDRE.MatchString(id) {
		return fmt.Errorf("job %q: %w: not a job id", id, ErrInvalid)
	}
	if !knownSignal(signal) {
		return fmt.Errorf("%s: %w: signal %q is not one of %s", op, ErrInvalid, signal, strings.Join(jobword.Signals, ", "))
	}
	switch {
	case d.flag() == "":
		return fmt.Errorf("%s: %w: delivery %v", op, ErrInvalid, d)
	case !flags && d != DeliverAll:
		return fmt.Errorf("%s: %w: this release signals the whole job only (batch shell and steps), not %v", op, ErrUnsupported, d)
	}
	j, err := a.Job(ctx, id)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	switch {
	case j.State != jobstate.Running:
		return fmt.Errorf("%s: %w: the job is %s, not running", op, ErrNotPending, j.State)
	case j.Het.LeaderID != "":
		return fmt.Errorf("%s: %w: a heterogeneous job is not signalled", op, ErrInvalid)
	}
	q := url.Values{"signal": {"SIG" + signal}}
	if flags {
		q.Set("flags", d.flag())
	}
	path := jobPath + id
	res, err := r.t.do(ctx, "DELETE", path, q, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := answer("DELETE "+path, res, nil); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var ks killStatus
	if len(res.body) > 0 {
		if jerr := json.Unmarshal(res.body, &ks); jerr != nil {
			return fmt.Errorf("%s: %w", op, badResponse("DELETE "+path, jerr))
		}
	}
	for _, s := range ks.Status {
		if s.Error == nil || s.Error.Code == nil || *s.Error.Code == 0 {
			continue
		}
		msg := strings.TrimSpace(s.Error.String + ": " + s.Error.Message)
		if len(msg) > 256 || !utf8.ValidString(msg) {
			msg = fmt.Sprintf("error %d", *s.Error.Code)
		}
		errs := []apiError{{Number: int(*s.Error.Code), Error: strings.Trim(msg, ": ")}}
		return fmt.Errorf("%s: %w", op, classify("DELETE "+path, res.status, errs, nil, nil, ""))
	}
	return nil
}

// knownSignal reports whether s is one of jobword.Signals.
func knownSignal(s string) bool { return slices.Contains(jobword.Signals, s) }
