package slurmclient

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/asrpt/asrpt/job"
	api "github.com/asrpt/asrpt/slurmclient/internal/api/v0044"
)

// v0044 is the adapter for REST API v0.0.44 (Slurm 25.11–27.05). The job
// description is taken as published: priority as a no-val struct,
// required_nodes as an array, tres_per_node "gres/gpu[:TYPE]:N".
// Derived from v0042.go (same logic, v0.0.44 types); keep the two in step.
type v0044 struct {
	rest
}

var _ Client = (*v0044)(nil)

const (
	p44   = "/slurm/v0.0.44"
	pdb44 = "/slurmdb/v0.0.44"
)

func (c *v0044) APIVersion() string { return "v0.0.44" }

func (c *v0044) Ping(ctx context.Context) (Version, error) {
	var r api.V0044OpenapiPingArrayResp
	if err := c.call(ctx, "GET", p44+"/ping", nil, nil, nil, &r); err != nil {
		return Version{}, err
	}
	v := Version{API: "v0.0.44"}
	if m := r.Meta; m != nil {
		if m.Slurm != nil {
			v.Release, v.Cluster = deref(m.Slurm.Release), deref(m.Slurm.Cluster)
		}
		if m.Plugin != nil {
			v.Plugin = deref(m.Plugin.DataParser)
		}
	}
	if err := c.checkAuth(ctx, p44+"/nodes"); err != nil {
		return v, err
	}
	for _, p := range r.Pings {
		if !p.Responding {
			return v, fmt.Errorf("GET %s/ping: %w: slurmctld %s not responding", p44, ErrServer, deref(p.Hostname))
		}
	}
	return v, nil
}

func (c *v0044) Jobs(ctx context.Context) ([]Job, error) {
	return getJobs(ctx, &c.rest, p44+"/jobs", func(j *jobRecord44) bool { return activeOrUnknown(strs(j.JobState)) },
		job44, func(j *jobRecord44) string { return idOf(j.JobId) })
}

func (c *v0044) Job(ctx context.Context, id string) (Job, error) {
	if !jobIDRE.MatchString(id) {
		return Job{}, fmt.Errorf("job %q: %w: not a job id", id, ErrInvalid)
	}
	var r struct {
		Jobs []jobRecord44 `json:"jobs"`
	}
	if err := c.call(ctx, "GET", p44+"/job/"+id, nil, nil, nil, &r); err != nil {
		return Job{}, err
	}
	for _, j := range r.Jobs {
		if j.JobId != nil && strconv.Itoa(int(*j.JobId)) == id {
			return job44(newBudget(), j)
		}
	}
	return Job{}, fmt.Errorf("GET %s/job/%s: %w", p44, id, ErrJobGone)
}

func noVal32v44(p *api.V0044Uint32NoValStruct) (int64, bool) {
	if p == nil || !deref(p.Set) || deref(p.Infinite) {
		return 0, false
	}
	return deref(p.Number), true
}

func noVal64v44(p *api.V0044Uint64NoValStruct) int64 {
	if p == nil || !deref(p.Set) || deref(p.Infinite) {
		return 0
	}
	return deref(p.Number)
}

func job44(b *budget, j jobRecord44) (Job, error) {
	if j.JobId == nil {
		return Job{}, fmt.Errorf("%w: job without job_id", ErrBadResponse)
	}
	out := Job{
		ID:         strconv.Itoa(int(*j.JobId)),
		Name:       deref(j.Name),
		User:       deref(j.UserName),
		Account:    deref(j.Account),
		Partition:  deref(j.Partition),
		QOS:        deref(j.Qos),
		Reason:     deref(j.StateReason),
		Dependency: dependency(deref(j.Dependency)),
		Eligible:   unix(noVal64v44(j.EligibleTime)),
		Nice:       int(deref(j.Nice)),
		Held:       deref(j.Hold),
		Submit:     unix(noVal64v44(j.SubmitTime)),
		Start:      unix(noVal64v44(j.StartTime)),
		Comment:    deref(j.Comment),
		Requeue:    j.Requeue != nil && *j.Requeue,
	}
	out.State, out.Flags = splitState(strs(j.JobState), baseJobStates)
	if p, ok := noVal32v44(j.Priority); ok && p >= 0 && p <= 0xFFFFFFFF {
		out.Priority = uint32(p)
	}
	if tl, ok := noVal32v44(j.TimeLimit); ok && tl > 0 {
		out.TimeLimit = time.Duration(tl) * time.Minute
	}
	arrayJob, arrayJobSet := noVal32v44(j.ArrayJobId)
	task, taskSet := noVal32v44(j.ArrayTaskId)
	maxTasks, _ := noVal32v44(j.ArrayMaxTasks)
	het, hetSet := noVal32v44(j.HetJobId)
	offset, _ := noVal32v44(j.HetJobOffset)
	if err := arrayAndHet(&out, arrayJob, arrayJobSet, task, taskSet, maxTasks, deref(j.ArrayTaskString),
		het, hetSet, deref(j.HetJobIdSet), offset); err != nil {
		return out, err
	}
	return finishJob(b, out, deref(j.TresPerNode), deref(j.TresPerJob), deref(j.TresReqStr),
		deref(j.RequiredNodes), deref(j.ExcludedNodes), deref(j.Nodes), strs(j.GresDetail))
}

