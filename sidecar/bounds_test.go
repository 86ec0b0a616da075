package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// slowSlurm answers every update after delay (a slurmrestd at its limit).
type slowSlurm struct {
	*sidecartest.Fake
	delay time.Duration
}

func (s slowSlurm) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return fmt.Errorf("slow: %w", ctx.Err())
	}
	return s.Fake.UpdateJob(ctx, id, u)
}

// TestCycleDeadline: with a slurmrestd taking 10 s an update, a cycle's
// writes end at its deadline (a minute at a 30 s interval); what was
// written is kept and saved, the cycle counts as done, and the rest goes
// out in the next cycles.
func TestCycleDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, 2, 4, true, nil)
		for i := range 12 {
			h.fake.Submit(pend(fmt.Sprint(i+1), "week", 1, time.Now()))
		}
		s, err := New(h.cfg, Options{Cluster: cluster.Uniform(2, 4), Slurm: slowSlurm{h.fake, 10 * time.Second},
			Predictor: h.pred, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		rep, err := s.RunOnce(context.Background(), start)
		if err != nil {
			t.Fatalf("cycle ended by its deadline failed: %v", err)
		}
		took := time.Since(start)
		n := len(h.fake.Writes())
		if !rep.DeadlineHit || took > s.cycleDeadline()+time.Second || n == 0 || n >= 12 {
			t.Errorf("deadline hit %v after %v with %d of 12 writes", rep.DeadlineHit, took, n)
		}
		if testutil.ToFloat64(s.m.deadlines) != 1 || testutil.ToFloat64(s.m.cycles.WithLabelValues("ok")) != 1 {
			t.Errorf("deadline metric %v, ok cycles %v", testutil.ToFloat64(s.m.deadlines), testutil.ToFloat64(s.m.cycles.WithLabelValues("ok")))
		}
		st, err := readState(h.cfg.StateFile)
		if err != nil {
			t.Fatal(err)
		}
		saved := 0
		for _, j := range st.Jobs {
			if j.Priority != 0 {
				saved++
			}
		}
		if saved != n {
			t.Errorf("%d priorities saved, %d written", saved, n)
		}
		for i := 0; len(h.fake.Writes()) < 12 && i < 5; i++ {
			if _, err := s.RunOnce(context.Background(), time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(h.fake.Writes()); n != 12 {
			t.Errorf("%d of 12 written after five more cycles", n)
		}
	})
}

// dupSlurm lists its first job twice.
type dupSlurm struct{ *sidecartest.Fake }

func (d dupSlurm) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	js, err := d.Fake.Jobs(ctx)
	if err == nil && len(js) > 0 {
		js = append([]slurmclient.Job{js[0]}, js...)
	}
	return js, err
}

// TestDuplicateJobCountedOnce: a job listed twice is one job.
func TestDuplicateJobCountedOnce(t *testing.T) {
	h := newHarness(t, 2, 4, true, nil)
	h.fake.Submit(pend("1", "week", 1, t0))
	h.fake.Submit(pend("2", "week", 1, t0))
	s, err := New(h.cfg, Options{Cluster: cluster.Uniform(2, 4), Slurm: dupSlurm{h.fake}, Predictor: h.pred, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Jobs["pending"] != 2 || rep.Jobs["managed"] != 2 || rep.Arrived != 2 {
		t.Errorf("jobs %v, arrived %d; want 2 pending, 2 managed, 2 arrivals", rep.Jobs, rep.Arrived)
	}
}

// TestUnknownPriorityNotHandsOff: a response without a priority for a job
// that is not held (0) does not make asrpt give the job up.
func TestUnknownPriorityNotHandsOff(t *testing.T) {
	h := newHarness(t, 2, 4, true, nil)
	h.fake.Submit(pend("1", "week", 1, t0))
	h.cycle(t0)
	h.fake.Edit("1", func(j *slurmclient.Job) { j.Priority = 0 })
	rep := h.cycle(t0.Add(time.Minute))
	if e := h.s.state.Entries["1"]; e.HandsOff || rep.Jobs["hands_off"] != 0 {
		t.Errorf("job marked hands-off after a priority of 0: %+v", rep.Jobs)
	}
	h.fake.Edit("1", func(j *slurmclient.Job) { j.Priority = 77 })
	if rep := h.cycle(t0.Add(2 * time.Minute)); rep.Jobs["hands_off"] != 1 {
		t.Errorf("an admin's priority 77 not respected: %+v", rep.Jobs)
	}
}

// TestDryRunLogsSummary: a dry run logs one line a cycle at info level, and
// the plan's rows only at debug level.
func TestDryRunLogsSummary(t *testing.T) {
	for _, lvl := range []zerolog.Level{zerolog.InfoLevel, zerolog.DebugLevel} {
		t.Run(lvl.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				logs := &syncBuffer{}
				h := newHarness(t, 2, 4, true, func(c *Config) { c.DryRun = true })
				h.s.log = zerolog.New(logs).Level(lvl)
				for i := range 50 {
					h.fake.Submit(pend(fmt.Sprint(i+1), "week", 1, time.Now()))
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- h.s.Run(ctx) }()
				time.Sleep(2*h.cfg.Interval + time.Second) // three cycles
				synctest.Wait()
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				cycles, rows := strings.Count(logs.String(), `"message":"cycle"`), strings.Count(logs.String(), `"message":"plan"`)
				wantRows := 0
				if lvl == zerolog.DebugLevel {
					wantRows = 3 * 50
				}
				if cycles != 3 || rows != wantRows {
					t.Errorf("%d cycle lines, %d plan rows; want 3 and %d", cycles, rows, wantRows)
				}
			})
		})
	}
}

