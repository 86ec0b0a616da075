package sidecar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// phase is where a tracked job stands.
type phase uint8

const (
	// phQueued: waiting in the policy.
	phQueued phase = iota
	// phDispatched: the policy started it (its turn has come); Slurm has
	// not started it yet. It holds its placement's GPUs in the free model.
	phDispatched
	// phRunning: Slurm runs a job the policy started.
	phRunning
	// phIdle: tracked but not in the policy (withdrawn from it: held,
	// out of scope, taken over by an admin, started by Slurm before its
	// turn; or running after a restart).
	phIdle
)

var phaseNames = [...]string{"queued", "dispatched", "running", "idle"}

func (p phase) String() string { return phaseNames[p] }

// entry is one job the sidecar tracks.
type entry struct {
	id   string
	job  job.Job
	task *policy.Task // nil when the policy does not hold the job
	ph   phase
	why  string // why an idle job is left alone
	seq  int
	est  predictor.Estimate
	// prof is the job's profile, resolved when it arrives.
	prof jobprofile.Resolved

	// released: the policy's virtual machine has released the job (A-SRPT;
	// counted once in CycleReport.Released).
	released bool
	// parked: withdrawn from the policy while pending (held, out of scope);
	// remaining is its virtual work left then, seconds, and it rejoins the
	// policy with it (policy.Restore) when it becomes eligible again.
	parked    bool
	remaining float64

	// Dispatch.
	dseq     int
	placedAt float64
	place    placement.Placement
	placed   bool

	// What asrpt wrote to Slurm and still believes in effect.
	prio    uint32
	nodes   []string
	gpn     int
	noNodes bool // Slurm refused a node list for this job; not retried
	// ownNodes: the job named its nodes when asrpt first saw it; wroteNodes:
	// asrpt has sent it a node list. Giveback clears the node list of a job
	// with wroteNodes and not ownNodes.
	ownNodes, wroteNodes bool
	handsOff             bool // an admin changed the priority asrpt wrote
	// fails holds, by write kind (priority, nodes), the failure of the
	// last write of that kind, until one succeeds.
	fails map[string]*writeFailure

	// tasks is an array remainder's pending task indices when last read:
	// a change means Slurm started a task.
	tasks string

	sj *slurmclient.Job // this cycle's record, nil when absent
}

// Sidecar drives Slurm with a policy: every cycle it reads the queue,
// brings the policy up to date, and writes priorities and node lists.
// RunOnce and Run must not be called concurrently; Handler may be served
// from other goroutines.
type Sidecar struct {
	cfg       Config
	cl        *cluster.Cluster
	nodeIndex map[string]int
	env       *policy.Env
	pol       policy.Policy
	pred      predictor.Predictor
	profiles  *jobprofile.Resolver
	slurm     Slurm
	log       zerolog.Logger
	m         *metrics
	health

	entries  map[string]*entry
	byTask   map[*policy.Task]*entry
	nextSeq  int
	nextDSeq int
	clock    float64   // time of the last cycle, Unix seconds
	acctFrom time.Time // start of the next accounting query
	finished map[string]finishedJob
	active   map[string]int // open incidents: key → occurrences
	seen     map[string]bool
	dirty    bool
	// regroups holds the recurrence groups (predictor.GroupKey) of the
	// jobs accounting reported finished this cycle: their waiting jobs are
	// predicted again (design §5b.3).
	regroups map[string]bool

	labels []uint32
	cur    []uint32

	// view groups this cycle's records of arrays and heterogeneous jobs;
	// nodeParts holds the partitions of each cluster node (by index) as
	// this cycle's node list gave them.
	view      queueView
	nodeParts [][]string
}

// finishedJob remembers a job that left the queue until accounting reports
// its run time, for the prediction error metric.
type finishedJob struct {
	est   float64
	since float64
}

// Options are the sidecar's collaborators.
type Options struct {
	// Cluster is the cluster model (slurmconf.LoadCluster).
	Cluster *cluster.Cluster
	// Slurm is the REST client or a fake.
	Slurm Slurm
	// Predictor predicts run times; nil builds cfg.Predictor.
	Predictor predictor.Predictor
	// Log receives the sidecar's log lines.
	Log zerolog.Logger
}

// New returns a sidecar for cfg. It loads the state file (a missing file
// is an empty state; an unreadable or corrupt one is logged, counted,
// moved aside and rebuilt from Slurm, never fatal).
func New(cfg Config, o Options) (*Sidecar, error) {
	if o.Cluster == nil || o.Slurm == nil {
		return nil, errors.New("sidecar: cluster and Slurm client are required")
	}
	if err := o.Cluster.Validate(); err != nil {
		return nil, fmt.Errorf("sidecar: cluster model: %w", err)
	}
	env := policy.NewEnv(o.Cluster, cfg.Params)
	pol, err := policy.New(cfg.Policy, env)
	if err != nil {
		return nil, fmt.Errorf("sidecar: %w", err)
	}
	pred := o.Predictor
	if pred == nil {
		if pred, err = predictor.ByName(cfg.Predictor, cfg.PredictorConfig()); err != nil {
			return nil, fmt.Errorf("sidecar: %w", err)
		}
	}
	s := &Sidecar{
		cfg: cfg, cl: o.Cluster, env: env, pol: pol, pred: pred, slurm: o.Slurm, log: o.Log,
		profiles: cfg.Profiles.Resolver(),
		m:        newMetrics(), nodeIndex: make(map[string]int, len(o.Cluster.Nodes)),
		entries: map[string]*entry{}, byTask: map[*policy.Task]*entry{}, regroups: map[string]bool{},
		finished: map[string]finishedJob{}, active: map[string]int{}, seen: map[string]bool{},
		clock: math.Inf(-1),
	}
	for i, n := range o.Cluster.Nodes {
		s.nodeIndex[n.Name] = i
	}
	s.started.Store(time.Now().UnixNano())
	if cfg.StateFile != "" {
		st, err := readState(cfg.StateFile)
		switch {
		case err == nil:
			if err := s.restore(st); err != nil {
				s.stateProblem(err)
			}
		case errors.Is(err, errNoState):
		default:
			s.stateProblem(err)
		}
	}
	return s, nil
}

