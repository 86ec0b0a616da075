package sidecar

import (
	"reflect"

	"github.com/rs/zerolog"
)

// reload applies a new configuration between two cycles: what can change
// while the sidecar runs takes effect now, the rest (how Slurm is reached,
// the state file, the policy and predictor, the metrics address, the log
// format) keeps its running value and is reported as needing a restart.
// It returns the keys that changed and took effect, and those that need a
// restart. cfg must have been validated (LoadConfig).
func (s *Sidecar) reload(cfg Config) (applied, restart []string) {
	old := s.cfg
	same := func(a, b any) bool { return reflect.DeepEqual(a, b) }
	for _, k := range []struct {
		key  string
		a, b any
	}{
		{"slurm", old.Slurm, cfg.Slurm},
		{"sidecar.state_file", old.StateFile, cfg.StateFile},
		{"sidecar.write_mode", []any{old.WriteMode, old.PriorityFallback}, []any{cfg.WriteMode, cfg.PriorityFallback}},
		{"policy", []any{old.Policy, old.Params}, []any{cfg.Policy, cfg.Params}},
		{"predictor", []any{old.Predictor, old.Retrain, old.History}, []any{cfg.Predictor, cfg.Retrain, cfg.History}},
		{"metrics.listen", old.MetricsListen, cfg.MetricsListen},
		{"log.format", old.LogFormat, cfg.LogFormat},
	} {
		if !same(k.a, k.b) {
			restart = append(restart, k.key)
		}
	}
	next := old
	set := func(key string, changed bool, apply func()) {
		if changed {
			apply()
			applied = append(applied, key)
		}
	}
	set("sidecar.interval", old.Interval != cfg.Interval, func() {
		next.Interval = cfg.Interval
		s.intervalNs.Store(int64(cfg.Interval))
	})
	set("sidecar.dry_run", old.DryRun != cfg.DryRun, func() { next.DryRun = cfg.DryRun })
	set("sidecar.giveback_on_shutdown", old.GivebackOnShutdown != cfg.GivebackOnShutdown, func() { next.GivebackOnShutdown = cfg.GivebackOnShutdown })
	set("sidecar.write_limit", old.WriteLimit != cfg.WriteLimit, func() { next.WriteLimit = cfg.WriteLimit })
	set("sidecar.dispatch_grace", old.DispatchGrace != cfg.DispatchGrace, func() { next.DispatchGrace = cfg.DispatchGrace })
	set("sidecar.site_factor_max", old.SiteFactorMax != cfg.SiteFactorMax, func() { next.SiteFactorMax = cfg.SiteFactorMax })
	set("sidecar.required_nodes", old.RequiredNodes != cfg.RequiredNodes, func() { next.RequiredNodes = cfg.RequiredNodes })
	set("sidecar.gpus_per_node", old.GPUsPerNode != cfg.GPUsPerNode, func() { next.GPUsPerNode = cfg.GPUsPerNode })
	set("scope", !same(old.Scope, cfg.Scope), func() { next.Scope = cfg.Scope })
	set("profiles", !same(old.Profiles, cfg.Profiles), func() {
		next.Profiles = cfg.Profiles
	})
	set("preemption", !same(old.Preemption, cfg.Preemption), func() { next.Preemption = cfg.Preemption })
	set("log.level", old.LogLevel != cfg.LogLevel, func() {
		next.LogLevel = cfg.LogLevel
		if lvl, err := zerolog.ParseLevel(cfg.LogLevel); err == nil {
			s.log = s.log.Level(lvl)
		}
	})
	s.cfg = next
	s.state.Reconfigure(next.Settings())
	return applied, restart
}
