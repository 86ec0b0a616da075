package sidecar

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Run runs cycles every cfg.Interval until ctx ends; a configuration sent
// on Options.Reload takes effect between two cycles (see reload), one
// with problems is refused and logged. A failed cycle is
// retried after a backoff that starts at one second and doubles, never
// longer than the interval, so the sidecar catches up within a cycle of the
// fault's end; errors are logged once per incident. On the way out it
// hands the managed jobs back when cfg.GivebackOnShutdown is set, and saves
// the state. It returns nil on a normal shutdown.
func (s *Sidecar) Run(ctx context.Context) error {
	backoff := time.Second
	timer := time.NewTimer(0)
	defer timer.Stop()
	failing, failed := false, 0
	for {
		s.loop.Store(time.Now().UnixNano())
		select {
		case <-ctx.Done():
			return s.shutdown()
		case r := <-s.reloads:
			if r.Err != nil {
				s.m.reloads.WithLabelValues("refused").Inc()
				s.log.Error().Err(r.Err).Str("config", r.Path).Msg("configuration reload refused; the running configuration stays")
				continue
			}
			applied, restart := s.reload(r.Config)
			ev := s.log.Info()
			if len(restart) > 0 {
				ev = s.log.Warn().Strs("need_restart", restart)
			}
			ev.Str("config", r.Path).Strs("applied", applied).Msg("configuration reloaded")
			s.m.reloads.WithLabelValues("ok").Inc()
			continue
		case <-timer.C:
		}
		rep, err := s.RunOnce(ctx, time.Now())
		delay := s.cfg.Interval
		switch {
		case err != nil && ctx.Err() != nil:
			return s.shutdown()
		case err != nil:
			failed++
			if !failing {
				s.log.Warn().Err(err).Str("reason", Reason(err).String()).Msg("cycle failed; retrying with backoff")
			}
			failing = true
			delay = min(backoff, s.cfg.Interval)
			backoff *= 2
		default:
			if failing {
				s.log.Info().Int("failed_cycles", failed).Msg("cycles recovered")
			}
			failing, failed, backoff = false, 0, time.Second
			ev := s.log.Debug()
			if s.cfg.DryRun {
				// One summary line a cycle; the plan's rows only at debug
				// level (a queue of 100,000 jobs would be that many lines
				// every cycle).
				ev = s.log.Info()
				if s.log.GetLevel() <= zerolog.DebugLevel {
					for _, r := range rep.Plan {
						s.log.Debug().Int("rank", r.Rank).Str("job", r.JobID).Str("user", r.User).Str("name", r.Name).
							Str("shape", r.Shape).Int("gpus", r.GPUs).Float64("predicted_s", math.Round(r.Predicted*1000)/1000).Str("stage", r.Stage).
							Uint32("priority_now", r.PriorityNow).Uint32("priority_new", r.PriorityNew).
							Str("nodes", strings.Join(r.Nodes, ",")).Str("reason", string(r.Reason)).Str("note", r.Note).Msg("plan")
					}
				}
			}
			ev.Dur("took", rep.Duration).Int("arrived", rep.Arrived).Int("dispatched", rep.Dispatched).
				Interface("writes", rep.Writes).Interface("failed", rep.Failed).Int("deferred", rep.Deferred).
				Int("backoff", rep.Backoff).Bool("deadline", rep.DeadlineHit).
				Interface("jobs", rep.Jobs).Bool("dry_run", s.cfg.DryRun).Msg("cycle")
		}
		timer.Reset(delay)
	}
}

// shutdownTimeout bounds the giveback and final save on shutdown.
const shutdownTimeout = 30 * time.Second

func (s *Sidecar) shutdown() error {
	var errs []error
	if s.cfg.GivebackOnShutdown && !s.cfg.DryRun {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		rep, err := s.Giveback(ctx)
		cancel()
		s.log.Info().Int("jobs", len(rep.Returned)).Int("failed", len(rep.Failed)).Int("nodes_kept", len(rep.NodesKept)).Msg("jobs handed back to Slurm")
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !s.cfg.DryRun && s.cfg.StateFile != "" {
		if err := writeState(s.cfg.StateFile, s.state.ToSave()); err != nil {
			errs = append(errs, err)
		}
	}
	s.log.Info().Msg("sidecar stopped")
	return errors.Join(errs...)
}