// stateProblem reports an unusable state file, moves it aside (unless in a
// dry run) and starts from an empty state.
func (s *Sidecar) stateProblem(err error) {
	s.m.stateErrors.Inc()
	ev := s.log.Error().Err(err).Str("file", s.cfg.StateFile)
	if !s.cfg.DryRun {
		if moved, merr := moveAside(s.cfg.StateFile); merr == nil {
			ev = ev.Str("moved_to", moved)
		}
	}
	ev.Msg("state file unusable; rebuilding the state from Slurm")
	s.resetState()
}

func (s *Sidecar) resetState() {
	s.pol, _ = policy.New(s.cfg.Policy, s.env)
	s.entries = map[string]*entry{}
	s.byTask = map[*policy.Task]*entry{}
	s.nextSeq, s.nextDSeq = 0, 0
	s.clock = math.Inf(-1)
}

// jobStates are the keys of CycleReport.Jobs, each exported as a gauge
// (0 when the cycle saw no such job).
var jobStates = []string{"pending", "running", "held", "out_of_scope", "managed", "dispatched", "hands_off"}

// CycleReport is what one cycle saw and did.
type CycleReport struct {
	// Time is the cycle's time.
	Time time.Time
	// Duration is the wall time the cycle took.
	Duration time.Duration
	// Jobs counts the jobs seen, by state: pending, running, held,
	// out_of_scope, managed, dispatched, hands_off.
	Jobs map[string]int
	// Arrived counts the jobs that entered the policy this cycle;
	// Released those the virtual machine released; Dispatched those whose
	// turn came.
	Arrived, Released, Dispatched int
	// Writes counts the updates sent, by kind (priority, nodes); in a dry
	// run, those that would have been sent. Failed counts failed ones by
	// reason; Deferred those left for later by the write limit.
	Writes   map[string]int
	Failed   map[string]int
	Deferred int
	// DeadlineHit is set when the cycle's deadline ended its writes.
	DeadlineHit bool
	// Backoff counts the changed values not sent this cycle because the
	// last write of the same kind to the same job failed and its backoff
	// runs.
	Backoff int
	// Plan is the ranked queue, head first (filled in dry runs and when
	// asked through Plan).
	Plan []PlanRow
}

// PlanRow is one managed pending job in the order asrpt gives Slurm, or,
// after them, a pending job asrpt leaves alone (Stage "left_alone", Rank 0).
type PlanRow struct {
	JobID string `json:"job_id"`
	User  string `json:"user"`
	Name  string `json:"name"`
	// Shape is the record's kind: plain, array_remainder, array_task,
	// het_leader or het_component (slurmclient.Shape).
	Shape string `json:"shape"`
	// GPUs is the unit's GPUs: all components of a heterogeneous job, one
	// task of an array.
	GPUs int `json:"gpus"`
	// Predicted is the predicted run time, seconds; Known false when the
	// predictor had never seen the job's kind.
	Predicted float64 `json:"predicted_s"`
	Known     bool    `json:"known"`
	// VirtualRemaining is the virtual work left on A-SRPT's machine,
	// seconds; 0 once released.
	VirtualRemaining float64 `json:"virtual_remaining_s"`
	// Stage is dispatched (its turn has come: nodes chosen), released
	// (waiting for GPUs), waiting (on the virtual machine) or left_alone.
	Stage string `json:"stage"`
	// Rank is the 1-based position in the order.
	Rank int `json:"rank"`
	// PriorityNow is the job's priority in Slurm; PriorityNew the value
	// asrpt wants (equal when nothing is to be written).
	PriorityNow uint32 `json:"priority_now"`
	PriorityNew uint32 `json:"priority_new"`
	// Nodes are the nodes chosen for a dispatched job, when asrpt writes
	// them.
	Nodes []string `json:"nodes,omitempty"`
	// Note says why a dispatched job gets no node list, or why a job is
	// left alone.
	Note string `json:"note,omitempty"`
	// Family is the job name's family (what [[profiles.rule]] family
	// matches).
	Family string `json:"family,omitempty"`
	// Profile is the communication profile Heavy-Edge places the job by: a
	// catalogue model, or data-parallel; ProfileSource where it came from
	// (comment, rule, default); ProfileProblem why a profile the job named,
	// or a rule gave it, was refused.
	Profile        string `json:"profile,omitempty"`
	ProfileSource  string `json:"profile_source,omitempty"`
	ProfileProblem string `json:"profile_problem,omitempty"`
	// AlphaMin is the profile's per-iteration time at its best placement,
	// seconds; Alpha that of the nodes chosen (dispatched jobs, 0 when not
	// known); Heavy marks a communication-heavy job (α_max/α_min at least
	// policy.comm_heavy).
	AlphaMin float64 `json:"alpha_min_s,omitempty"`
	Alpha    float64 `json:"alpha_s,omitempty"`
	Heavy    bool    `json:"heavy,omitempty"`
}

