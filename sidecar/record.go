package sidecar

import (
	"fmt"
	"math"

	"github.com/asrpt/asrpt/decision"
	"github.com/rs/zerolog"
)

// record counts and logs the decide step's events.
func (s *Sidecar) record(evs []decision.Event) {
	for _, ev := range evs {
		s.recordOne(ev)
	}
}

// recordOne counts and logs ev.
func (s *Sidecar) recordOne(ev decision.Event) {
	switch ev.Kind {
	case decision.EvKeptLost:
		s.log.Warn().Str("job", ev.Job).Msg("job missing from the job list with values of asrpt's on it; kept for giveback until accounting reports its end")
	case decision.EvPlacementFailed:
		s.m.placementErrors.Add(float64(max(ev.N, 1)))
		err := ev.Err
		if ev.Job != "" {
			err = fmt.Errorf("job %s: %w", ev.Job, err)
		}
		s.incident("placement", err)
	case decision.EvReplaced:
		s.m.replaced.Inc()
	case decision.EvHandsOff:
		s.log.Info().Str("job", ev.Job).Uint32("wrote", ev.Wrote).Uint32("now", ev.Now).
			Msg("priority changed by someone else; leaving the job alone")
	case decision.EvProfile:
		s.m.profiles.WithLabelValues(ev.Source).Inc()
		if ev.Problem != "" {
			s.m.profileProblems.WithLabelValues(ev.ProblemKind).Inc()
			s.log.Warn().Str("job", ev.Job).Str("problem", ev.Problem).Str("profile", ev.Profile).
				Str("source", ev.Source).Msg("job profile refused; using the next source")
		}
	case decision.EvNotSchedulable:
		s.log.Warn().Err(ev.Err).Str("job", ev.Job).Msg("job cannot be scheduled by the policy")
	case decision.EvAdopted:
		s.log.Debug().Str("job", ev.Job).Msg("started by Slurm before its turn; running in the policy")
	case decision.EvPreemptOutcome:
		s.m.preemptions.WithLabelValues(ev.Outcome).Inc()
		var le *zerolog.Event
		switch ev.Outcome {
		case decision.OutcomeIgnored:
			le = s.log.Warn().Str("job", ev.Job).Str("signal", ev.Signal).Int("grace_s", ev.Grace)
			le.Msg("preempted job still runs after its grace: it ignored the signal; it is not preempted again")
		case decision.OutcomeRequeued:
			le = s.log.Info().Str("job", ev.Job).Int("preemptions", ev.Preemptions)
			le.Msg("preempted job requeued")
		}
	case decision.EvPredictionError:
		s.m.predRatio.Observe(ev.Est / ev.Run)
		s.m.predAbs.Observe(math.Abs(ev.Est - ev.Run))
	}
}
