package decision

// EventKind says what an event is.
type EventKind uint8

const (
	// EvKeptLost: job missing from the job list, kept for giveback.
	EvKeptLost EventKind = iota
	// EvPlacementFailed: placing job failed for another reason than free
	// GPUs (err); n counts the failures (at least 1).
	EvPlacementFailed
	// EvReplaced: a dispatched job was given new nodes.
	EvReplaced
	// EvHandsOff: someone else changed job's priority (wrote, now).
	EvHandsOff
	// EvProfile: job's profile was resolved (profile); a refused source
	// is in profile.Problem.
	EvProfile
	// EvNotSchedulable: the policy refused job (err).
	EvNotSchedulable
	// EvAdopted: job, started by Slurm before its turn, runs in the policy.
	EvAdopted
	// EvPreemptOutcome: a preemption of job ended (outcome, one of the
	// outcome* labels; signal, grace, preemptions).
	EvPreemptOutcome
	// EvPredictionError: a finished managed job's prediction est against
	// its run time run, seconds.
	EvPredictionError
)

// Event is one thing the decide step saw that the shell counts or logs
// (the step neither logs nor counts: the sidecar records them). Which fields are
// set depends on kind.
type Event struct {
	Kind        EventKind
	Job         string
	Err         error
	N           int
	Wrote, Now  uint32
	Outcome     string
	Signal      string
	Grace       int
	Preemptions int
	Est, Run    float64
	Source      string // profile source
	Problem     string // profile problem
	ProblemKind string
	Profile     string
}
