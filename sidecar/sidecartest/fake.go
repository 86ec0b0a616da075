// Package sidecartest provides an in-memory Slurm for testing the sidecar:
// a Fake that keeps jobs and nodes, applies updates the way slurmctld does
// (for the fields the sidecar writes), records every write, and lets a test
// make chosen calls fail through an interceptor, in the manner of Slinky's
// client interceptor.
package sidecartest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/job/jobstate"
	"github.com/asrpt/asrpt/slurmclient"
)

// Call describes one call made to the Fake, as its interceptor sees it.
type Call struct {
	// Method is "Jobs", "Nodes", "UpdateJob", "SignalJob" or
	// "AccountingJobs".
	Method string
	// JobID is set for UpdateJob and SignalJob, Update for UpdateJob.
	JobID  string
	Update slurmclient.JobUpdate
}

// Signal is one signal SignalJob delivered.
type Signal struct {
	JobID    string
	Signal   string
	Delivery slurmclient.Delivery
}

// Interceptor is called before every call; a non-nil error is returned to
// the caller instead of performing the call (nothing is changed). It runs
// with the Fake's lock held and must not call the Fake.
type Interceptor func(c Call) error

// Write is one successful UpdateJob.
type Write struct {
	JobID  string
	Update slurmclient.JobUpdate
}

// Fake is an in-memory Slurm. The zero value is an empty cluster; methods
// are safe for concurrent use.
type Fake struct {
	mu    sync.Mutex
	jobs  map[string]*slurmclient.Job
	nodes []slurmclient.Node
	acct  []job.Job
	// intercept, when not nil, sees every call first.
	intercept Interceptor
	writes    []Write
	calls     map[string]int
	// BasePriority is the priority Slurm's priority plugin gives a job on
	// release (multifactor's recomputed value, before the site factor);
	// default 1000.
	BasePriority uint32
	// NoSiteFactor makes the Fake a release whose REST API cannot write a
	// site factor (22.05): SupportsSiteFactor is false and a SiteFactor
	// write is refused with ErrUnsupported.
	NoSiteFactor bool
	// factor holds each job's site factor; direct marks the jobs whose
	// priority was set explicitly (or held), which the priority plugin
	// leaves alone until a release, as slurmctld's direct_set_prio.
	factor map[string]uint32
	direct map[string]bool
	// WholeJobSignalsOnly makes the Fake a release whose REST API signals
	// the whole job only (22.05's v0.0.38): SupportsDelivery is true for
	// DeliverAll alone.
	WholeJobSignalsOnly bool
	signals             []Signal
}

// NewFake returns a Fake holding nodes (copied).
func NewFake(nodes []slurmclient.Node) *Fake {
	return &Fake{jobs: map[string]*slurmclient.Job{}, nodes: slices.Clone(nodes), calls: map[string]int{},
		factor: map[string]uint32{}, direct: map[string]bool{}}
}

// Nodes returns n nodes named node0001… with g GPUs each, all idle, in
// partition "gpu".
func Nodes(n, g int) []slurmclient.Node {
	out := make([]slurmclient.Node, n)
	w := max(len(fmt.Sprint(n)), 4)
	for i := range out {
		out[i] = slurmclient.Node{Name: fmt.Sprintf("node%0*d", w, i+1), State: "IDLE", GPUs: g, Partitions: []string{"gpu"}}
	}
	return out
}

// SetInterceptor installs f (nil removes it).
func (f *Fake) SetInterceptor(fn Interceptor) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.intercept = fn
}

// FailOnce returns an interceptor that fails the first call matching
// method (and jobID, when not empty) with err, and lets every other call
// through.
func FailOnce(method, jobID string, err error) Interceptor {
	done := false
	return func(c Call) error {
		if done || c.Method != method || (jobID != "" && c.JobID != jobID) {
			return nil
		}
		done = true
		return err
	}
}

// Submit adds or replaces job j (copied). A pending job with priority 0
// and not held gets BasePriority.
func (f *Fake) Submit(j slurmclient.Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.jobs == nil {
		f.jobs = map[string]*slurmclient.Job{}
	}
	if j.State == "" {
		j.State = jobstate.Pending
	}
	if j.Priority == 0 && !j.Held {
		j.Priority = f.base()
	}
	c := j
	f.jobs[j.ID] = &c
}

