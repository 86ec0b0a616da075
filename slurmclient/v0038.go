package slurmclient

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/asrpt/asrpt/job"
	api "github.com/asrpt/asrpt/slurmclient/internal/api/v0038"
)

// v0038 is the adapter for REST API v0.0.38 / dbv0.0.38 (Slurm 22.05–23.11).
// Its job-update body is parsed by slurmrestd as sbatch options, not as the
// published v0.0.38_job_properties schema, so the update keys are written by
// hand: nodelist (a hostlist string; required_nodes is a disabled key), gres
// ("gpu:N"; tres_per_node is unknown), integer priority, hold. The dbv0.0.38
// job schema does not match what slurmdbd serves (allocation_nodes is an
// integer, comment an object), so accounting jobs are decoded into the
// hand-written dbJob38.
type v0038 struct {
	rest
}

var _ Client = (*v0038)(nil)

const (
	p38   = "/slurm/v0.0.38"
	pdb38 = "/slurmdb/v0.0.38"
)

func (c *v0038) APIVersion() string { return "v0.0.38" }

func (c *v0038) Ping(ctx context.Context) (Version, error) {
	var r api.V0038Pings
	if err := c.call(ctx, "GET", p38+"/ping", nil, nil, nil, &r); err != nil {
		return Version{}, err
	}
	v := Version{API: "v0.0.38"}
	if r.Meta != nil && r.Meta.Slurm != nil {
		v.Release = deref(r.Meta.Slurm.Release)
	}
	if r.Meta != nil && r.Meta.Plugin != nil {
		v.Plugin = deref(r.Meta.Plugin.Type)
	}
	if r.Pings != nil {
		for _, p := range *r.Pings {
			if s := deref(p.Ping); s != "" && s != "UP" {
				return v, fmt.Errorf("GET %s/ping: %w: slurmctld %s is %s", p38, ErrServer, deref(p.Hostname), s)
			}
		}
	}
	return v, nil
}

func (c *v0038) Jobs(ctx context.Context) ([]Job, error) {
	return getJobs(ctx, &c.rest, p38+"/jobs",
		func(j *jobRecord38) bool {
			st := strings.ToUpper(deref(j.JobState))
			return st == "" || active(st)
		},
		job38, func(j *jobRecord38) string { return idOf(j.JobId) })
}

func (c *v0038) Job(ctx context.Context, id string) (Job, error) {
	if !jobIDRE.MatchString(id) {
		return Job{}, fmt.Errorf("job %q: %w: not a job id", id, ErrInvalid)
	}
	var r struct {
		Jobs []jobRecord38 `json:"jobs"`
	}
	if err := c.call(ctx, "GET", p38+"/job/"+id, nil, nil, nil, &r); err != nil {
		return Job{}, err
	}
	for _, j := range r.Jobs {
		if j.JobId != nil && strconv.Itoa(*j.JobId) == id {
			return job38(newBudget(), j)
		}
	}
	return Job{}, fmt.Errorf("GET %s/job/%s: %w", p38, id, ErrJobGone)
}

func job38(b *budget, j jobRecord38) (Job, error) {
	out := Job{
		ID:         strconv.Itoa(deref(j.JobId)),
		Name:       deref(j.Name),
		User:       deref(j.UserName),
		Account:    deref(j.Account),
		Partition:  deref(j.Partition),
		QOS:        deref(j.Qos),
		Reason:     deref(j.StateReason),
		Dependency: dependency(deref(j.Dependency)),
		Eligible:   unix(deref(j.EligibleTime)),
		Nice:       deref(j.Nice),
		Submit:     unix(deref(j.SubmitTime)),
		Start:      unix(deref(j.StartTime)),
		Comment:    deref(j.Comment),
		Requeue:    j.Requeue != nil && *j.Requeue,
		// Neither the v0.0.38 job list nor dbv0.0.38 accounting has a
		// submit_line: no command (a directory alone is none), as
		// AccountingJobs gives the job's accounting record.
		Command: job.CommandKey(deref(j.CurrentWorkingDirectory), ""),
	}
	if j.JobId == nil {
		return out, fmt.Errorf("%w: job without job_id", ErrBadResponse)
	}
	out.State, out.Flags = splitState([]string{deref(j.JobState)}, baseJobStates)
	if p := deref(j.Priority); p > 0 && p <= 0xFFFFFFFF {
		out.Priority = uint32(p)
	}
	out.Held = out.Priority == 0 && out.State == "PENDING" && strings.HasPrefix(out.Reason, "JobHeld")
	if tl := deref(j.TimeLimit); tl > 0 && tl < 0xFFFFFFFE {
		out.TimeLimit = time.Duration(tl) * time.Minute
	}
	if err := arrayAndHet(&out, int64(deref(j.ArrayJobId)), j.ArrayJobId != nil, int64(deref(j.ArrayTaskId)),
		j.ArrayTaskId != nil, int64(deref(j.ArrayMaxTasks)), deref(j.ArrayTaskString),
		int64(deref(j.HetJobId)), j.HetJobId != nil, deref(j.HetJobIdSet), int64(deref(j.HetJobOffset))); err != nil {
		return out, err
	}
	return finishJob(b, out, deref(j.TresPerNode), deref(j.TresPerJob), deref(j.TresReqStr),
		deref(j.RequiredNodes), deref(j.ExcludedNodes), deref(j.Nodes), deref(j.GresDetail))
}

