package slurmclient

import (
	"slices"
	"strings"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/job/jobstate"
)

// acctJob is an accounting record in version-neutral form.
type acctJob struct {
	ID, Name, User, Account, Partition, QOS, State string
	ArrayJobID                                     string // "" when not an array task
	Submit, Start, End, Elapsed                    int64  // Unix seconds; Elapsed in seconds
	LimitMin                                       int64  // minutes
	LimitSet                                       bool
	GPUs, Nodes                                    int
	// WorkDir and SubmitLine are Slurm's WorkDir and SubmitLine: text
	// written by users, which only job.CommandKey reads (finishAccounting);
	// never log or keep them. An adapter sets SubmitLine only where its
	// version's job list reports one too (v0.0.44), so that Command is the
	// key the pending job had (Job.Command).
	WorkDir, SubmitLine string
	// HetLeader is the leader's job id when the record is a component of a
	// heterogeneous job ("" otherwise), HetOffset its offset (0: the
	// leader): finishAccounting merges the components into one job.
	HetLeader string
	HetOffset int
}

// addTres records the GPU and node counts of one allocated TRES entry.
func (a *acctJob) addTres(typ, name string, count int64) {
	switch {
	case typ == "gres" && name == "gpu":
		a.GPUs = int(count)
	case typ == "node":
		a.Nodes = int(count)
	}
}

// finishAccounting keeps finished jobs that ended in [from, to), converts
// them to job.Job, and orders them by end time then id. The components of
// a heterogeneous job become one job under the leader's id, with the GPUs
// and nodes of all of them (job.MergeHet): the unit the sidecar ranks,
// as the sacct reader makes it (trace/FORMAT.md).
func finishAccounting(in []acctJob, from, to time.Time) []job.Job {
	slices.SortFunc(in, func(a, b acctJob) int {
		if a.End != b.End {
			return int(a.End - b.End)
		}
		if len(a.ID) != len(b.ID) {
			return len(a.ID) - len(b.ID)
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := []job.Job{}
	units := map[string]int{} // a heterogeneous job's leader id → its index in out
	for _, a := range in {
		st := strings.ToUpper(strings.TrimSpace(a.State))
		if a.End <= 0 || st == "" || jobstate.Unfinished(st) {
			continue
		}
		end := time.Unix(a.End, 0)
		if end.Before(from) || !end.Before(to) {
			continue
		}
		j := job.Job{
			ID: a.ID, Submit: float64(a.Submit), User: a.User, Name: a.Name, Account: a.Account,
			Partition: a.Partition, QOS: a.QOS, GPUs: a.GPUs, Nodes: a.Nodes, State: st,
			ArrayJobID: a.ArrayJobID, Command: job.CommandKey(a.WorkDir, a.SubmitLine),
		}
		switch {
		case a.Elapsed > 0:
			j.RunTime = float64(a.Elapsed)
		case a.Start > 0 && a.End > a.Start:
			j.RunTime = float64(a.End - a.Start)
		}
		if a.LimitSet && a.LimitMin > 0 && a.LimitMin < 0xFFFFFFFE {
			j.TimeLimit = float64(a.LimitMin * 60)
		}
		if a.HetLeader != "" {
			if i, ok := units[a.HetLeader]; ok {
				job.MergeHet(&out[i], &j, a.HetOffset == 0)
				continue
			}
			j.ID = a.HetLeader
			units[a.HetLeader] = len(out)
		}
		out = append(out, j)
	}
	return out
}