func (c *v0044) Nodes(ctx context.Context) ([]Node, error) {
	var r api.V0044OpenapiNodesResp
	if err := c.call(ctx, "GET", p44+"/nodes", nil, nil, nil, &r); err != nil {
		return nil, err
	}
	var out []Node
	for _, n := range r.Nodes {
		cn, err := node(deref(n.Name), strs(n.State), deref(n.Reason), deref(n.Gres), deref(n.GresUsed), strs(n.Partitions))
		if err != nil {
			return nil, fmt.Errorf("GET %s/nodes: %w", p44, err)
		}
		out = append(out, cn)
	}
	sortNodes(out)
	return out, nil
}

func (c *v0044) UpdateJob(ctx context.Context, id string, u JobUpdate) error {
	return update(ctx, &c.rest, c, p44+"/job/", id, u)
}

func (c *v0044) SignalJob(ctx context.Context, id, signal string, d Delivery) error {
	return signalJob(ctx, &c.rest, c, p44+"/job/", id, signal, d, true)
}

func (c *v0044) SupportsDelivery(d Delivery) bool { return d.flag() != "" }

// remainder addresses the pending tasks of array j by the array's id: from
// 24.11 on an update of it reaches the remainder record only (an update of
// "ID_TASK" is refused: "Submit job update against Array Job's JobID").
func (c *v0044) remainder(j Job) string { return j.Array.JobID }

func (c *v0044) priority(p uint32) map[string]any {
	return map[string]any{"priority": map[string]any{"set": true, "number": p}}
}
func (c *v0044) hold(h bool) map[string]any { return map[string]any{"hold": h} }

// siteFactor sends the factor as slurmctld stores it, offset by 2^31
// (see MaxSiteFactor).
func (c *v0044) siteFactor(f uint32) map[string]any {
	return map[string]any{"site_factor": uint64(siteFactorOffset) + uint64(f)}
}

func (c *v0044) SupportsSiteFactor() bool { return true }
func (c *v0044) requiredNodes(names []string) map[string]any {
	if len(names) == 0 {
		// An empty list is ignored; one empty name clears ReqNodeList.
		return map[string]any{"required_nodes": []string{""}}
	}
	return map[string]any{"required_nodes": names}
}
func (c *v0044) gpusPerNode(n int, typ string) map[string]any {
	if typ != "" {
		return map[string]any{"tres_per_node": fmt.Sprintf("gres/gpu:%s:%d", typ, n)}
	}
	return map[string]any{"tres_per_node": fmt.Sprintf("gres/gpu:%d", n)}
}

// AccountingJobs queries slurmdbd with epoch start_time/end_time (v0.0.44
// is the first version to take epoch seconds) and keeps the jobs that ended
// in [from, to).
func (c *v0044) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	q := url.Values{}
	q.Set("start_time", strconv.FormatInt(from.Unix(), 10))
	q.Set("end_time", strconv.FormatInt(to.Unix(), 10))
	var r api.V0044OpenapiSlurmdbdJobsResp
	if err := c.call(ctx, "GET", pdb44+"/jobs", q, nil, nil, &r); err != nil {
		return nil, err
	}
	var out []acctJob
	for _, j := range r.Jobs {
		a := acctJob{
			ID: strconv.Itoa(int(deref(j.JobId))), Name: deref(j.Name), User: deref(j.User),
			Account: deref(j.Account), Partition: deref(j.Partition), QOS: deref(j.Qos),
		}
		if j.State != nil {
			a.State, _ = splitState(strs(j.State.Current), baseJobStates)
		}
		if t := j.Time; t != nil {
			a.Submit, a.Start, a.End = deref(t.Submission), deref(t.Start), deref(t.End)
			a.Elapsed = int64(deref(t.Elapsed))
			a.LimitMin, a.LimitSet = noVal32v44(t.Limit)
		}
		if j.Tres != nil {
			for _, t := range deref(j.Tres.Allocated) {
				a.addTres(t.Type, deref(t.Name), deref(t.Count))
			}
			if a.GPUs == 0 {
				for _, t := range deref(j.Tres.Requested) {
					if t.Type == "gres" && deref(t.Name) == "gpu" {
						a.GPUs = int(deref(t.Count))
					}
				}
			}
		}
		out = append(out, a)
	}
	return finishAccounting(out, from, to), nil
}