// finishJob fills the parsed string fields shared by all versions, charging
// the names and GPU indices to b, the budget of the response.
func finishJob(b *budget, out Job, perNode, perJob, reqStr, req, exc, nodes string, detail []string) (Job, error) {
	var err error
	if out.GPUs, err = gpuRequest(perNode, perJob, reqStr); err != nil {
		return out, fmt.Errorf("job %s: %w: %w", out.ID, ErrBadResponse, err)
	}
	if out.RequiredNodes, err = b.hosts(req); err != nil {
		return out, fmt.Errorf("job %s: required_nodes: %w: %w", out.ID, ErrBadResponse, err)
	}
	if out.ExcludedNodes, err = b.hosts(exc); err != nil {
		return out, fmt.Errorf("job %s: excluded_nodes: %w: %w", out.ID, ErrBadResponse, err)
	}
	if out.State != "PENDING" {
		if out.Nodes, err = b.hosts(nodes); err != nil {
			return out, fmt.Errorf("job %s: nodes: %w: %w", out.ID, ErrBadResponse, err)
		}
		if out.GPUIndices, err = b.indexMap(out.Nodes, detail); err != nil {
			return out, fmt.Errorf("job %s: %w: %w", out.ID, ErrBadResponse, err)
		}
	}
	return out, nil
}

func (c *v0038) Nodes(ctx context.Context) ([]Node, error) {
	var r api.V0038NodesResponse
	if err := c.call(ctx, "GET", p38+"/nodes", nil, nil, nil, &r); err != nil {
		return nil, err
	}
	var out []Node
	for _, n := range deref(r.Nodes) {
		states := append([]string{deref(n.State)}, deref(n.StateFlags)...)
		cn, err := node(deref(n.Name), states, deref(n.Reason), deref(n.Gres), deref(n.GresUsed), deref(n.Partitions))
		if err != nil {
			return nil, fmt.Errorf("GET %s/nodes: %w", p38, err)
		}
		out = append(out, cn)
	}
	sortNodes(out)
	return out, nil
}

// node builds a Node from the fields shared by all versions.
func node(name string, states []string, reason, gres, used string, parts []string) (Node, error) {
	n := Node{Name: name, Reason: reason, Partitions: parts}
	if name == "" {
		return n, fmt.Errorf("%w: node without name", ErrBadResponse)
	}
	n.State, n.Flags = splitState(states, baseNodeStates)
	var err error
	if n.GPUs, n.GPUType, err = nodeGPUs(gres); err != nil {
		return n, fmt.Errorf("node %s: %w: %w", name, ErrBadResponse, err)
	}
	if n.GPUsUsed, _, err = nodeGPUs(used); err != nil {
		return n, fmt.Errorf("node %s: %w: %w", name, ErrBadResponse, err)
	}
	return n, nil
}

func (c *v0038) UpdateJob(ctx context.Context, id string, u JobUpdate) error {
	return update(ctx, &c.rest, c, p38+"/job/", id, u)
}

func (c *v0038) SignalJob(ctx context.Context, id, signal string, d Delivery) error {
	return signalJob(ctx, &c.rest, c, p38+"/job/", id, signal, d, false)
}

func (c *v0038) SupportsDelivery(d Delivery) bool { return d == DeliverAll }

// remainder addresses the pending tasks of array j by their indices
// ("10_[3-6]"): 22.05 applies an update of the array's id to its running
// tasks too (and answers "job array update failed" for both forms).
func (c *v0038) remainder(j Job) string { return j.Array.JobID + "_[" + j.Array.Tasks + "]" }

func (c *v0038) priority(p uint32) map[string]any { return map[string]any{"priority": p} }
func (c *v0038) hold(h bool) map[string]any       { return map[string]any{"hold": h} }

