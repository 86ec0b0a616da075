package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// syncBuffer is a log sink safe for the sidecar goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRun drives Run on the fake clock: cycles every interval, a Slurm
// outage of several calls is logged once, retried with backoff and
// recovered from within a cycle, and shutdown hands the jobs back and
// saves the state.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &syncBuffer{}
		h := newHarness(t, 2, 4, true, func(c *Config) {
			c.Interval = 30 * time.Second
			c.GivebackOnShutdown = true
		})
		h.s.log = zerolog.New(logs)
		for i := range 3 {
			h.fake.Submit(pend(fmt.Sprint(i+1), "week", 1, time.Now()))
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- h.s.Run(ctx) }()

		synctest.Wait() // the first cycle runs at once
		if n := len(h.fake.Writes()); n != 3 {
			t.Fatalf("first cycle: %d writes, want 3", n)
		}
		// slurmrestd goes away for 5 calls.
		var mu sync.Mutex
		fails := 5
		var lastFail, recovered time.Time
		h.fake.SetInterceptor(func(c sidecartest.Call) error {
			mu.Lock()
			defer mu.Unlock()
			if c.Method != "Jobs" {
				return nil
			}
			if fails > 0 {
				fails--
				lastFail = time.Now()
				return fmt.Errorf("fake: %w: connection refused", slurmclient.ErrServer)
			}
			if recovered.IsZero() {
				recovered = time.Now()
			}
			return nil
		})
		h.fake.Submit(pend("4", "week", 1, time.Now()))
		// 30 s to the next cycle, then retries after 1, 2, 4, 8 and 16 s.
		for h.fake.Calls("Jobs") < 7 {
			time.Sleep(time.Second)
			synctest.Wait()
		}
		mu.Lock()
		gap := recovered.Sub(lastFail)
		mu.Unlock()
		if gap > h.cfg.Interval {
			t.Errorf("first successful cycle %v after the outage ended, want within an interval", gap)
		}
		if writesTo(h.fake.Writes(), "4") != 1 {
			t.Errorf("job submitted during the outage not written: %v", h.fake.Writes())
		}
		if n := strings.Count(logs.String(), "cycle failed"); n != 1 {
			t.Errorf("outage logged %d times, want once:\n%s", n, logs.String())
		}
		if !strings.Contains(logs.String(), "cycles recovered") || !strings.Contains(logs.String(), `"failed_cycles":5`) {
			t.Errorf("recovery not logged with its 5 failed cycles:\n%s", logs.String())
		}
		// Ten quiet minutes: one cycle per interval, no writes.
		h.fake.ResetWrites()
		before := h.fake.Calls("Jobs")
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if n := h.fake.Calls("Jobs") - before; n < 19 || n > 21 {
			t.Errorf("%d cycles in 10 minutes at a 30 s interval", n)
		}
		if len(h.fake.Writes()) != 0 {
			t.Errorf("quiet queue written: %v", h.fake.Writes())
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		for _, id := range []string{"1", "2", "3", "4"} {
			if j, _ := h.fake.Job(id); j.Priority != 1000 || j.Held {
				t.Errorf("job %s after shutdown: priority %d held %v", id, j.Priority, j.Held)
			}
		}
		st, err := readState(h.cfg.StateFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range st.Jobs {
			if j.Priority != 0 {
				t.Errorf("job %s: saved priority %d after giveback", j.Job.ID, j.Priority)
			}
		}
	})
}
