package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// FuzzReadState feeds arbitrary state files to readState and to a sidecar
// starting from them. A file is either refused as corrupt or reads back to
// the same state after writeState; a sidecar starts whatever the file
// holds, counts a refused file as one state error, restores an accepted
// one with exactly its jobs, and runs a cycle on it.
func FuzzReadState(f *testing.F) {
	// A real state file: jobs queued, dispatched and running.
	h := newHarness(f, 2, 4, false, nil)
	for i := range 6 {
		h.fake.Submit(pend(fmt.Sprint(i+1), []string{"short", "mid", "long"}[i%3], 1+i%4, t0))
	}
	h.cycle(t0.Add(time.Minute))
	real, err := os.ReadFile(h.cfg.StateFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(real)
	f.Add([]byte(`{"version":2,"policy":"asrpt","next_seq":1,"jobs":[{"job":{"ID":"1"},"phase":"queued","remaining_s":-1}]}`))
	f.Add([]byte(`{"version":2,"policy":"asrpt","next_seq":3,"jobs":[{"job":{"ID":"1"},"seq":1,"phase":"dispatched","placement":[{"node":"node1","gpus":255}]},{"job":{"ID":"2"},"seq":2,"phase":"queued","order":1e9}]}`))
	f.Add([]byte(`{"version":2,"policy":"asrpt","next_seq":2,"jobs":[{"job":{"ID":"1"},"seq":1,"phase":"stopping","stop":"F:USR1@30","stop_from":"comment","preemptions":1,"signalled_at":5,"signal_sent":true}]}`))
	f.Add([]byte(`{"version":2,"policy":"asrpt","next_seq":2,"jobs":[{"job":{"ID":"1"},"seq":1,"phase":"stopping","stop":"KILL@0","stop_from":"comment","preemptions":-1}]}`))
	f.Add([]byte(`{"version":2,"policy":"fifo"}`))
	f.Add([]byte("{not json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() {
			dir := t.TempDir()
			p := filepath.Join(dir, "state.json")
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := readState(p)
			if err != nil {
				if !errors.Is(err, ErrCorruptState) || st != nil {
					t.Fatalf("readState: %v, %v; want a corrupt-state error", st, err)
				}
			} else {
				if st.Version != decision.StateVersion {
					t.Fatalf("accepted version %d", st.Version)
				}
				p2 := filepath.Join(dir, "again.json")
				if err := writeState(p2, st); err != nil {
					t.Fatal(err)
				}
				st2, err := readState(p2)
				if err != nil {
					t.Fatalf("written state unreadable: %v", err)
				}
				a, _ := json.Marshal(st)
				b, _ := json.Marshal(st2)
				if !bytes.Equal(a, b) {
					t.Fatalf("round trip:\n%s\n%s", a, b)
				}
			}

			h := newHarness(t, 2, 4, false, nil)
			if err := os.WriteFile(h.cfg.StateFile, data, 0o600); err != nil {
				t.Fatal(err)
			}
			s := h.newSidecar()
			stateErrs := testutil.ToFloat64(s.m.stateErrors)
			switch {
			case err != nil && stateErrs != 1:
				t.Fatalf("corrupt file (%v): %v state errors, want 1", err, stateErrs)
			case stateErrs == 0:
				var want, got []string
				for _, j := range st.Jobs {
					want = append(want, j.Job.ID)
				}
				for _, j := range s.state.ToSave().Jobs {
					got = append(got, j.Job.ID)
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(want, got) {
					t.Fatalf("restored jobs %v, state file has %v", got, want)
				}
			}
			h.s = s
			h.fake.Submit(pend("900", "mid", 1, t0))
			h.cycle(t0.Add(time.Hour))
		})
	})
}