func (f *Fake) base() uint32 {
	if f.BasePriority == 0 {
		return 1000
	}
	return f.BasePriority
}

// computed is the priority the priority plugin gives job id: BasePriority
// plus its site factor.
func (f *Fake) computed(id string) uint32 { return f.base() + f.factor[id] }

// SiteFactor returns the site factor of job id (0: Slurm's default).
func (f *Fake) SiteFactor(id string) uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.factor[id]
}

// SupportsSiteFactor implements sidecar.Slurm: false with NoSiteFactor.
func (f *Fake) SupportsSiteFactor() bool { return !f.NoSiteFactor }

// Job returns a copy of job id and whether it exists.
func (f *Fake) Job(id string) (slurmclient.Job, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return slurmclient.Job{}, false
	}
	return *j, true
}

// Edit changes job id in place with fn (for tests that play the admin or
// the scheduler); it reports whether the job exists.
func (f *Fake) Edit(id string, fn func(j *slurmclient.Job)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if ok {
		fn(j)
	}
	return ok
}

// EditNode changes node name in place with fn; it reports whether the node
// exists.
func (f *Fake) EditNode(name string, fn func(n *slurmclient.Node)) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.node(name)
	if i >= 0 {
		fn(&f.nodes[i])
	}
	return i >= 0
}

// Start marks job id running on the given nodes, taking gpusPerNode GPUs
// on each.
func (f *Fake) Start(id string, nodes []string, gpusPerNode int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return fmt.Errorf("fake: start %s: %w", id, slurmclient.ErrJobGone)
	}
	j.State, j.Nodes, j.GPUIndices = jobstate.Running, slices.Clone(nodes), map[string][]int{}
	for _, n := range nodes {
		i := f.node(n)
		if i < 0 {
			return fmt.Errorf("fake: start %s: no node %s", id, n)
		}
		// The next indices up from those in use, as gres_detail shows them
		// (the Fake frees by count: a test that mixes starts and ends
		// on one node may see indices that overlap).
		for x := range gpusPerNode {
			j.GPUIndices[n] = append(j.GPUIndices[n], f.nodes[i].GPUsUsed+x)
		}
		f.nodes[i].GPUsUsed += gpusPerNode
		f.nodes[i].State = "MIXED"
		if f.nodes[i].GPUsUsed >= f.nodes[i].GPUs {
			f.nodes[i].State = "ALLOCATED"
		}
	}
	return nil
}

// Finish ends job id: it leaves the queue, frees its GPUs (gpusPerNode on
// each of its nodes) and, when runTime > 0, appears in accounting with that
// run time (its end counted as Submit+runTime, as the predictor's history
// does).
func (f *Fake) Finish(id string, gpusPerNode int, runTime time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return
	}
	delete(f.jobs, id)
	f.free(j.Nodes, gpusPerNode)
	if runTime > 0 {
		f.acct = append(f.acct, job.Job{ID: j.ID, Submit: float64(j.Submit.Unix()), User: j.User, Name: j.Name,
			Account: j.Account, Partition: j.Partition, QOS: j.QOS, GPUs: j.GPUs.Total,
			RunTime: runTime.Seconds(), TimeLimit: j.TimeLimit.Seconds(), State: "COMPLETED",
			Nodes: len(j.Nodes), Command: j.Command})
	}
}

// Cancel removes job id from the queue without accounting.
func (f *Fake) Cancel(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.jobs, id)
}

// AddAccounting appends finished job records (end = Submit+RunTime).
func (f *Fake) AddAccounting(js ...job.Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acct = append(f.acct, js...)
}

// Writes returns the successful writes so far, in order.
func (f *Fake) Writes() []Write {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.writes)
}

// ResetWrites forgets the recorded writes.
func (f *Fake) ResetWrites() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = nil
}

// Calls returns how many times method was called (failed calls included).
func (f *Fake) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *Fake) node(name string) int {
	for i := range f.nodes {
		if f.nodes[i].Name == name {
			return i
		}
	}
	return -1
}

func (f *Fake) enter(c Call) error {
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[c.Method]++
	if f.intercept != nil {
		return f.intercept(c)
	}
	return nil
}

