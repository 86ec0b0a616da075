package slurmclient

import (
	"fmt"
	"strconv"
	"strings"
)

// Array is a job record's place in a job array (sbatch --array).
//
// Slurm keeps a pending array as one record, the remainder, whose id is the
// array's id and which holds every task not yet started; each task it
// starts is split off into a record of its own with a new job id. The
// remainder is addressed by the array's id, which on some releases also
// reaches the running tasks (see Client.UpdateJob).
type Array struct {
	// JobID is the array's id (ArrayJobId), "" when the job is not part of
	// an array.
	JobID string
	// TaskID is this record's task index, -1 for the remainder.
	TaskID int
	// Tasks is the remainder's task indices as Slurm prints them, without
	// the throttle ("3-6", "1,3,5-9"); "" for a task record.
	Tasks string
	// Throttle is the most tasks that may run at once (--array=…%N,
	// ArrayTaskThrottle), 0 for no limit.
	Throttle int
}

// Het is a job record's place in a heterogeneous job (sbatch … : …).
// Slurm starts all components together and applies a write to the
// leader to every component.
type Het struct {
	// LeaderID is the leader's job id (HetJobId), "" when the job is not
	// heterogeneous.
	LeaderID string
	// Offset is the component's index, 0 for the leader.
	Offset int
	// Components are the job ids of every component (HetJobIdSet
	// expanded), in Slurm's order.
	Components []string
}

// Shape is what kind of record a job is, as far as writing to it goes.
type Shape string

// The shapes of a job record.
const (
	// ShapePlain: a job on its own.
	ShapePlain Shape = "plain"
	// ShapeArrayRemainder: the pending tasks of a job array not yet
	// started, one record.
	ShapeArrayRemainder Shape = "array_remainder"
	// ShapeArrayTask: one task of a job array, split off from the
	// remainder (running, or pending after a requeue or an update of that
	// task alone).
	ShapeArrayTask Shape = "array_task"
	// ShapeHetLeader: the first component of a heterogeneous job.
	ShapeHetLeader Shape = "het_leader"
	// ShapeHetComponent: another component of a heterogeneous job.
	ShapeHetComponent Shape = "het_component"
)

// Shape returns the kind of record j is.
func (j *Job) Shape() Shape {
	switch {
	case j.Het.LeaderID != "" && j.Het.LeaderID == j.ID:
		return ShapeHetLeader
	case j.Het.LeaderID != "":
		return ShapeHetComponent
	case j.Array.JobID != "" && j.Array.TaskID < 0:
		return ShapeArrayRemainder
	case j.Array.JobID != "":
		return ShapeArrayTask
	}
	return ShapePlain
}

// maxArrayTasksLen bounds the remainder's task string kept from a
// response; Slurm prints ranges, so a longer one is a broken response.
const maxArrayTasksLen = 16 << 10

// maxHetComponents bounds a heterogeneous job's component list (Slurm
// allows at most 128 components).
const maxHetComponents = 1024

// arrayAndHet fills j.Array and j.Het from the version-neutral fields of a
// job record; set* tell whether a number was given at all (NO_VAL or
// absent is "not set").
func arrayAndHet(j *Job, arrayJob int64, arrayJobSet bool, task int64, taskSet bool, maxTasks int64,
	taskStr string, hetJob int64, hetJobSet bool, hetSet string, hetOffset int64) error {
	if arrayJobSet && arrayJob > 0 {
		if arrayJob > 1<<32 || task >= 1<<31 || maxTasks < 0 || maxTasks >= 1<<31 {
			return fmt.Errorf("job %s: %w: array fields out of range", j.ID, ErrBadResponse)
		}
		j.Array.JobID = strconv.FormatInt(arrayJob, 10)
		j.Array.TaskID = -1
		if taskSet && task >= 0 {
			j.Array.TaskID = int(task)
		}
		j.Array.Throttle = int(maxTasks)
		if j.Array.TaskID < 0 {
			tasks, _, _ := strings.Cut(taskStr, "%")
			if len(tasks) > maxArrayTasksLen || strings.Trim(tasks, "0123456789,-") != "" {
				return fmt.Errorf("job %s: %w: array_task_string %.40q", j.ID, ErrBadResponse, taskStr)
			}
			j.Array.Tasks = tasks
			if tasks == "" {
				// A record that is the array's first task, not a remainder
				// (no task index, nothing left to start): a plain task.
				j.Array.TaskID = 0
			}
		}
	}
	if hetJobSet && hetJob > 0 {
		if hetJob > 1<<32 || hetOffset < 0 || hetOffset >= maxHetComponents {
			return fmt.Errorf("job %s: %w: het job fields out of range", j.ID, ErrBadResponse)
		}
		j.Het.LeaderID = strconv.FormatInt(hetJob, 10)
		j.Het.Offset = int(hetOffset)
		comps, err := expandIDSet(hetSet)
		if err != nil {
			return fmt.Errorf("job %s: %w: het_job_id_set: %w", j.ID, ErrBadResponse, err)
		}
		j.Het.Components = comps
	}
	return nil
}

// expandIDSet expands a job id set ("11-12", "5,7,9-10") into ids, at most
// maxHetComponents of them.
func expandIDSet(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%.40q: bad id %.20q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 32); err != nil || b < a {
				return nil, fmt.Errorf("%.40q: bad range %.40q", s, part)
			}
		}
		if b-a >= maxHetComponents || len(out)+int(b-a)+1 > maxHetComponents {
			return nil, fmt.Errorf("%.40q: more than %d components", s, maxHetComponents)
		}
		for id := a; id <= b; id++ {
			out = append(out, strconv.FormatUint(id, 10))
		}
	}
	return out, nil
}

// Partitions returns the partitions the job may run in: Slurm lists a job
// submitted to several (-p a,b) with their names joined by commas while it
// is pending, and the one it runs in once started.
func (j *Job) Partitions() []string {
	if j.Partition == "" {
		return nil
	}
	return strings.Split(j.Partition, ",")
}
