package slurmclient

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; every error returned by this package wraps at most one of
// them, tested with errors.Is.
var (
	// ErrAuth: the token is missing, bad, expired or does not match the user
	// (401, 511; 500 "Unspecified error"/1007 from a load call in 22.05).
	ErrAuth = errors.New("slurm: authentication failed")
	// ErrPermission: Slurm refused for lack of privilege (2002 access
	// denied, 2010 invalid user id = another user's job).
	ErrPermission = errors.New("slurm: permission denied")
	// ErrJobGone: Slurm does not know the job (2017, or 404 on a job path),
	// or the job has already finished (2084, a write racing its end).
	ErrJobGone = errors.New("slurm: job not found")
	// ErrNotPersistent: 2095, an owner lowered their own priority; Slurm
	// applied it but says it will not persist (use nice instead).
	ErrNotPersistent = errors.New("slurm: priority change not persistent")
	// ErrHeld: 2042, the job is held and must be released first.
	ErrHeld = errors.New("slurm: job is held")
	// ErrNotPending: the job is no longer pending (2018 on a running job's
	// node list, 2073 on its GPUs, 2085 not running).
	ErrNotPending = errors.New("slurm: job state does not allow this")
	// ErrInvalid: a value asrpt was about to send failed validation, or
	// Slurm rejected it (2018 invalid node name, 2115/2119 invalid GRES,
	// 9000–9202 parse errors, 400).
	ErrInvalid = errors.New("slurm: invalid value")
	// ErrIgnoredField: Slurm answered 200 but ignored or refused a key asrpt
	// sent (22.05: errors[] on 200 to an update; 24.11+: a warning naming
	// the key). A read answered 200 with errors[] is classified by the
	// error's number, else ErrServer: it sent no key.
	ErrIgnoredField = errors.New("slurm: request field not applied")
	// ErrNotApplied: Slurm reported success but re-reading the job shows
	// the change is not (or no longer) in effect.
	ErrNotApplied = errors.New("slurm: change not in effect after update")
	// ErrAppliedDespiteError: Slurm answered the update with an error, but
	// re-reading the job shows the value in effect (22.05 on an array's
	// pending tasks). The value is applied; do not send it again.
	ErrAppliedDespiteError = errors.New("slurm: change in effect although the update was refused")
	// ErrUnsupported: the operation or API version is not available on
	// this slurmrestd (404 on an endpoint), or the API version cannot write
	// a field asked for (a site factor through v0.0.38: refused before
	// anything is sent).
	ErrUnsupported = errors.New("slurm: not supported by this slurmrestd")
	// ErrBadResponse: the body is not what the API version defines
	// (truncated, not JSON, wrong types, too large).
	ErrBadResponse = errors.New("slurm: malformed response")
	// ErrServer: any other refusal or server failure.
	ErrServer = errors.New("slurm: request failed")
)

// APIError is a refusal by slurmrestd or slurmctld. It wraps one sentinel.
type APIError struct {
	// Op is the request, e.g. "POST /slurm/v0.0.42/job/17".
	Op string
	// Status is the HTTP status.
	Status int
	// Number is the first Slurm error number (errno), 0 if none.
	Number int
	// Message is Slurm's error text and description, or the plain-text body.
	Message string
	kind    error
}

func (e *APIError) Error() string {
	if e.Number != 0 {
		return fmt.Sprintf("%s: HTTP %d: slurm error %d: %s", e.Op, e.Status, e.Number, e.Message)
	}
	return fmt.Sprintf("%s: HTTP %d: %s", e.Op, e.Status, e.Message)
}

// Unwrap returns the sentinel this error is an instance of.
func (e *APIError) Unwrap() error { return e.kind }

// apiError is one element of errors[] in any API version (22.05 sometimes
// says error_code instead of error_number).
type apiError struct {
	Description string `json:"description"`
	Number      int    `json:"error_number"`
	Code        int    `json:"error_code"`
	Error       string `json:"error"`
	Source      string `json:"source"`
}

// apiWarning is one element of warnings[] (v0.0.40+).
type apiWarning struct {
	Description string `json:"description"`
	Source      string `json:"source"`
}

