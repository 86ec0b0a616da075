package sidecar

import (
	"fmt"
	"math"

	"github.com/rs/zerolog"
)

// eventKind says what a tracker event is.
type eventKind uint8

const (
	// evKeptLost: job missing from the job list, kept for giveback.
	evKeptLost eventKind = iota
	// evPlacementFailed: placing job failed for another reason than free
	// GPUs (err); n counts the failures (at least 1).
	evPlacementFailed
	// evReplaced: a dispatched job was given new nodes.
	evReplaced
	// evHandsOff: someone else changed job's priority (wrote, now).
	evHandsOff
	// evProfile: job's profile was resolved (profile); a refused source
	// is in profile.Problem.
	evProfile
	// evNotSchedulable: the policy refused job (err).
	evNotSchedulable
	// evAdopted: job, started by Slurm before its turn, runs in the policy.
	evAdopted
	// evPreemptOutcome: a preemption of job ended (outcome, one of the
	// outcome* labels; signal, grace, preemptions).
	evPreemptOutcome
	// evPredictionError: a finished managed job's prediction est against
	// its run time run, seconds.
	evPredictionError
)

// event is one thing the tracker saw that the shell counts or logs (the
// tracker neither logs nor counts: see Sidecar.record). Which fields are
// set depends on kind.
type event struct {
	kind        eventKind
	job         string
	err         error
	n           int
	wrote, now  uint32
	outcome     string
	signal      string
	grace       int
	preemptions int
	est, run    float64
	source      string // profile source
	problem     string // profile problem
	problemKind string
	profile     string
}

// record counts and logs the tracker's events.
func (s *Sidecar) record(evs []event) {
	for _, ev := range evs {
		s.recordOne(ev)
	}
}

// recordOne counts and logs ev.
func (s *Sidecar) recordOne(ev event) {
	switch ev.kind {
	case evKeptLost:
		s.log.Warn().Str("job", ev.job).Msg("job missing from the job list with values of asrpt's on it; kept for giveback until accounting reports its end")
	case evPlacementFailed:
		s.m.placementErrors.Add(float64(max(ev.n, 1)))
		err := ev.err
		if ev.job != "" {
			err = fmt.Errorf("job %s: %w", ev.job, err)
		}
		s.incident("placement", err)
	case evReplaced:
		s.m.replaced.Inc()
	case evHandsOff:
		s.log.Info().Str("job", ev.job).Uint32("wrote", ev.wrote).Uint32("now", ev.now).
			Msg("priority changed by someone else; leaving the job alone")
	case evProfile:
		s.m.profiles.WithLabelValues(ev.source).Inc()
		if ev.problem != "" {
			s.m.profileProblems.WithLabelValues(ev.problemKind).Inc()
			s.log.Warn().Str("job", ev.job).Str("problem", ev.problem).Str("profile", ev.profile).
				Str("source", ev.source).Msg("job profile refused; using the next source")
		}
	case evNotSchedulable:
		s.log.Warn().Err(ev.err).Str("job", ev.job).Msg("job cannot be scheduled by the policy")
	case evAdopted:
		s.log.Debug().Str("job", ev.job).Msg("started by Slurm before its turn; running in the policy")
	case evPreemptOutcome:
		s.m.preemptions.WithLabelValues(ev.outcome).Inc()
		var le *zerolog.Event
		switch ev.outcome {
		case outcomeIgnored:
			le = s.log.Warn().Str("job", ev.job).Str("signal", ev.signal).Int("grace_s", ev.grace)
			le.Msg("preempted job still runs after its grace: it ignored the signal; it is not preempted again")
		case outcomeRequeued:
			le = s.log.Info().Str("job", ev.job).Int("preemptions", ev.preemptions)
			le.Msg("preempted job requeued")
		}
	case evPredictionError:
		s.m.predRatio.Observe(ev.est / ev.run)
		s.m.predAbs.Observe(math.Abs(ev.est - ev.run))
	}
}
