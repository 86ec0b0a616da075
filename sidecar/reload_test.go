package sidecar

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/jobprofile"
)

func TestReloadAppliesWhatItCan(t *testing.T) {
	h := newHarness(t, 1, 4, false, nil)
	cfg := h.cfg
	cfg.Interval = 7 * time.Second
	cfg.WriteLimit = 5
	cfg.LogLevel = "debug"
	cfg.Scope.Partitions = []string{"gpu", "urgent"}
	cfg.Profiles.Rules = []jobprofile.Rule{{Account: "a", Model: "vgg16"}}
	cfg.Slurm.URL = "unix:///other.sock"
	cfg.Policy = "fifo"
	applied, restart := h.s.reload(cfg)
	for _, k := range []string{"sidecar.interval", "sidecar.write_limit", "log.level", "scope", "profiles"} {
		if !slices.Contains(applied, k) {
			t.Errorf("%s not applied: %v", k, applied)
		}
	}
	if !slices.Equal(restart, []string{"slurm", "policy"}) {
		t.Errorf("need restart: %v, want [slurm policy]", restart)
	}
	if h.s.cfg.Interval != 7*time.Second || h.s.cfg.WriteLimit != 5 || h.s.cfg.Slurm.URL == cfg.Slurm.URL || h.s.cfg.Policy != "asrpt" {
		t.Errorf("running configuration after reload: %+v", h.s.cfg)
	}
	// The new rules reach jobs that arrive from now on.
	h.fake.Submit(pend("1", "mid", 4, t0))
	if r := planRow(t, h.plan(t0), "1"); r.Profile != "vgg16" || r.ProfileSource != "rule" {
		t.Errorf("job after the reload: %+v", r)
	}
}

// TestRunReloads: Run applies a reload between cycles and refuses one with
// problems, counting both.
func TestRunReloads(t *testing.T) {
	h := newHarness(t, 1, 4, false, nil)
	ch := make(chan Reload)
	h.s.reloads = ch
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.s.Run(ctx) }()
	good := h.cfg
	good.WriteLimit = 3
	ch <- Reload{Path: "asrpt.toml", Config: good}
	ch <- Reload{Path: "asrpt.toml", Err: errors.New("asrpt.toml:3: sidecar.interval: must be positive")}
	ch <- Reload{Path: "asrpt.toml", Config: good} // Run has taken the first two when this is received
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ok, refused := testutil.ToFloat64(h.s.m.reloads.WithLabelValues("ok")), testutil.ToFloat64(h.s.m.reloads.WithLabelValues("refused")); ok != 2 || refused != 1 {
		t.Errorf("reloads ok %v refused %v, want 2 and 1", ok, refused)
	}
	if h.s.cfg.WriteLimit != 3 {
		t.Errorf("write limit %d after the reload", h.s.cfg.WriteLimit)
	}
}
