package predictor

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/job/jobstate"
)

// Errors about a whole history; check with errors.Is.
var (
	// ErrEmptyHistory: the history holds no job at all.
	ErrEmptyHistory = errors.New("empty history")
	// ErrNoFinished: the history holds no finished job to learn from.
	ErrNoFinished = errors.New("no finished job in history (every run time is 0 or the state is still PENDING/RUNNING)")
	// ErrBadJob: a job record has an impossible field (NaN, infinite or
	// negative number, duplicated id); the message names the job and field.
	ErrBadJob = errors.New("bad job record")
)

// maxProblems caps the number of problems Validate reports.
const maxProblems = 10

// Validate checks job records before they are used as history or
// predicted: every number finite, no negative submit time, run time, time
// limit, GPU or node count, iteration count, and no job id twice (an empty
// id is allowed and never counts as a duplicate). Missing strings (user,
// name, account, partition, QOS, state) are allowed: an empty string is a
// category of its own. The error wraps ErrEmptyHistory or ErrBadJob and
// lists at most ten problems, each naming the job's position and id.
func Validate(jobs []job.Job) error {
	if len(jobs) == 0 {
		return ErrEmptyHistory
	}
	var probs []string
	seen := make(map[string]int, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		where := fmt.Sprintf("job %d (id %q)", i+1, j.ID)
		for _, f := range []struct {
			name string
			v    float64
		}{{"Submit", j.Submit}, {"RunTime", j.RunTime}, {"TimeLimit", j.TimeLimit}, {"Iterations", j.Iterations},
			{"GPUs", float64(j.GPUs)}, {"Nodes", float64(j.Nodes)}} {
			switch {
			case math.IsNaN(f.v):
				probs = append(probs, fmt.Sprintf("%s: %s is NaN", where, f.name))
			case math.IsInf(f.v, 0):
				probs = append(probs, fmt.Sprintf("%s: %s is infinite", where, f.name))
			case f.v < 0:
				probs = append(probs, fmt.Sprintf("%s: %s is negative (%g)", where, f.name, f.v))
			}
		}
		if j.ID != "" {
			if k, dup := seen[j.ID]; dup {
				probs = append(probs, fmt.Sprintf("%s: id already used by job %d", where, k+1))
			} else {
				seen[j.ID] = i
			}
		}
		if len(probs) >= maxProblems {
			probs = append(probs, "(more problems not shown)")
			break
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w: %s", ErrBadJob, strings.Join(probs, "; "))
	}
	return nil
}

// Finished reports whether j is a finished job whose run time can be
// learned: a positive run time and a state of a job that has ended
// (jobstate.Unfinished is false).
func Finished(j *job.Job) bool {
	return j.RunTime > 0 && !jobstate.Unfinished(j.State)
}

// End is the end time used for history: Submit + RunTime. job.Job carries
// no start time, so queueing delay is taken as zero; a job therefore enters
// the history no later than it really finished (see README.md).
func End(j *job.Job) float64 { return j.Submit + j.RunTime }

// SubmitOrder returns the indices of jobs ordered by submit time, then id,
// then position.
func SubmitOrder(jobs []job.Job) []int {
	idx := make([]int, len(jobs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(jobs[a].Submit, jobs[b].Submit); c != 0 {
			return c
		}
		return cmp.Compare(jobs[a].ID, jobs[b].ID)
	})
	return idx
}

// BuildRows returns each job's features (rows[i] belongs to jobs[i]),
// computed from a history that holds exactly the finished jobs of the same
// slice whose end time (End) is strictly before the job's submit time. It
// is the offline twin of the online Forest: a job's row never depends on a
// job that finished at or after its submit time.
func BuildRows(jobs []job.Job) []Row {
	order := SubmitOrder(jobs)
	var ends []int
	for _, i := range order {
		if Finished(&jobs[i]) {
			ends = append(ends, i)
		}
	}
	slices.SortStableFunc(ends, func(a, b int) int { return cmp.Compare(End(&jobs[a]), End(&jobs[b])) })
	fams := make([]string, len(jobs))
	for i := range jobs {
		fams[i] = Family(jobs[i].Name)
	}
	h := NewHistory()
	rows := make([]Row, len(jobs))
	e := 0
	for _, i := range order {
		for e < len(ends) && End(&jobs[ends[e]]) < jobs[i].Submit {
			k := ends[e]
			h.add(&jobs[k], fams[k], End(&jobs[k]))
			e++
		}
		rows[i] = extract(&jobs[i], fams[i], h)
	}
	return rows
}