// Jobs implements sidecar.Slurm: pending and running jobs by id.
func (f *Fake) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.enter(Call{Method: "Jobs"}); err != nil {
		return nil, err
	}
	out := make([]slurmclient.Job, 0, len(f.jobs))
	for _, j := range f.jobs {
		c := *j
		c.RequiredNodes = slices.Clone(j.RequiredNodes)
		c.Nodes = slices.Clone(j.Nodes)
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool { return lessID(out[a].ID, out[b].ID) })
	return out, nil
}

// lessID orders numeric job ids numerically.
func lessID(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// Nodes implements sidecar.Slurm.
func (f *Fake) Nodes(ctx context.Context) ([]slurmclient.Node, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.enter(Call{Method: "Nodes"}); err != nil {
		return nil, err
	}
	return slices.Clone(f.nodes), nil
}

// AccountingJobs implements sidecar.Slurm: records whose end
// (Submit+RunTime) lies in [from, to), ordered by end then id.
func (f *Fake) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := f.enter(Call{Method: "AccountingJobs"}); err != nil {
		return nil, err
	}
	lo, hi := float64(from.Unix()), float64(to.Unix())
	var out []job.Job
	for _, j := range f.acct {
		if e := j.Submit + j.RunTime; e >= lo && e < hi {
			out = append(out, j)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		ea, eb := out[a].Submit+out[a].RunTime, out[b].Submit+out[b].RunTime
		if ea != eb {
			return ea < eb
		}
		return lessID(out[a].ID, out[b].ID)
	})
	return out, nil
}

// UpdateJob implements sidecar.Slurm with slurmctld's rules for the fields
// the sidecar writes, behind the REST client's own checks: an unknown job
// is ErrJobGone; what slurmclient.Writable refuses is refused (a job that
// is not pending, a node list for an array or heterogeneous job, a write to
// a component other than the leader); a write to a heterogeneous job's
// leader reaches every component; a priority on a held job is ErrHeld; an empty
// node list or a node the cluster lacks is ErrInvalid. A release gives the
// job BasePriority plus its site factor (the priority plugin recomputes
// it, dropping an explicit priority) unless Priority is set in the same
// update; a site factor moves the priority of a job whose priority was not
// set explicitly, and is refused with ErrUnsupported under NoSiteFactor.
// The update is recorded when it succeeds.
func (f *Fake) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.enter(Call{Method: "UpdateJob", JobID: id, Update: u}); err != nil {
		return err
	}
	j, ok := f.jobs[id]
	if !ok {
		return fmt.Errorf("fake: update %s: %w", id, slurmclient.ErrJobGone)
	}
	if u.SiteFactor != nil && f.NoSiteFactor {
		return fmt.Errorf("fake: update %s: site factor: %w", id, slurmclient.ErrUnsupported)
	}
	if err := slurmclient.Writable(*j, u); err != nil {
		return fmt.Errorf("fake: update: %w", err)
	}
	if u.RequiredNodes != nil {
		for _, n := range u.RequiredNodes {
			if f.node(n) < 0 {
				return fmt.Errorf("fake: update %s: %w: node %s", id, slurmclient.ErrInvalid, n)
			}
		}
	}
	if u.Priority != nil && j.Held && (u.Hold == nil || *u.Hold) {
		return fmt.Errorf("fake: update %s: %w", id, slurmclient.ErrHeld)
	}
	// Slurm applies a write to a heterogeneous job's leader to every
	// component, except a site factor, which reaches the leader only.
	targets := []*slurmclient.Job{j}
	for _, c := range j.Het.Components {
		if cj := f.jobs[c]; cj != nil && c != id {
			targets = append(targets, cj)
		}
	}
	if f.factor == nil {
		f.factor, f.direct = map[string]uint32{}, map[string]bool{}
	}
	for _, j := range targets {
		if u.Hold != nil && !*u.Hold {
			// An Operator's release drops an explicit priority.
			f.direct[j.ID] = false
			j.Held, j.Reason, j.Priority = false, "Priority", f.computed(j.ID)
		}
		if u.RequiredNodes != nil {
			j.RequiredNodes = slices.Clone(u.RequiredNodes)
		}
		if u.GPUsPerNode != nil {
			j.GPUs.PerNode = *u.GPUsPerNode
		}
		if u.SiteFactor != nil && j == targets[0] {
			f.factor[j.ID] = *u.SiteFactor
			if !j.Held && !f.direct[j.ID] {
				j.Priority = f.computed(j.ID)
			}
		}
		if u.Priority != nil {
			j.Priority = *u.Priority
			f.direct[j.ID] = true
		}
		if u.Hold != nil && *u.Hold {
			j.Held, j.Reason, j.Priority = true, "JobHeldAdmin", 0
			f.direct[j.ID] = true
		}
	}
	c := u
	c.RequiredNodes = slices.Clone(u.RequiredNodes)
	f.writes = append(f.writes, Write{JobID: id, Update: c})
	return nil
}