// TestStateSaveFailureNamed: a state file that cannot be written is
// reported as such, not as a Slurm call failure.
func TestStateSaveFailureNamed(t *testing.T) {
	logs := &syncBuffer{}
	h := newHarness(t, 2, 4, true, func(c *Config) {
		c.StateFile = filepath.Join(t.TempDir(), "gone", "state.json")
	})
	h.s.log = zerolog.New(logs)
	h.fake.Submit(pend("1", "week", 1, t0))
	h.cycle(t0)
	if _, err := os.Stat(h.cfg.StateFile); err == nil {
		t.Fatal("state written into a directory that does not exist")
	}
	if !strings.Contains(logs.String(), "state file could not be saved") || strings.Contains(logs.String(), "slurm call failed") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestURLCredentialsAndClearText: credentials in the URL are refused (and
// never shown); a token sent over http:// to another host is warned about.
func TestURLCredentialsAndClearText(t *testing.T) {
	_, err := ParseConfig([]byte("[slurm]\nurl = \"http://user:secret@ctl:6820\"\ntoken_file = \"/t\"\n"), "asrpt.toml")
	if err == nil || !strings.Contains(err.Error(), "slurm.url") || strings.Contains(err.Error(), "secret") {
		t.Errorf("credentials in the URL: %v", err)
	}
	for _, c := range []struct {
		url  string
		warn bool
	}{
		{"http://ctl.example.org:6820", true},
		{"http://10.1.2.3:6820", true},
		{"http://127.0.0.1:6820", false},
		{"http://[::1]:6820", false},
		{"http://localhost:6820", false},
		{"https://ctl.example.org:6820", false},
		{"unix:///run/slurmrestd.sock", false},
	} {
		cfg := DefaultConfig()
		cfg.Slurm.URL = c.url
		if w := cfg.Warnings(); (len(w) > 0) != c.warn {
			t.Errorf("%s: warnings %v", c.url, w)
		}
	}
}

// TestCheckFilesTokenFile: --check refuses a token file the client would
// refuse (here a device and a file every user may read).
func TestCheckFilesTokenFile(t *testing.T) {
	dir := t.TempDir()
	world := filepath.Join(dir, "world.jwt")
	if err := os.WriteFile(world, []byte("a.b.c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(world, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{{"/dev/zero", "not a regular file"}, {world, "every user"}} {
		cfg := DefaultConfig()
		cfg.Slurm.URL, cfg.Slurm.TokenFile, cfg.Slurm.ConfDir = "http://127.0.0.1:1", c.path, dir
		cfg.StateFile = filepath.Join(dir, "state.json")
		var got []string
		for _, p := range cfg.CheckFiles("f.toml") {
			if p.Key == "slurm.token_file" {
				got = append(got, p.Msg)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: problems %v, want one saying %q", c.path, got, c.want)
		}
	}
}

// TestConfigNestingBounded: a configuration nested 10,000 levels deep is
// refused before decoding, at once, naming the line.
func TestConfigNestingBounded(t *testing.T) {
	in := "[slurm]\nurl = \"unix:///s\"\na = " + strings.Repeat("{b=", 10000) + "1" + strings.Repeat("}", 10000) + "\n"
	start := time.Now()
	_, err := ParseConfig([]byte(in), "deep.toml")
	if err == nil || !strings.Contains(err.Error(), "deep.toml:3") || !strings.Contains(err.Error(), "nested") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

// TestConfigParamsSameRangesAsReplay: the policy tunables are checked by
// policy.Params.Validate, as the replay's flags are.
func TestConfigParamsSameRangesAsReplay(t *testing.T) {
	for _, c := range []struct{ line, key string }{
		{"tau = nan", "policy.tau"},
		{"tau = 2000.0", "policy.tau"},
		{"slack = -1.0", "policy.slack"},
		{"comm_heavy = 0.1", "policy.comm_heavy"},
		{"depth = -7", "policy.depth"},
	} {
		_, err := ParseConfig([]byte("[slurm]\nurl = \"unix:///s\"\n[policy]\n"+c.line+"\n"), "asrpt.toml")
		if err == nil || !strings.Contains(err.Error(), "asrpt.toml:4") || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v", c.line, err)
		}
	}
}

// TestReadStateNotRegular: a state file that is a FIFO or a device is
// refused as corrupt at once, without blocking or reading for ever.
func TestReadStateNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "state.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/zero"} {
		if _, err := readState(p); !errors.Is(err, ErrCorruptState) {
			t.Errorf("%s: %v, want ErrCorruptState", p, err)
		}
	}
}

// TestListenWarning: a metrics.listen address other hosts can reach is
// warned about (issue 25: listen = "0.0.0.0:…" was accepted without a
// word); a loopback one is not.
func TestListenWarning(t *testing.T) {
	for _, c := range []struct {
		listen string
		warn   bool
	}{
		{"0.0.0.0:9870", true},
		{":9870", true},
		{"[::]:9870", true},
		{"10.0.0.5:9870", true},
		{"127.0.0.1:9870", false},
		{"[::1]:9870", false},
		{"localhost:9870", false},
		{"", false},
	} {
		cfg := DefaultConfig()
		cfg.Slurm.URL = "unix:///run/slurmrestd.sock"
		cfg.MetricsListen = c.listen
		w := cfg.Warnings()
		if (len(w) > 0) != c.warn || c.warn && !strings.Contains(w[0], "metrics.listen: "+c.listen) {
			t.Errorf("%q: warnings %v", c.listen, w)
		}
	}
}