// RunOnce runs one cycle at time now: read the queue and the nodes, feed
// new accounting records to the predictor, bring the policy up to date,
// rank, place the jobs whose turn has come, and write the changed values
// (none in a dry run). A failed read returns an error and changes nothing;
// failed writes are counted in the report and retried in later cycles. The
// state is saved at the end of a cycle that changed it.
func (s *Sidecar) RunOnce(ctx context.Context, now time.Time) (CycleReport, error) {
	return s.cycle(ctx, now, s.cfg.DryRun)
}

// Plan runs one cycle as a dry run, whatever the configuration says, and
// returns its report with the plan.
func (s *Sidecar) Plan(ctx context.Context, now time.Time) (CycleReport, error) {
	return s.cycle(ctx, now, true)
}

// cycleDeadline bounds one cycle's reads and writes: twice the interval, at
// least a minute. A slow slurmrestd then ends a cycle's writes at the
// deadline (the rest go out next cycle) instead of holding the cycle for
// as long as the queue is.
func (s *Sidecar) cycleDeadline() time.Duration { return max(2*s.cfg.Interval, time.Minute) }

func (s *Sidecar) cycle(parent context.Context, now time.Time, dry bool) (CycleReport, error) {
	ctx, cancel := context.WithTimeout(parent, s.cycleDeadline())
	defer cancel()
	start := time.Now()
	rep := CycleReport{Time: now, Jobs: map[string]int{}, Writes: map[string]int{}, Failed: map[string]int{}}
	clear(s.seen)
	t := unixSeconds(now)
	if t < s.clock {
		t = s.clock // the policy's time never goes back
	}
	// The job list is read last, just before the decisions and writes,
	// to keep the window in which Slurm can start a job asrpt then writes
	// to short (accounting queries are the slow ones).
	nodes, err := s.slurm.Nodes(ctx)
	if err != nil {
		return s.fail(rep, start, "nodes", err)
	}
	s.pollAccounting(ctx, now)
	jobs, err := s.slurm.Jobs(ctx)
	if err != nil {
		return s.fail(rep, start, "jobs", err)
	}
	s.clock = t
	rep.Arrived = s.reconcile(t, jobs, &rep)
	s.repredict(t)
	free := s.freeModel(nodes, jobs)
	s.placeDispatched(t, free)
	rep.Dispatched = s.schedule(t, free)
	if errs, n := s.env.TakeErrors(); n > 0 {
		s.m.placementErrors.Add(float64(n))
		s.incident("placement", errs[0])
	}
	rep.Released = s.countReleases()
	ranked := s.rank()
	want := s.label(ranked)
	if err := s.apply(ctx, ranked, want, dry, &rep); err != nil {
		if parent.Err() != nil || ctx.Err() == nil {
			s.closeIncidents()
			return s.fail(rep, start, "write", err)
		}
		// The cycle's deadline, not a shutdown: what was written stays
		// written and is saved; the rest goes out next cycle.
		rep.DeadlineHit = true
		s.m.deadlines.Inc()
		s.incident("deadline", err)
	}
	if dry {
		rep.Plan = s.plan(ranked, want, jobs)
	}
	if !dry && s.dirty && s.cfg.StateFile != "" {
		if err := writeState(s.cfg.StateFile, s.snapshot()); err != nil {
			s.m.stateErrors.Inc()
			s.incident("state", err)
		} else {
			s.dirty = false
		}
	}
	s.closeIncidents()
	rep.Duration = time.Since(start)
	s.m.cycle.Observe(rep.Duration.Seconds())
	s.m.cycles.WithLabelValues("ok").Inc()
	s.m.lastSuccess.Set(float64(now.Unix()))
	s.lastOK.Store(time.Now().UnixNano())
	for _, k := range jobStates {
		s.m.jobs.WithLabelValues(k).Set(float64(rep.Jobs[k]))
	}
	s.m.virtual.Set(float64(s.virtualLen()))
	return rep, nil
}