// SupportsDelivery implements sidecar.Slurm: every delivery, or only
// DeliverAll under WholeJobSignalsOnly.
func (f *Fake) SupportsDelivery(d slurmclient.Delivery) bool {
	switch d {
	case slurmclient.DeliverAll:
		return true
	case slurmclient.DeliverSteps, slurmclient.DeliverBatch:
		return !f.WholeJobSignalsOnly
	}
	return false
}

// SignalJob implements sidecar.Slurm as the REST client does: a delivery
// the release cannot make is refused (ErrUnsupported), a job that is not
// running too (ErrNotPending), a gone job with ErrJobGone. The signal is
// recorded (Signals); the job is not changed: a test plays its answer
// (Requeue, Finish).
func (f *Fake) SignalJob(ctx context.Context, id, signal string, d slurmclient.Delivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := f.enter(Call{Method: "SignalJob", JobID: id}); err != nil {
		return err
	}
	if !f.SupportsDelivery(d) {
		return fmt.Errorf("fake: signal %s: %w: delivery %v", id, slurmclient.ErrUnsupported, d)
	}
	j, ok := f.jobs[id]
	switch {
	case !ok:
		return fmt.Errorf("fake: signal %s: %w", id, slurmclient.ErrJobGone)
	case j.State != jobstate.Running:
		return fmt.Errorf("fake: signal %s: %w: the job is %s", id, slurmclient.ErrNotPending, j.State)
	}
	f.signals = append(f.signals, Signal{JobID: id, Signal: signal, Delivery: d})
	return nil
}

// Signals returns the signals delivered so far, in order.
func (f *Fake) Signals() []Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.signals)
}

// Requeue puts running job id back in the queue as slurmctld does after
// `scontrol requeue`: pending, held back for its begin time (Reason
// BeginTime, eligible at eligible), its GPUs (gpusPerNode on each of its
// nodes) freed.
func (f *Fake) Requeue(id string, gpusPerNode int, eligible time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return
	}
	f.free(j.Nodes, gpusPerNode)
	j.State, j.Reason, j.Nodes, j.GPUIndices, j.Eligible = jobstate.Pending, "BeginTime", nil, nil, eligible
}

// free gives back gpusPerNode GPUs on each of nodes.
func (f *Fake) free(nodes []string, gpusPerNode int) {
	for _, n := range nodes {
		if i := f.node(n); i >= 0 {
			f.nodes[i].GPUsUsed = max(0, f.nodes[i].GPUsUsed-gpusPerNode)
			f.nodes[i].State = "MIXED"
			if f.nodes[i].GPUsUsed == 0 {
				f.nodes[i].State = "IDLE"
			}
		}
	}
}

// String summarises a write for test failure messages.
func (w Write) String() string {
	var parts []string
	u := w.Update
	if u.Priority != nil {
		parts = append(parts, fmt.Sprintf("priority=%d", *u.Priority))
	}
	if u.SiteFactor != nil {
		parts = append(parts, fmt.Sprintf("site_factor=%d", *u.SiteFactor))
	}
	if u.RequiredNodes != nil {
		parts = append(parts, "nodes="+strings.Join(u.RequiredNodes, ","))
	}
	if u.GPUsPerNode != nil {
		parts = append(parts, fmt.Sprintf("gpn=%d", *u.GPUsPerNode))
	}
	if u.Hold != nil {
		parts = append(parts, fmt.Sprintf("hold=%v", *u.Hold))
	}
	return w.JobID + ":" + strings.Join(parts, " ")
}