// classify is the one place that turns an HTTP status and Slurm's errors[]
// and warnings[] into a typed error; nil means success. sent lists the
// request body's top-level keys, so that a warning naming one of them fails
// the call. plain is a non-JSON body (401, 400 "Unable to parse query.").
// op starts with the method: a 200 with errors[] is ErrIgnoredField for
// an update only (22.05's refused key); for a GET or a DELETE (a signal),
// which send no key, it is the error number's kind, else ErrServer.
func classify(op string, status int, errs []apiError, warns []apiWarning, sent []string, plain string) error {
	e := &APIError{Op: op, Status: status}
	read := strings.HasPrefix(op, "GET ") || strings.HasPrefix(op, "DELETE ")
	for _, x := range errs {
		n := x.Number
		if n == 0 {
			n = x.Code
		}
		if e.Number == 0 && n != 0 && n != -1 && n != 1 && n < 9000 {
			e.Number = n
		}
		msg := strings.TrimSpace(x.Error + ": " + x.Description)
		if e.Message != "" {
			e.Message += "; "
		}
		e.Message += strings.Trim(msg, ": ")
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(plain)
	}
	if len(e.Message) > 512 {
		e.Message = e.Message[:512] + "…"
	}
	if e.Number == 0 {
		for _, x := range errs {
			if n := x.Number + x.Code; n != 0 {
				e.Number = n
				break
			}
		}
	}
	switch {
	case status == 401 || status == 403 || status == 511:
		e.kind = ErrAuth
		return e
	case status >= 200 && status < 300 && len(errs) == 0:
		for _, w := range warns {
			if k := warnedKey(w, sent); k != "" {
				e.Message = fmt.Sprintf("key %q: %s", k, w.Description)
				e.kind = ErrIgnoredField
				return e
			}
		}
		return nil
	}
	switch e.Number {
	case 1007:
		e.kind = ErrAuth
	case 2002, 2010:
		e.kind = ErrPermission
	case 2017, 2084:
		e.kind = ErrJobGone
	case 2095:
		e.kind = ErrNotPersistent
	case 2042:
		e.kind = ErrHeld
	case 2073, 2085, 2020:
		e.kind = ErrNotPending
	case 2018, 2115, 2119, 2127, 2019, 2166, 9000, 9001, 9202:
		e.kind = ErrInvalid
	}
	if e.kind != nil {
		if status >= 200 && status < 300 && !read {
			// 22.05: a refused key comes back as 200 with errors[].
			e.kind = ErrIgnoredField
		}
		return e
	}
	switch {
	case status >= 200 && status < 300 && read:
		e.kind = ErrServer
	case status >= 200 && status < 300:
		e.kind = ErrIgnoredField
	case status == 404 && len(errs) == 0:
		e.kind = ErrUnsupported
	case status == 404:
		e.kind = ErrJobGone
	case status == 400 || status == 422:
		e.kind = ErrInvalid
	case status == 500 && authFailure22(errs):
		e.kind = ErrAuth
	default:
		e.kind = ErrServer
	}
	return e
}

// authFailure22 recognises 22.05's answer to a bad, expired or mismatched
// token: HTTP 500 with a lone "Unspecified error" from a slurm_load_* call.
func authFailure22(errs []apiError) bool {
	return len(errs) == 1 && errs[0].Error == "Unspecified error" &&
		strings.HasPrefix(errs[0].Source, "slurm_load_")
}

// warnedKey returns the key of sent that warning w is about, or "".
// Warnings name the key in source ("#/no_such_key/") or, quoted, in the
// description.
func warnedKey(w apiWarning, sent []string) string {
	for _, k := range sent {
		if strings.HasPrefix(w.Source, "#/"+k+"/") || w.Source == "#/"+k ||
			strings.Contains(w.Description, `"`+k+`"`) {
			return k
		}
	}
	return ""
}

// nothingFound reports whether err is slurmdbd's answer to a query that
// matched no record: Slurm 22.05's dbv0.0.38 says HTTP 200 with the single
// error 9003 "Nothing found" (source slurmdb_jobs_get) rather than an empty
// list. v0.0.40+ answer 200 with an empty list and a warning "…found
// nothing", which classify already accepts. Callers listing records treat
// it as zero records; anywhere else it stays an error.
func nothingFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == 200 && e.Number == errNothingFound
}

// errNothingFound is Slurm's ESLURM_REST_EMPTY_RESULT.
const errNothingFound = 9003

// badResponse wraps a decoding failure as ErrBadResponse.
func badResponse(op string, err error) error {
	return fmt.Errorf("%s: %w: %w", op, ErrBadResponse, err)
}