func (s *Sidecar) fail(rep CycleReport, start time.Time, op string, err error) (CycleReport, error) {
	rep.Duration = time.Since(start)
	s.m.cycle.Observe(rep.Duration.Seconds())
	s.m.cycles.WithLabelValues("error").Inc()
	if op != "write" {
		s.m.errors.WithLabelValues(op, Reason(err)).Inc()
	}
	return rep, fmt.Errorf("sidecar: %s: %w", op, err)
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// incident logs err under key the first time it happens; repeats are only
// counted until closeIncidents sees a cycle without it.
func (s *Sidecar) incident(key string, err error) {
	s.seen[key] = true
	s.active[key]++
	if s.active[key] == 1 {
		msg := "slurm call failed; retrying in later cycles"
		switch key {
		case "state":
			msg = "state file could not be saved; retrying in later cycles"
		case "deadline":
			msg = "cycle deadline reached before every write went out; the rest go out in later cycles"
		case "placement":
			msg = "placing a job failed for another reason than free GPUs (the cluster model and Slurm disagree, or a bug); the job waits unplaced"
		}
		s.log.Warn().Err(err).Str("incident", key).Str("reason", Reason(err)).Msg(msg)
	}
}

// placementFailed counts a failed placement of e (not a lack of free
// GPUs) as a placement incident.
func (s *Sidecar) placementFailed(e *entry, err error) {
	s.m.placementErrors.Inc()
	s.incident("placement", fmt.Errorf("job %s: %w", e.id, err))
}

// closeIncidents ends the incidents not seen in this cycle.
func (s *Sidecar) closeIncidents() {
	for k, n := range s.active {
		if !s.seen[k] {
			s.log.Info().Str("incident", k).Int("occurrences", n).Msg("recovered")
			delete(s.active, k)
		}
	}
}

// accountingLag is how far behind now accounting is read: slurmdbd
// records a job's end a little after it happens.
const accountingLag = 30 * time.Second

// accountingWindow bounds one accounting query.
const accountingWindow = 24 * time.Hour

// pollAccounting feeds the jobs that finished since the last poll to the
// predictor, warming it with cfg.History on the first call. A failure is
// logged once and retried from the same point next cycle.
func (s *Sidecar) pollAccounting(ctx context.Context, now time.Time) {
	to := now.Add(-accountingLag)
	if s.acctFrom.IsZero() {
		s.acctFrom = to.Add(-s.cfg.History)
	}
	for s.acctFrom.Before(to) {
		end := s.acctFrom.Add(accountingWindow)
		if end.After(to) {
			end = to
		}
		recs, err := s.slurm.AccountingJobs(ctx, s.acctFrom, end)
		if err != nil {
			s.m.errors.WithLabelValues("accounting", Reason(err)).Inc()
			s.incident("accounting", err)
			return
		}
		for i := range recs {
			j := &recs[i]
			if !predictor.Finished(j) {
				continue
			}
			s.pred.Observe(j, predictor.End(j))
			s.regroups[predictor.GroupKey(j)] = true
			if f, ok := s.finished[j.ID]; ok {
				delete(s.finished, j.ID)
				s.m.predRatio.Observe(f.est / j.RunTime)
				s.m.predAbs.Observe(math.Abs(f.est - j.RunTime))
			}
		}
		s.acctFrom = end
	}
	// Forget jobs accounting never reported (cancelled before start).
	for id, f := range s.finished {
		if unixSeconds(now)-f.since > 86400 {
			delete(s.finished, id)
		}
	}
}

// repredict predicts again the waiting jobs whose recurrence group had a
// job finish since the last cycle and hands the changed estimates to the
// policy, which re-orders them (design §5b.3).
func (s *Sidecar) repredict(t float64) {
	if len(s.regroups) == 0 {
		return
	}
	if upd, ok := s.pol.(policy.Updater); ok {
		for _, e := range s.entries {
			if e.ph != phQueued || e.task == nil || !s.regroups[predictor.GroupKey(&e.job)] {
				continue
			}
			if est := s.pred.Repredict(&e.job, t); est != e.est {
				e.est = est
				upd.Update(t, e.task, est)
				s.dirty = true
			}
		}
	}
	clear(s.regroups)
}

// eligible reports whether a Slurm job may be managed, and why not.
func (s *Sidecar) eligible(sj *slurmclient.Job, e *entry) (bool, string) {
	if !sj.Pending() {
		return false, "not pending"
	}
	if ok, why := s.view.manageable(sj); !ok {
		return false, why
	}
	g := s.view.gpus(sj)
	switch {
	case sj.Held:
		return false, "held"
	case g <= 0:
		return false, "no GPUs"
	case !s.cfg.Scope.Contains(sj.Partition, sj.QOS, sj.Account):
		return false, "out of scope"
	case g > s.env.G:
		return false, "larger than the cluster"
	case e != nil && e.handsOff:
		return false, "priority set by an admin"
	}
	return true, ""
}

// reconcile brings the tracked jobs and the policy up to date with Slurm's
// queue and returns the number of arrivals.
func (s *Sidecar) reconcile(t float64, jobs []slurmclient.Job, rep *CycleReport) int {
	for _, e := range s.entries {
		e.sj = nil
	}
	s.view = newQueueView(jobs)
	var arrivals []*entry
	for i := range jobs {
		sj := &jobs[i]
		if i > 0 && jobs[i-1].ID == sj.ID {
			continue // listed twice (the client orders jobs by id): counted once
		}
		e := s.entries[sj.ID]
		switch {
		case sj.Pending() && sj.Held:
			rep.Jobs["held"]++
		case sj.Pending():
			rep.Jobs["pending"]++
		default:
			rep.Jobs["running"]++
		}
		if e == nil {
			if ok, why := s.eligible(sj, nil); ok {
				e = &entry{id: sj.ID, sj: sj, ownNodes: len(sj.RequiredNodes) > 0}
				s.entries[sj.ID] = e
				arrivals = append(arrivals, e)
			} else if why == "out of scope" {
				rep.Jobs["out_of_scope"]++
			}
			continue
		}
		e.sj = sj
		if !sj.Pending() {
			switch e.ph {
			case phDispatched:
				e.ph = phRunning
				s.dirty = true
			case phQueued:
				s.withdraw(t, e, "started by Slurm before its turn", false)
			}
			continue
		}
		// A priority of 0 on a job that is not held is no value at all (a
		// response without one, or out of range): it proves nothing.
		if e.prio != 0 && !sj.Held && !e.handsOff && sj.Priority != 0 && sj.Priority != e.prio {
			e.handsOff = true
			s.dirty = true
			s.log.Info().Str("job", e.id).Uint32("wrote", e.prio).Uint32("now", sj.Priority).
				Msg("priority changed by someone else; leaving the job alone")
		}
		ok, why := s.eligible(sj, e)
		if sj.Shape() == slurmclient.ShapeArrayRemainder {
			if e.ph == phDispatched && e.tasks != "" && sj.Array.Tasks != e.tasks {
				// A task of the array whose turn had come has started: the
				// rest of the array arrives again as its next task.
				s.leavePolicy(t, e, "array task started")
			}
			e.tasks = sj.Array.Tasks
		}
		switch e.ph {
		case phQueued:
			if !ok {
				s.withdraw(t, e, why, true)
			}
		case phDispatched:
			if !ok {
				s.leavePolicy(t, e, why)
			}
		case phRunning: // requeued
			s.leavePolicy(t, e, "requeued")
			if ok {
				arrivals = append(arrivals, e)
			}
		case phIdle:
			if ok {
				arrivals = append(arrivals, e)
			}
		}
	}
	for _, e := range s.entries {
		if e.sj == nil {
			s.vanish(t, e)
		}
	}
	slices.SortFunc(arrivals, func(a, b *entry) int {
		if c := a.sj.Submit.Compare(b.sj.Submit); c != 0 {
			return c
		}
		return compareID(a.id, b.id)
	})
	n := 0
	for _, e := range arrivals {
		if e.parked && s.rejoin(t, e) || !e.parked && s.arrive(t, e) {
			n++
		}
	}
	for _, e := range s.entries {
		switch {
		case e.handsOff:
			rep.Jobs["hands_off"]++
		case e.ph == phDispatched:
			rep.Jobs["dispatched"]++
			rep.Jobs["managed"]++
		case e.ph == phQueued:
			rep.Jobs["managed"]++
		}
	}
	return n
}

// compareID orders job ids numerically when they are numbers of any
// length, and as strings otherwise.
func compareID(a, b string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// toJob converts a Slurm job to the project's record.
func toJob(sj *slurmclient.Job) job.Job {
	return job.Job{ID: sj.ID, Submit: unixSeconds(sj.Submit), User: sj.User, Name: sj.Name,
		Account: sj.Account, Partition: sj.Partition, QOS: sj.QOS, GPUs: sj.GPUs.Total,
		TimeLimit: sj.TimeLimit.Seconds(), State: sj.State}
}

// arrive predicts e and hands it to the policy.
func (s *Sidecar) arrive(t float64, e *entry) bool {
	e.job = toJob(e.sj)
	e.job.GPUs = s.view.gpus(e.sj)
	e.tasks = e.sj.Array.Tasks
	e.est = s.pred.Predict(&e.job)
	e.prof = s.profiles.Resolve(e.sj.Comment, predictor.Family(e.job.Name), e.job.Account, max(e.job.GPUs, 1))
	e.job.Profile = e.prof.Model
	s.m.profiles.WithLabelValues(string(e.prof.Source)).Inc()
	if e.prof.Problem != "" {
		s.m.profileProblems.WithLabelValues(e.prof.ProblemKind).Inc()
		s.log.Warn().Str("job", e.id).Str("problem", e.prof.Problem).Str("profile", e.prof.Model).
			Str("source", string(e.prof.Source)).Msg("job profile refused; using the next source")
	}
	e.seq = s.nextSeq
	s.nextSeq++
	e.released, e.parked, e.remaining = false, false, 0
	return s.enter(t, e, func(task *policy.Task) { s.pol.Arrive(t, task) })
}

// rejoin puts a parked job back into the policy with the virtual work it
// had left when it was withdrawn (a released job rejoins the end of the
// release queue).
func (s *Sidecar) rejoin(t float64, e *entry) bool {
	released, remaining := e.released, e.remaining
	e.parked, e.remaining = false, 0
	return s.enter(t, e, func(task *policy.Task) { s.pol.Restore(t, task, remaining, released) })
}

// enter creates e's task with e.est and hands it to the policy by add.
func (s *Sidecar) enter(t float64, e *entry, add func(*policy.Task)) bool {
	task, err := s.env.NewLiveTask(&e.job, e.seq, e.est, e.prof.Profile)
	if err != nil {
		e.ph, e.why = phIdle, err.Error()
		s.log.Warn().Err(err).Str("job", e.id).Msg("job cannot be scheduled by the policy")
		return false
	}
	add(task)
	e.task, e.ph, e.why = task, phQueued, ""
	s.byTask[task] = e
	s.dirty = true
	return true
}

// withdraw takes a waiting job out of the policy and keeps e as idle;
// park keeps its virtual work left so that it can rejoin where it was.
func (s *Sidecar) withdraw(t float64, e *entry, why string, park bool) {
	if e.task != nil {
		if park {
			e.parked, e.remaining = true, e.task.VirtualRemaining()
			e.released = !math.IsNaN(e.task.Released)
		}
		s.pol.Withdraw(t, e.task)
		delete(s.byTask, e.task)
		e.task = nil
	}
	e.ph, e.why = phIdle, why
	s.dirty = true
}

// leavePolicy finishes a task the policy holds as running and keeps e as
// idle.
func (s *Sidecar) leavePolicy(t float64, e *entry, why string) {
	if e.task != nil {
		s.pol.Finish(t, e.task)
		delete(s.byTask, e.task)
		e.task = nil
	}
	e.ph, e.why, e.placed, e.parked = phIdle, why, false, false
	s.dirty = true
}

// countReleases marks the jobs the virtual machine released since the
// last call and returns how many.
func (s *Sidecar) countReleases() int {
	n := 0
	for t, e := range s.byTask {
		if !e.released && !math.IsNaN(t.Released) {
			e.released = true
			n++
		}
	}
	return n
}

// virtualLen returns the number of waiting jobs not yet released.
func (s *Sidecar) virtualLen() int {
	n := 0
	for t, e := range s.byTask {
		if e.ph == phQueued && math.IsNaN(t.Released) {
			n++
		}
	}
	return n
}

// vanish handles a job Slurm no longer lists (finished or cancelled).
func (s *Sidecar) vanish(t float64, e *entry) {
	s.dirty = true
	switch e.ph {
	case phQueued:
		s.withdraw(t, e, "gone", false)
	case phDispatched, phRunning:
		s.finished[e.id] = finishedJob{est: e.est.Seconds, since: t}
		if e.task != nil {
			s.pol.Finish(t, e.task)
			delete(s.byTask, e.task)
		}
	}
	delete(s.entries, e.id)
}

// freeModel returns the free GPUs as Slurm reports them: each usable node
// in scope has its configured GPUs less those in use; GPU indices come from
// the running jobs where they add up, else the lowest indices count as used.
func (s *Sidecar) freeModel(nodes []slurmclient.Node, jobs []slurmclient.Job) *placement.Free {
	free := placement.NewFree(s.cl)
	used := make(map[int]uint64)
	for i := range jobs {
		for name, idx := range jobs[i].GPUIndices {
			if n, ok := s.nodeIndex[name]; ok {
				for _, x := range idx {
					if x >= 0 && x < 64 {
						used[n] |= 1 << uint(x)
					}
				}
			}
		}
	}
	seen := make([]bool, len(s.cl.Nodes))
	s.nodeParts = slices.Grow(s.nodeParts[:0], len(s.cl.Nodes))[:len(s.cl.Nodes)]
	clear(s.nodeParts)
	take := func(i int, mask uint64) {
		mask &= free.Mask(i)
		if mask != 0 {
			_ = free.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: mask}}})
		}
	}
	for k := range nodes {
		n := &nodes[k]
		i, ok := s.nodeIndex[n.Name]
		if !ok {
			continue
		}
		seen[i] = true
		s.nodeParts[i] = n.Partitions
		all := free.Mask(i)
		inScope := len(s.cfg.Scope.Partitions) == 0
		for _, p := range n.Partitions {
			inScope = inScope || contains(s.cfg.Scope.Partitions, p)
		}
		if !n.Schedulable() || !inScope {
			take(i, all)
			continue
		}
		g := s.cl.Nodes[i].GPUs
		if n.GPUs < g { // Slurm has fewer GPUs than the model: the rest is busy
			take(i, all&^(1<<uint(n.GPUs)-1))
		}
		u := used[i]
		if bits.OnesCount64(u) != n.GPUsUsed {
			u = 1<<uint(min(n.GPUsUsed, 63)) - 1
		}
		take(i, u)
	}
	for i, ok := range seen {
		if !ok {
			take(i, free.Mask(i))
		}
	}
	return free
}

