package sidecar

import (
	"context"

	"github.com/asrpt/asrpt/decision"
)

// signalStops sends this cycle's stop signals (none in a dry run, none
// after a giveback, none when the state that records them could not be
// saved: held). A stop that cannot be sent withdraws its job from the
// policy for good (outcome failed). It returns an error only when the
// context ended.
func (s *Sidecar) signalStops(ctx context.Context, stops []*decision.Entry, dry, held bool, rep *CycleReport) error {
	for _, e := range stops {
		rep.Preempted++
		switch {
		case dry:
			continue
		case held:
			s.stopFailed(e, "the state, which records the signal first, could not be saved", nil)
			continue
		case s.givenBack.Load():
			s.stopFailed(e, "the jobs were handed back", nil)
			continue
		}
		d := decision.Delivery(e.Stop.To)
		s.m.signals.Inc()
		err := s.slurm.SignalJob(ctx, e.ID, e.Stop.Signal, d)
		if err != nil {
			s.stopFailed(e, "the signal could not be sent", err)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		s.state.Record(decision.Outcome{Entry: e, Target: e.ID, Kind: decision.KindSignal})
		s.log.Info().Str("job", e.ID).Str("signal", e.Stop.Signal).Str("delivery", d.String()).Int("grace_s", e.Stop.Grace).
			Int("preemptions", e.Preemptions).Str("opt_in", e.StopFrom).Msg("preempting: stop signal sent")
	}
	return nil
}

// stopFailed takes e, whose stop signal did not go out, out of the policy
// for good: it runs on unmanaged and is never signalled again.
func (s *Sidecar) stopFailed(e *decision.Entry, why string, err error) {
	s.m.preemptions.WithLabelValues(decision.OutcomeFailed).Inc()
	ev := s.log.Warn().Str("job", e.ID)
	if err != nil {
		ev = ev.Err(err).Str("reason", Reason(err).String())
	}
	ev.Msg("preemption not sent: " + why + "; the job runs on and is not preempted again")
	s.state.Record(decision.Outcome{Entry: e, Target: e.ID, Kind: decision.KindSignal, Result: decision.Failed, Reason: why})
}
