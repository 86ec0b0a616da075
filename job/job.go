// Package job defines the batch-job record shared by the trace readers, the
// predictor, the policies, the replay simulator and the sidecar.
package job

// Job is one batch job. Times are seconds; Submit is Unix seconds (traces with
// only relative times are anchored at a fixed epoch by their reader).
type Job struct {
	// ID is the scheduler's job id (Slurm JobIDRaw, or the trace's row id).
	ID string
	// Submit is the submit time, Unix seconds.
	Submit float64
	// User, Name, Account, Partition and QOS are as Slurm records them; any may be empty.
	User, Name, Account, Partition, QOS string
	// GPUs is the number of GPUs the job uses in total (> 0 for a GPU job).
	GPUs int
	// Nodes is the number of nodes requested, 0 when the job did not say.
	Nodes int
	// RunTime is the true run time in seconds as the trace recorded it
	// (End−Start); 0 for a job that has not finished yet.
	RunTime float64
	// TimeLimit is the user's time limit in seconds, 0 when none is known.
	TimeLimit float64
	// State is the final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, ...).
	State string
	// Profile names a model in the placement catalogue; empty for a plain job,
	// whose run time is RunTime wherever it is placed.
	Profile string
	// Iterations is the true number of training iterations of a profiled job;
	// its run time under placement π is Iterations·α(π).
	Iterations float64
	// Preemptible says the job opted in to preemption: its comment declared
	// how it stops (a valid "asrpt:preempt=SIGNAL@SECONDS" word, jobword).
	Preemptible bool
	// ArrayJobID is the id of the job array the job is a task of (Slurm's
	// ArrayJobId, the 123 of task 123_4), "" when it is not an array task.
	// The tasks of one array share it; predictors read the finished ones.
	ArrayJobID string
	// Command identifies how the job was started: CommandKey of its
	// working directory and submit line (Slurm's WorkDir and SubmitLine),
	// 0 when the submit line is not known. Jobs submitted by the same
	// command line from the same directory share it; the text itself is
	// not kept. A number, not text: a string would grow every job by 16
	// bytes (job.Job is allocated once per replayed job).
	Command uint64
}

// Profiled reports whether the job carries a model profile.
func (j *Job) Profiled() bool { return j.Profile != "" && j.Iterations > 0 }