// placeDispatched reserves, on free, the GPUs of the jobs whose turn has
// come but that Slurm has not started. A job whose nodes are no longer
// free, or that has waited longer than the dispatch grace on them (Slurm
// would not start it there: memory, CPUs, features the model does not
// know), gets a new Heavy-Edge placement, away from the old nodes when
// possible; one that fits nowhere keeps no placement until it does.
func (s *Sidecar) placeDispatched(t float64, free *placement.Free) {
	ds := s.dispatched()
	grace := s.cfg.DispatchGrace.Seconds()
	for _, e := range ds {
		if e.placed && s.mayUsePlacement(e, &e.place) && free.Take(&e.place) == nil {
			if t-e.placedAt <= grace {
				continue
			}
			if err := free.Give(&e.place); err != nil {
				s.placementFailed(e, err)
				continue
			}
			avoid := free.Clone()
			_ = avoid.Take(&e.place)
			if p, err := s.placeOn(avoid, e); err == nil && free.Take(&p) == nil {
				e.place, e.placedAt = p, t
				s.m.replaced.Inc()
				s.dirty = true
				continue
			}
		}
		p, err := s.placeOn(free, e)
		if st := policy.StatusOf(err); st.Code != policy.Fits {
			if st.Code == policy.Failed {
				s.placementFailed(e, err)
			}
			e.placed = false
			continue
		}
		if free.Take(&p) == nil {
			e.place, e.placed, e.placedAt = p, true, t
			s.m.replaced.Inc()
			s.dirty = true
		}
	}
}

