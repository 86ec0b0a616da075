package loop

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
)

// Slurm shows the multifactor model's queue to the sidecar as slurmrestd
// would (sidecar.Slurm) during one poll, and applies its writes to the
// model as slurmctld does: a site factor, a priority (explicit, until a
// release), a release, a required node list with its GPUs per node; a
// write to a job that is not waiting fails with slurmclient.ErrNotPending,
// to a job unknown with slurmclient.ErrJobGone.
type Slurm struct {
	cl    *cluster.Cluster
	names map[string]int
	q     *policy.Queue
	now   float64
	// wait is the waiting jobs in arrival order during a poll, waiting
	// maps their ids to their tasks.
	wait    []*policy.Task
	waiting map[string]*policy.Task
	// jobs is the buffer of the records Jobs returns, reused from one
	// poll to the next.
	jobs []slurmclient.Job
	// ended holds the jobs that ended and that accounting may still be
	// asked for, in the order they ended.
	ended []policy.Ended
}

var _ sidecar.Slurm = (*Slurm)(nil)

func newSlurm(cl *cluster.Cluster) *Slurm {
	names := make(map[string]int, len(cl.Nodes))
	for i, n := range cl.Nodes {
		names[n.Name] = i
	}
	return &Slurm{cl: cl, names: names, waiting: map[string]*policy.Task{}}
}

// show makes q, at now, the queue the next calls see.
func (s *Slurm) show(now float64, q *policy.Queue) {
	s.q, s.now = q, now
	s.ended = append(s.ended, q.Ended()...)
	clear(s.waiting)
	s.wait = q.Waiting()
	for _, t := range s.wait {
		s.waiting[t.ID] = t
	}
}

// hide ends the poll: calls fail until the next show.
func (s *Slurm) hide() { s.q, s.wait = nil, nil }

var errNoPoll = fmt.Errorf("loop: the model's queue is read outside a poll")

// Jobs implements sidecar.Slurm: the waiting jobs, then the running ones,
// each in arrival order. The slice is valid until the next call, which
// reuses it.
func (s *Slurm) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	if s.q == nil {
		return nil, errNoPoll
	}
	wait, run := s.wait, s.q.Running() // a poll's writes change no membership
	out := slices.Grow(s.jobs[:0], len(wait)+len(run))
	for _, t := range wait {
		j := s.record(t, "PENDING")
		j.Priority = max(s.q.Priority(t), 1) // 0 would read as held
		j.Reason = "Priority"
		if nodes, gpn := s.q.Required(t); nodes != nil {
			j.RequiredNodes = s.nodeNames(nodes)
			if gpn > 0 {
				j.GPUs.PerNode, j.GPUs.PerJob = gpn, 0
			}
		}
		out = append(out, j)
	}
	for _, t := range run {
		j := s.record(t, "RUNNING")
		j.Priority = 1
		j.Start = Time(t.Start)
		j.GPUIndices = make(map[string][]int, len(t.Placement.Slots))
		j.Nodes = make([]string, 0, len(t.Placement.Slots))
		for _, sl := range t.Placement.Slots {
			name := s.cl.Nodes[sl.Node].Name
			j.Nodes = append(j.Nodes, name)
			for g := range s.cl.Nodes[sl.Node].GPUs {
				if sl.GPUs&(1<<g) != 0 {
					j.GPUIndices[name] = append(j.GPUIndices[name], g)
				}
			}
		}
		out = append(out, j)
	}
	s.jobs = out
	return out, nil
}

// record is t's record in state, with what every state shows.
func (s *Slurm) record(t *policy.Task, state string) slurmclient.Job {
	sub := Time(t.Submit)
	return slurmclient.Job{
		ID: t.ID, Name: t.Name, User: t.User, Account: t.Account, Partition: t.Partition, QOS: t.QOS,
		State: state, Submit: sub, Eligible: sub, TimeLimit: time.Duration(t.TimeLimit * float64(time.Second)),
		GPUs:    slurmclient.GPURequest{PerJob: t.GPUs, Total: t.GPUs, Type: s.gpuType()},
		Command: t.Command,
	}
}