// siteFactor is nil: v0.0.38's job update (sbatch options) has no site
// factor; update refuses the write before sending anything.
func (c *v0038) siteFactor(uint32) map[string]any { return nil }

// SupportsSiteFactor is false for v0.0.38 (see siteFactor).
func (c *v0038) SupportsSiteFactor() bool { return false }
func (c *v0038) requiredNodes(names []string) map[string]any {
	// An empty string clears ReqNodeList.
	return map[string]any{"nodelist": strings.Join(names, ",")}
}
func (c *v0038) gpusPerNode(n int, typ string) map[string]any {
	if typ != "" {
		return map[string]any{"gres": fmt.Sprintf("gpu:%s:%d", typ, n)}
	}
	return map[string]any{"gres": fmt.Sprintf("gpu:%d", n)}
}

// dbJob38 is the part of a dbv0.0.38 job asrpt reads, as slurmdbd 22.05
// serves it (the published schema disagrees; see v0038).
type dbJob38 struct {
	JobID     int64  `json:"job_id"`
	Name      string `json:"name"`
	User      string `json:"user"`
	Account   string `json:"account"`
	Partition string `json:"partition"`
	QOS       string `json:"qos"`
	Nodes     string `json:"nodes"`
	State     struct {
		Current string `json:"current"`
	} `json:"state"`
	Time struct {
		Elapsed    int64 `json:"elapsed"`
		Start      int64 `json:"start"`
		End        int64 `json:"end"`
		Submission int64 `json:"submission"`
		Limit      int64 `json:"limit"`
	} `json:"time"`
	Tres struct {
		Allocated []tres38 `json:"allocated"`
		Requested []tres38 `json:"requested"`
	} `json:"tres"`
	AllocationNodes int64 `json:"allocation_nodes"`
	// WorkingDirectory is user-written text: only hashed (job.CommandKey).
	WorkingDirectory string `json:"working_directory"`
	Array            struct {
		JobID int64 `json:"job_id"` // 0: not an array task
	} `json:"array"`
	Het struct {
		JobID     int64  `json:"job_id"` // 0: not heterogeneous
		JobOffset *int64 `json:"job_offset"`
	} `json:"het"`
}

type tres38 struct {
	Type  string  `json:"type"`
	Name  *string `json:"name"`
	Count *int64  `json:"count"`
}

// AccountingJobs queries dbv0.0.38 with sacct-style local times (22.05
// accepts no epoch and has no user filter) and keeps the jobs that ended in
// [from, to). The exit code of dbv0.0.38 is always 0, so the state decides.
// An empty window (HTTP 200 with error 9003 "Nothing found") is zero jobs.
func (c *v0038) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	const layout = "2006-01-02T15:04:05"
	q := url.Values{}
	q.Set("start_time", from.In(c.t.loc).Format(layout))
	q.Set("end_time", to.In(c.t.loc).Format(layout))
	var r struct {
		Jobs []dbJob38 `json:"jobs"`
	}
	if err := c.call(ctx, "GET", pdb38+"/jobs", q, nil, nil, &r); err != nil {
		if nothingFound(err) {
			// 22.05: an empty window is 200 with error 9003.
			return []job.Job{}, nil
		}
		return nil, err
	}
	var out []acctJob
	for _, j := range r.Jobs {
		a := acctJob{
			ID: strconv.FormatInt(j.JobID, 10), Name: j.Name, User: j.User, Account: j.Account,
			Partition: j.Partition, QOS: j.QOS, State: j.State.Current,
			Submit: j.Time.Submission, Start: j.Time.Start, End: j.Time.End, Elapsed: j.Time.Elapsed,
			LimitMin: j.Time.Limit, LimitSet: j.Time.Limit > 0,
			// dbv0.0.38 has no submit_line.
			WorkDir: j.WorkingDirectory,
		}
		if j.Array.JobID > 0 {
			a.ArrayJobID = strconv.FormatInt(j.Array.JobID, 10)
		}
		if j.Het.JobID > 0 {
			a.HetLeader, a.HetOffset = strconv.FormatInt(j.Het.JobID, 10), int(deref(j.Het.JobOffset))
		}
		for _, t := range j.Tres.Allocated {
			a.addTres(t.Type, deref(t.Name), deref(t.Count))
		}
		if a.GPUs == 0 {
			for _, t := range j.Tres.Requested {
				if t.Type == "gres" && deref(t.Name) == "gpu" {
					a.GPUs = int(deref(t.Count))
				}
			}
		}
		out = append(out, a)
	}
	return finishAccounting(out, from, to), nil
}