func (s *Sidecar) placeOn(free *placement.Free, e *entry) (placement.Placement, error) {
	var prof *placement.Profile
	if e.task != nil {
		prof = e.task.Prof
	}
	if !s.mayUseAll(e, free) {
		free = free.Clone()
		for i := range s.cl.Nodes {
			if m := free.Mask(i); m != 0 && !s.mayUse(e, i) {
				_ = free.Take(&placement.Placement{Slots: []placement.Slot{{Node: i, GPUs: m}}})
			}
		}
	}
	return s.env.Placer.Place(free, e.job.GPUs, prof)
}

// dispatched returns the dispatched jobs in dispatch order.
func (s *Sidecar) dispatched() []*entry {
	var ds []*entry
	for _, e := range s.entries {
		if e.ph == phDispatched {
			ds = append(ds, e)
		}
	}
	slices.SortFunc(ds, func(a, b *entry) int { return cmp.Compare(a.dseq, b.dseq) })
	return ds
}

// schedule runs the policy's scheduling pass and returns the number of
// jobs whose turn came.
func (s *Sidecar) schedule(t float64, free *placement.Free) int {
	n := 0
	for _, d := range s.pol.Schedule(t, free) {
		e := s.byTask[d.Task]
		if e == nil || d.Preempt {
			continue
		}
		s.dirty = true
		e.ph, e.dseq = phDispatched, s.nextDSeq
		s.nextDSeq++
		e.place, e.placed, e.placedAt = d.Task.Placement, true, t
		if !s.mayUsePlacement(e, &e.place) {
			// The policy sees one pool of GPUs; place the job again on the
			// nodes its request can use, or keep no placement until it fits.
			if err := free.Give(&e.place); err != nil {
				s.placementFailed(e, err)
				e.placed = false
				n++
				continue
			}
			p, err := s.placeOn(free, e)
			if st := policy.StatusOf(err); st.Code == policy.Failed {
				s.placementFailed(e, err)
			}
			if e.placed = err == nil && free.Take(&p) == nil; e.placed {
				e.place = p
			}
		}
		n++
	}
	return n
}

