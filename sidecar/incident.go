package sidecar

import (
	"time"
)

// openIncident is one incident not yet recovered from.
type openIncident struct {
	since time.Time
	n     int
	last  string // the last error
}

// incident logs err under key the first time it happens; repeats are only
// counted until closeIncidents sees a cycle without it.
func (s *Sidecar) incident(key string, err error) {
	s.seen[key] = true
	in := s.active[key]
	if in == nil {
		in = &openIncident{since: time.Now()}
		s.active[key] = in
	}
	in.n++
	in.last = err.Error()
	if in.n == 1 {
		msg := "slurm call failed; retrying in later cycles"
		switch key {
		case "state":
			msg = "state file could not be saved; no writes to Slurm until it is (retrying in later cycles)"
		case "deadline":
			msg = "cycle deadline reached before every write went out; the rest go out in later cycles"
		case "job_records":
			msg = "job records skipped (a field out of range or malformed); the rest of the job list is used"
		case "job_list":
			msg = "job list much shorter than the tracked jobs (slurmctld restarting?); no arrivals, departures or writes until it is confirmed"
		case "placement":
			msg = "placing a job failed for another reason than free GPUs (the cluster model and Slurm disagree, or a bug); the job waits unplaced"
		}
		s.log.Warn().Err(err).Str("incident", key).Str("reason", Reason(err).String()).Msg(msg)
	}
}

// closeIncidents ends the incidents not seen in this cycle.
func (s *Sidecar) closeIncidents() {
	for k, in := range s.active {
		if !s.seen[k] {
			s.log.Info().Str("incident", k).Int("occurrences", in.n).Msg("recovered")
			delete(s.active, k)
		}
	}
}
