package slurmclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// getJobs is GET path for a job list of records R, read record by record
// (streamJobs) rather than decoded into the version's whole response:
// a list of any length costs its body and the jobs kept, not a generated
// struct per field of every record besides, and a record whose value does
// not fit its type (an array_task_id of 4e9 where an integer is due) fails
// only itself. keep drops the records that are neither pending nor running
// before conversion (v0.0.38's converter refuses some finished records) and
// those among the records that did not decode; id names the latter.
func getJobs[R any](ctx context.Context, r *rest, path string, keep func(*R) bool, conv func(*budget, R) (Job, error), id func(*R) string) ([]Job, error) {
	op := "GET " + path
	res, err := r.t.do(ctx, "GET", path, nil, nil)
	if err != nil {
		return nil, err
	}
	if res.status < 200 || res.status >= 300 {
		// An error answer is small: read as every other answer.
		return nil, answer(op, res, nil)
	}
	l := newJobList(op)
	env, err := streamJobs(res.body, func(dec *json.Decoder) error {
		var rec R
		derr := dec.Decode(&rec)
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(derr, &te):
			// The decoder has read the whole record (the fields it could
			// decode are set): skip it alone, unless it is done with.
			if keep != nil && !keep(&rec) {
				return nil
			}
			return l.add(Job{ID: id(&rec)}, fmt.Errorf("job %s: %w: %w", id(&rec), ErrBadResponse, derr))
		case derr != nil:
			return badResponse(op, derr)
		case keep != nil && !keep(&rec):
			return nil
		}
		return l.add(conv(l.b, rec))
	})
	if err != nil {
		var bad *RecordErrors
		if errors.As(err, &bad) || errors.Is(err, ErrBadResponse) || errors.Is(err, errTooManyNames) {
			return nil, err
		}
		return nil, badResponse(op, err)
	}
	if err := classify(op, res.status, env.Errors, env.Warnings, nil, ""); err != nil {
		return nil, err
	}
	return l.result()
}

// streamJobs walks the JSON object body: each element of its top-level
// "jobs" array is handed to rec, which must decode exactly one value from
// dec; "errors" and "warnings" are decoded into the returned envelope;
// every other key is skipped. It fails on a body that is not one JSON
// object, and with rec's first error.
func streamJobs(body []byte, rec func(dec *json.Decoder) error) (envelope, error) {
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := expectDelim(dec, '{'); err != nil {
		return env, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return env, err
		}
		key, ok := t.(string)
		if !ok {
			return env, fmt.Errorf("object key %v is not a string", t)
		}
		switch key {
		case "jobs":
			// null stands for no jobs.
			if t, err := dec.Token(); err != nil {
				return env, err
			} else if t == nil {
				continue
			} else if d, ok := t.(json.Delim); !ok || d != '[' {
				return env, fmt.Errorf("jobs is %v, not an array", t)
			}
			for dec.More() {
				if err := rec(dec); err != nil {
					return env, err
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return env, err
			}
		case "errors":
			if err := dec.Decode(&env.Errors); err != nil {
				return env, err
			}
		case "warnings":
			if err := dec.Decode(&env.Warnings); err != nil {
				return env, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return env, err
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return env, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return env, errors.New("data after the response object")
	}
	return env, nil
}

// expectDelim reads the next token and fails unless it is d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if got, ok := t.(json.Delim); !ok || got != d {
		return fmt.Errorf("want %q, got %v", d, t)
	}
	return nil
}

// idOf is a decoded record's job id, "" when it has none.
func idOf[T ~int | ~int32 | ~int64](p *T) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

// activeOrUnknown reports whether a record's state array says pending or
// running, or says nothing asrpt can read.
func activeOrUnknown(states []string) bool {
	st, _ := splitState(states, baseJobStates)
	return st == "UNKNOWN" || active(st)
}