// rank returns the managed pending jobs in the order Slurm should start
// them: dispatched jobs in dispatch order, then the policy's order.
func (s *Sidecar) rank() []*entry {
	ranked := s.dispatched()
	for _, t := range s.pol.Pending() {
		if e := s.byTask[t]; e != nil && e.ph == phQueued {
			ranked = append(ranked, e)
		}
	}
	return ranked
}

// high reports whether e belongs to the upper priority band.
func (s *Sidecar) high(e *entry) bool {
	return e.ph == phDispatched || (e.task != nil && !math.IsNaN(e.task.Released))
}

// label returns the priority each ranked job should have.
func (s *Sidecar) label(ranked []*entry) []uint32 {
	s.cur = s.cur[:0]
	split := 0
	for i, e := range ranked {
		s.cur = append(s.cur, e.prio)
		if s.high(e) {
			split = i + 1
		}
	}
	hi := Label(s.cur[:split], HighBand, nil)
	s.labels = Label(s.cur[split:], LowBand, s.labels)
	return append(hi, s.labels...)
}

// nodeUpdate returns the node list (and per-node GPU count, 0 for none) to
// write for dispatched job e, or nil and the reason when none is to be
// written: the job's request must allow it (see the package documentation).
func (s *Sidecar) nodeUpdate(e *entry) ([]string, int, string) {
	switch {
	case !s.cfg.RequiredNodes:
		return nil, 0, "node lists off (required_nodes = false)"
	case e.sj == nil || e.ph != phDispatched:
		return nil, 0, ""
	case e.noNodes:
		return nil, 0, "Slurm refused a node list for this job"
	}
	sj := e.sj
	if why := nodeListBar(sj); why != "" {
		return nil, 0, why
	}
	if !e.placed {
		return nil, 0, "no placement on nodes the job can use"
	}
	if len(sj.RequiredNodes) > 0 && !slices.Equal(sj.RequiredNodes, e.nodes) {
		return nil, 0, "the job names its nodes"
	}
	names := make([]string, len(e.place.Slots))
	per := e.place.Slots[0].Count()
	uniform := true
	for i, sl := range e.place.Slots {
		if !s.mayUse(e, sl.Node) {
			return nil, 0, "placement on a node the job cannot use"
		}
		names[i] = s.cl.Nodes[sl.Node].Name
		uniform = uniform && sl.Count() == per
	}
	total := sj.GPUs.Total
	switch {
	case len(names) == 1 && (sj.GPUs.PerNode == 0 || sj.GPUs.PerNode == total):
		return names, 0, ""
	case len(names) > 1 && uniform && sj.GPUs.PerNode == per:
		return names, 0, ""
	case len(names) > 1 && uniform && sj.GPUs.PerNode == 0 && sj.GPUs.PerJob == total && s.cfg.GPUsPerNode:
		return names, per, ""
	}
	return nil, 0, "the placement does not match the job's GPUs per node"
}

