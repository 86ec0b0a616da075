package slurmclient

import (
	"errors"
	"strings"
	"testing"
)

// setJobState sets the simulated job's state in its release's shape (a
// string on v0.0.38, an array after).
func (s *jobSim) setJobState(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.api == "v0.0.38" {
		s.job["job_state"] = state
	} else {
		s.job["job_state"] = []any{state}
	}
}

// deletes returns the DELETE requests the fake received, with their query.
func (f *fakeRest) deletes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, l := range f.log {
		if strings.HasPrefix(l, "DELETE") {
			out = append(out, l)
		}
	}
	return out
}

func TestSignalJob(t *testing.T) {
	ok := `{"errors":[],"warnings":[],"status":[]}`
	for _, r := range releases {
		p, _ := prefixes(r.api)
		flags := r.api != "v0.0.38"
		for _, tc := range []struct {
			name     string
			state    string
			het      bool
			signal   string
			delivery Delivery
			status   int    // the DELETE's answer
			body     string // the DELETE's answer
			sent     string // the DELETE's query, "" when nothing may be sent
			want     error
		}{
			{"to the steps", "RUNNING", false, "USR1", DeliverSteps, 200, ok,
				map[bool]string{true: "flags=FULL_STEPS_ONLY&signal=SIGUSR1"}[flags], map[bool]error{false: ErrUnsupported}[flags]},
			{"to the batch shell", "RUNNING", false, "USR2", DeliverBatch, 200, ok,
				map[bool]string{true: "flags=BATCH_JOB&signal=SIGUSR2"}[flags], map[bool]error{false: ErrUnsupported}[flags]},
			{"to the whole job", "RUNNING", false, "TERM", DeliverAll, 200, ok,
				map[bool]string{true: "flags=FULL_JOB&signal=SIGTERM", false: "signal=SIGTERM"}[flags], nil},
			{"a signal off the list", "RUNNING", false, "KILL", DeliverAll, 200, ok, "", ErrInvalid},
			{"a number", "RUNNING", false, "9", DeliverAll, 200, ok, "", ErrInvalid},
			{"the SIG prefix is ours to add", "RUNNING", false, "SIGUSR1", DeliverAll, 200, ok, "", ErrInvalid},
			{"no delivery", "RUNNING", false, "USR1", 0, 200, ok, "", ErrInvalid},
			{"a pending job", "PENDING", false, "USR1", DeliverAll, 200, ok, "", ErrNotPending},
			{"a heterogeneous job", "RUNNING", true, "USR1", DeliverAll, 200, ok, "", ErrInvalid},
			{"refused in status[] with HTTP 200", "RUNNING", false, "USR1", DeliverAll, 200,
				`{"errors":[],"warnings":[],"status":[{"error":{"code":2020,"message":"Job/step already completing or completed","string":"x"},"step_id":"","job_id":{"set":true,"number":1}}]}`,
				map[bool]string{true: "flags=FULL_JOB&signal=SIGUSR1", false: "signal=SIGUSR1"}[flags], ErrNotPending},
			{"refused with HTTP 500", "RUNNING", false, "USR1", DeliverAll, 500,
				`{"errors":[{"error_number":2017,"error":"Invalid job id specified"}]}`,
				map[bool]string{true: "flags=FULL_JOB&signal=SIGUSR1", false: "signal=SIGUSR1"}[flags], ErrJobGone},
		} {
			t.Run(r.rel+"/"+tc.name, func(t *testing.T) {
				f, s, c, id := simClient(t, r.rel, r.api)
				s.setJobState(tc.state)
				if tc.het {
					s.job["het_job_id"] = map[bool]any{true: map[string]any{"set": true, "number": 7}, false: 7}[flags]
					s.job["het_job_offset"] = map[bool]any{true: map[string]any{"set": true, "number": 1}, false: 1}[flags]
					s.job["het_job_id_set"] = "7-8"
				}
				f.set("DELETE", p+"/job/"+id, tc.status, []byte(tc.body))
				if got := c.SupportsDelivery(DeliverSteps); got != flags {
					t.Errorf("SupportsDelivery(steps) = %v on %s", got, r.api)
				}
				err := c.SignalJob(ctxT(t), id, tc.signal, tc.delivery)
				if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
					t.Fatalf("err %v, want %v", err, tc.want)
				}
				if tc.het && !strings.Contains(err.Error(), "heterogeneous") {
					t.Errorf("err %v: not refused for being heterogeneous", err)
				}
				var want []string
				if tc.sent != "" {
					want = []string{"DELETE " + p + "/job/" + id + "?" + tc.sent}
				}
				if got := f.deletes(); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("sent %q, want %q", got, want)
				}
			})
		}
	}
}
