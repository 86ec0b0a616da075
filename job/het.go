package job

// A heterogeneous job (sbatch … : …) is one job in Slurm's queue, started
// and ended as one, but accounting (sacct, slurmdbd) keeps a record per
// component, each with its own job id and only its own GPUs. The live
// sidecar ranks and predicts the whole job through its leader, with the
// GPUs of every component (decision's queue view). So that its history
// describes the same unit, the readers of accounting merge a het job's
// records into one job with MergeHet, under the leader's id.

// MergeHet adds component c of a heterogeneous job to unit, the job made
// of the components merged so far; leader says c is the leader (offset 0).
// The unit has the GPUs and nodes of all components, the earliest submit
// time, the longest run time and the longest time limit (the components
// start and end together; a component's sacct elapsed time may differ by a
// second). Everything else — id, name, user, account, partition, QOS,
// state, command, comment (Preemptible), profile — is the leader's, so a
// unit whose leader has not been merged yet takes them from the first
// component merged and the leader's replace them when it comes. The
// caller sets the unit's ID (the leader's id).
func MergeHet(unit, c *Job, leader bool) {
	gpus, nodes := unit.GPUs+c.GPUs, unit.Nodes+c.Nodes
	submit, run, limit := min(unit.Submit, c.Submit), max(unit.RunTime, c.RunTime), max(unit.TimeLimit, c.TimeLimit)
	if leader {
		id := unit.ID
		*unit = *c
		unit.ID = id
	}
	unit.GPUs, unit.Nodes = gpus, nodes
	unit.Submit, unit.RunTime, unit.TimeLimit = submit, run, limit
}