// plan builds the plan rows of ranked, then one row for each pending job
// of jobs that asrpt leaves alone, with the reason.
func (s *Sidecar) plan(ranked []*entry, want []uint32, jobs []slurmclient.Job) []PlanRow {
	rows := make([]PlanRow, len(ranked), len(jobs))
	inPlan := make(map[string]bool, len(ranked))
	for i, e := range ranked {
		inPlan[e.id] = true
		r := PlanRow{JobID: e.id, User: e.job.User, Name: e.job.Name, GPUs: e.job.GPUs,
			Predicted: e.est.Seconds, Known: e.est.Known, Rank: i + 1, PriorityNew: want[i]}
		if e.sj != nil {
			r.PriorityNow, r.Shape = e.sj.Priority, string(e.sj.Shape())
		}
		r.Family = predictor.Family(e.job.Name)
		r.Profile, r.ProfileSource, r.ProfileProblem = e.prof.Model, string(e.prof.Source), e.prof.Problem
		if e.task != nil && e.task.Prof != nil {
			r.AlphaMin, r.Heavy = e.task.AlphaMin, e.task.Heavy
		}
		switch {
		case e.ph == phDispatched:
			r.Stage = "dispatched"
			r.Nodes, _, r.Note = s.nodeUpdate(e)
			if e.placed && e.task != nil {
				r.Alpha, _ = s.env.Placer.AlphaOf(e.task.Prof, &e.place)
			}
		case s.high(e):
			r.Stage = "released"
		default:
			r.Stage = "waiting"
			if e.task != nil {
				r.VirtualRemaining = e.task.VirtualRemaining()
			}
		}
		rows[i] = r
	}
	for i := range jobs {
		sj := &jobs[i]
		if !sj.Pending() || inPlan[sj.ID] {
			continue
		}
		why := "not managed"
		if e := s.entries[sj.ID]; e != nil && e.why != "" {
			why = e.why
		} else if ok, w := s.eligible(sj, e); !ok {
			why = w
		}
		rows = append(rows, PlanRow{JobID: sj.ID, User: sj.User, Name: sj.Name, Shape: string(sj.Shape()),
			GPUs: s.view.gpus(sj), Stage: "left_alone", PriorityNow: sj.Priority,
			PriorityNew: sj.Priority, Note: why})
	}
	return rows
}

// Run runs cycles every cfg.Interval until ctx ends. A failed cycle is
// retried after a backoff that starts at one second and doubles, never
// longer than the interval, so the sidecar catches up within a cycle of the
// fault's end; errors are logged once per incident. On the way out it
// hands the managed jobs back when cfg.GivebackOnShutdown is set, and saves
// the state. It returns nil on a normal shutdown.
func (s *Sidecar) Run(ctx context.Context) error {
	backoff := time.Second
	timer := time.NewTimer(0)
	defer timer.Stop()
	failing, failed := false, 0
	for {
		select {
		case <-ctx.Done():
			return s.shutdown()
		case <-timer.C:
		}
		rep, err := s.RunOnce(ctx, time.Now())
		delay := s.cfg.Interval
		switch {
		case err != nil && ctx.Err() != nil:
			return s.shutdown()
		case err != nil:
			failed++
			if !failing {
				s.log.Warn().Err(err).Str("reason", Reason(err)).Msg("cycle failed; retrying with backoff")
			}
			failing = true
			delay = min(backoff, s.cfg.Interval)
			backoff *= 2
		default:
			if failing {
				s.log.Info().Int("failed_cycles", failed).Msg("cycles recovered")
			}
			failing, failed, backoff = false, 0, time.Second
			ev := s.log.Debug()
			if s.cfg.DryRun {
				// One summary line a cycle; the plan's rows only at debug
				// level (a queue of 100,000 jobs would be that many lines
				// every cycle).
				ev = s.log.Info()
				if s.log.GetLevel() <= zerolog.DebugLevel {
					for _, r := range rep.Plan {
						s.log.Debug().Int("rank", r.Rank).Str("job", r.JobID).Str("user", r.User).Str("name", r.Name).
							Str("shape", r.Shape).Int("gpus", r.GPUs).Float64("predicted_s", r.Predicted).Str("stage", r.Stage).
							Uint32("priority_now", r.PriorityNow).Uint32("priority_new", r.PriorityNew).
							Str("nodes", strings.Join(r.Nodes, ",")).Str("note", r.Note).Msg("plan")
					}
				}
			}
			ev.Dur("took", rep.Duration).Int("arrived", rep.Arrived).Int("dispatched", rep.Dispatched).
				Interface("writes", rep.Writes).Interface("failed", rep.Failed).Int("deferred", rep.Deferred).
				Int("backoff", rep.Backoff).Bool("deadline", rep.DeadlineHit).
				Interface("jobs", rep.Jobs).Bool("dry_run", s.cfg.DryRun).Msg("cycle")
		}
		timer.Reset(delay)
	}
}

// shutdownTimeout bounds the giveback and final save on shutdown.
const shutdownTimeout = 30 * time.Second

func (s *Sidecar) shutdown() error {
	var errs []error
	if s.cfg.GivebackOnShutdown && !s.cfg.DryRun {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		rep, err := s.Giveback(ctx)
		cancel()
		s.log.Info().Int("jobs", len(rep.Returned)).Int("failed", len(rep.Failed)).Int("nodes_kept", len(rep.NodesKept)).Msg("jobs handed back to Slurm")
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !s.cfg.DryRun && s.cfg.StateFile != "" {
		if err := writeState(s.cfg.StateFile, s.snapshot()); err != nil {
			errs = append(errs, err)
		}
	}
	s.log.Info().Msg("sidecar stopped")
	return errors.Join(errs...)
}
