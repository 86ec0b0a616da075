// Package loop is the closed-loop replay: the sidecar's own code (package
// sidecar: read, decide, apply, every write rule) polls the replay's
// multifactor model of slurmctld every sidecar interval and writes site
// factors (or priorities) and node lists into it, and the model starts the
// jobs by the priorities it then holds (policies asrpt-sidecar and
// asrpt-sidecar-priority). What the replay of those policies measures is
// therefore what a site that runs the sidecar beside priority/multifactor
// would see, up to the model's fidelity (policy.Queue): no REST round trip,
// no slurmdbd lag beyond the sidecar's own, writes applied at once.
//
// The model's queue is shown to the sidecar through Slurm, an
// implementation of sidecar.Slurm, as slurmrestd would show it: each job's
// record (slurmclient.Job) with the priority slurmctld computes, the nodes
// with the GPUs in use, and accounting's records of the jobs that ended.
package loop

import (
	"context"
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/internal/tomlbound"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/report"
	"github.com/asrpt/asrpt/sidecar"
)

// Mode returns the sidecar's write mode for closed-loop policy base
// (policy.Sidecar): factor for asrpt-sidecar, priority for
// asrpt-sidecar-priority.
func Mode(base string) sidecar.WriteMode {
	if base == "asrpt-sidecar-priority" {
		return sidecar.WritePriority
	}
	return sidecar.WriteFactor
}

// Config returns the sidecar configuration the closed loop runs for write
// mode mode on env: the sidecar's defaults with no state file, no metrics
// server and no accounting history before the replay (it learns as the
// replay's jobs end), the replay's policy tunables (in factor mode with
// the site's factor-mode bounds, as asrpt-factor) and site-factor range.
func Config(env *policy.Env, mode sidecar.WriteMode) sidecar.Config {
	cfg := sidecar.DefaultConfig()
	cfg.StateFile, cfg.MetricsListen, cfg.History = "", "", 0
	cfg.WriteMode = mode
	site := env.Site
	if site == nil {
		site = policy.ExampleSite()
	}
	cfg.Params = env.Params
	if mode == sidecar.WriteFactor {
		cfg.Params.WaitScale, cfg.Params.OverdueShare = site.WaitScale, site.OverdueShare
		cfg.Params.AccountGuard, cfg.Params.ShadowWait = site.AccountGuard, site.ShadowWait
	}
	cfg.SiteFactorMax = site.SiteFactorMax
	return cfg
}

// Site is a site's own sidecar configuration file (its asrpt.toml) as the
// closed loop runs it: every policy setting, bound and interval as
// written, in the write mode of the closed-loop policy (with that mode's
// defaults for what the file leaves unset), with no state file, no
// metrics server and no accounting history before the replay. The
// connection settings are not used.
type Site struct {
	name string
	data []byte
}

// LoadSite reads the sidecar configuration file at path and checks that
// it is valid in both write modes.
func LoadSite(path string) (*Site, error) {
	data, err := tomlbound.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &Site{name: path, data: data}
	for _, m := range []sidecar.WriteMode{sidecar.WriteFactor, sidecar.WritePriority} {
		if _, err := s.Config(m); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Config is the configuration the closed loop runs in write mode mode.
func (s *Site) Config(mode sidecar.WriteMode) (sidecar.Config, error) {
	cfg, err := sidecar.ParseConfigIn(s.data, s.name, mode)
	if err != nil {
		return cfg, err
	}
	cfg.StateFile, cfg.MetricsListen, cfg.History = "", "", 0
	return cfg, nil
}

// Controller runs a sidecar against the multifactor model: a
// policy.Controller.
type Controller struct {
	s        *sidecar.Sidecar
	slurm    *Slurm
	interval float64
	ctx      context.Context
	// Cycles counts the polls; Writes the updates the sidecar sent, by
	// kind (site_factor, priority, nodes).
	Cycles int
	Writes map[string]int
	// Strict polls every interval, skipping none (for tests: the polls
	// skipped change nothing).
	Strict bool
	// Trace, when not nil, is called after each poll with its time
	// (Unix seconds) and the cycle's report.
	Trace func(now float64, rep sidecar.CycleReport)
}

var _ policy.Controller = (*Controller)(nil)

// New returns a Controller that runs a sidecar with cfg and predictor pred
// (which learns from the replay's accounting only) on env's cluster; ctx
// bounds its cycles.
func New(ctx context.Context, env *policy.Env, cfg sidecar.Config, pred predictor.Predictor) (*Controller, error) {
	return newController(ctx, env, cfg, pred, nil)
}

// newController is New with the sidecar's view of Slurm passed through
// wrap (nil: none), which tests use to record what it reads and writes.
func newController(ctx context.Context, env *policy.Env, cfg sidecar.Config, pred predictor.Predictor,
	wrap func(sidecar.Slurm) sidecar.Slurm) (*Controller, error) {
	if cfg.Interval <= 0 {
		return nil, fmt.Errorf("loop: sidecar interval %v: must be positive", cfg.Interval)
	}
	sl := newSlurm(env.Cluster)
	var seen sidecar.Slurm = sl
	if wrap != nil {
		seen = wrap(sl)
	}
	s, err := sidecar.New(cfg, sidecar.Options{Cluster: env.Cluster, Slurm: seen, Predictor: pred, Log: zerolog.Nop(),
		SlurmVersion: "the replay's slurmctld", Headless: true})
	if err != nil {
		return nil, fmt.Errorf("loop: %w", err)
	}
	return &Controller{s: s, slurm: sl, interval: cfg.Interval.Seconds(), ctx: ctx, Writes: map[string]int{}}, nil
}

// Interval implements policy.Controller.
func (c *Controller) Interval() float64 { return c.interval }

// Poll implements policy.Controller: one sidecar cycle at now on q. The
// next poll it asks for is the sidecar's NextChange, or the next point of
// the grid after a cycle that wrote, failed, deferred or waited for a
// backoff (or in Strict mode).
func (c *Controller) Poll(now float64, q *policy.Queue) (float64, error) {
	c.slurm.show(now, q)
	defer c.slurm.hide()
	rep, err := c.s.RunOnce(c.ctx, Time(now))
	c.Cycles++
	busy := rep.Deferred > 0 || rep.Backoff > 0 || rep.Suspect || rep.WritesHeld || rep.DeadlineHit || len(rep.Failed) > 0
	for kind, n := range rep.Writes {
		if n > 0 {
			c.Writes[kind] += n
			busy = true
		}
	}
	if c.Trace != nil {
		c.Trace(now, rep)
	}
	if err != nil {
		return now, fmt.Errorf("sidecar cycle at t=%.0f s: %w", now, err)
	}
	if c.Strict || busy {
		return now, nil
	}
	return c.s.NextChange(), nil
}

// Figures are the closed loop's figures for the replay's report.
func (c *Controller) Figures() *report.LoopFigures {
	return &report.LoopFigures{Cycles: c.Cycles, Writes: maps.Clone(c.Writes)}
}

// Time converts Unix seconds to a time.Time (to the nanosecond).
func Time(t float64) time.Time {
	sec, frac := math.Modf(t)
	return time.Unix(int64(sec), int64(frac*1e9))
}