// gpuType is the GRES type of the cluster's first node.
func (s *Slurm) gpuType() string {
	if len(s.cl.Nodes) == 0 {
		return ""
	}
	return s.cl.Nodes[0].GPUType
}

func (s *Slurm) nodeNames(idx []int) []string {
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = s.cl.Nodes[n].Name
	}
	return out
}

// Nodes implements sidecar.Slurm: every node up, with the GPUs the
// running jobs use.
func (s *Slurm) Nodes(ctx context.Context) ([]slurmclient.Node, error) {
	if s.q == nil {
		return nil, errNoPoll
	}
	used := make([]int, len(s.cl.Nodes))
	for _, t := range s.q.Running() {
		for _, sl := range t.Placement.Slots {
			used[sl.Node] += sl.Count()
		}
	}
	out := make([]slurmclient.Node, len(s.cl.Nodes))
	for i, n := range s.cl.Nodes {
		state := "IDLE"
		switch {
		case used[i] >= n.GPUs:
			state = "ALLOCATED"
		case used[i] > 0:
			state = "MIXED"
		}
		out[i] = slurmclient.Node{Name: n.Name, State: state, GPUs: n.GPUs, GPUsUsed: used[i], GPUType: n.GPUType}
	}
	return out, nil
}

// AccountingJobs implements sidecar.Slurm: the jobs that ended in
// [from, to), as sacct reports them. Jobs that ended before from are
// forgotten: the sidecar's accounting reads only move forward.
func (s *Slurm) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	lo, hi := seconds(from), seconds(to)
	s.ended = slices.DeleteFunc(s.ended, func(e policy.Ended) bool { return e.End < lo })
	var out []job.Job
	for _, e := range s.ended {
		if e.End < hi {
			j := *e.Job
			if j.State == "" {
				j.State = "COMPLETED"
			}
			j.RunTime = e.End - e.Start
			out = append(out, j)
		}
	}
	return out, nil
}

func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// UpdateJob implements sidecar.Slurm.
func (s *Slurm) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	if s.q == nil {
		return errNoPoll
	}
	t := s.waiting[id]
	if t == nil {
		if slices.ContainsFunc(s.q.Running(), func(r *policy.Task) bool { return r.ID == id }) {
			return fmt.Errorf("job %s: %w", id, slurmclient.ErrNotPending)
		}
		return fmt.Errorf("job %s: %w", id, slurmclient.ErrJobGone)
	}
	var nodes []int
	if u.RequiredNodes != nil {
		for _, n := range u.RequiredNodes {
			i, ok := s.names[n]
			if !ok {
				return fmt.Errorf("job %s: node %q: %w", id, n, slurmclient.ErrInvalid)
			}
			nodes = append(nodes, i)
		}
	}
	if u.Hold != nil {
		if *u.Hold {
			return fmt.Errorf("job %s: hold: %w", id, slurmclient.ErrUnsupported)
		}
		s.q.Release(t)
	}
	if u.SiteFactor != nil {
		s.q.SetSiteFactor(t, *u.SiteFactor)
	}
	if u.Priority != nil {
		if *u.Priority == 0 {
			return fmt.Errorf("job %s: priority 0 holds: %w", id, slurmclient.ErrUnsupported)
		}
		s.q.SetPriority(t, *u.Priority)
	}
	if u.RequiredNodes != nil {
		gpn := 0
		if u.GPUsPerNode != nil {
			gpn = *u.GPUsPerNode
		}
		s.q.Require(t, nodes, gpn)
	}
	return nil
}

// SupportsSiteFactor implements sidecar.Slurm: the model writes site
// factors (as Slurm 24.11 and later).
func (s *Slurm) SupportsSiteFactor() bool { return true }

// SignalJob implements sidecar.Slurm: the model has no signals (the closed
// loop runs no preemption).
func (s *Slurm) SignalJob(ctx context.Context, id, signal string, d slurmclient.Delivery) error {
	return fmt.Errorf("job %s: signal: %w", id, slurmclient.ErrUnsupported)
}

// SupportsDelivery implements sidecar.Slurm: none.
func (s *Slurm) SupportsDelivery(d slurmclient.Delivery) bool { return false }
