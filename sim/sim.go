// Package sim replays a trace through a scheduling policy: a discrete-event
// simulation of arrivals, the policy's own events (virtual releases) and
// completions on a cluster. A profiled job runs Iterations·α(π) seconds for
// the placement π it got; a plain job runs its trace run time. The policy is
// the same code the live sidecar drives.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// Config is one replay.
type Config struct {
	// Policy is the policy name (policy.Names, optionally with the oracle
	// suffix).
	Policy string
	// Predictor is a fresh predictor for this replay (it learns from the
	// replay's completions). Oracle variants ignore it.
	Predictor predictor.Predictor
	// QueueSamples is how many points of the queue-length curve to aim
	// at over the submission span (0: 1000); Result.Queue holds at most
	// 2·QueueSamples+1 of them, whatever the span of the replay.
	QueueSamples int
	// Progress, when not nil, is called now and then with the number of
	// finished jobs and the total.
	Progress func(done, total int)
	// Frozen, when true, keeps every prediction made at submit: waiting
	// jobs are not predicted again when jobs of their group finish (design
	// §5.3; for measuring what re-prediction brings).
	Frozen bool
	// Check, when true, verifies the free-GPU accounting after every event
	// (slow; for tests).
	Check bool
	// Preemptible, when not nil, tells which jobs opted in to preemption
	// (policy.Task.Preemptible; the preemptrule package builds it from a
	// rule). asrpt-preempt stops only those; las preempts every job.
	Preemptible func(*job.Job) bool
	// RecordNodes fills Result.Nodes (one small slice per job: off for
	// the large replays).
	RecordNodes bool
	// Why, when not empty, is the id of a job whose story Result.Why
	// tells: when it waited and why, when it started (asrpt replay --why).
	// A job not in the replay is an error.
	Why string
	// Controller polls the queue of the multifactor model and writes to
	// it: the sidecar in the closed loop (asrpt-sidecar, package loop);
	// nil for every other policy.
	Controller policy.Controller
}

// JobResult is what happened to one job: 64 bytes without pointers, so
// that a replay of millions of jobs keeps its results compactly. Who the
// job is (id, user, account) is on the Result (Result.ID, User, Account).
type JobResult struct {
	Submit float64 // seconds, as in the trace
	Start  float64 // first start, seconds
	End    float64 // completion, seconds
	// RunTime is the time the job spent running, seconds (the sum over its
	// runs when preempted).
	RunTime float64
	// Reference is the job's run time at α_min, seconds.
	Reference float64
	// Predicted is the prediction made at submit, seconds.
	Predicted float64
	// GPUs is the job's GPU count.
	GPUs int32
	// Preemptions counts how often the job was stopped.
	Preemptions int32
	// Lost is the time in seconds the job ran without making progress
	// that counts: the restart cost of each restart
	// (policy.Params.RestartCost) and the work each preemption lost
	// (Params.LostWork). GPUs·Lost is the GPU-seconds preemption wasted.
	Lost float64
}

// JCT returns the job completion time End−Submit in seconds.
func (r *JobResult) JCT() float64 { return r.End - r.Submit }

// Wait returns the queueing delay Start−Submit in seconds.
func (r *JobResult) Wait() float64 { return r.Start - r.Submit }

// Sample is one point of the queue-length curve.
type Sample struct {
	Time    float64 // seconds
	Pending int     // jobs waiting
	Busy    int     // GPUs in use
}

// Result is the outcome of a replay.
type Result struct {
	Policy    string
	Predictor string
	Jobs      []JobResult // in trace order, excluded jobs left out
	// Nodes are, per job of Jobs, the nodes of its first placement, as the
	// sidecar would write them for it (placement.NodeNames); nil unless
	// Config.RecordNodes.
	Nodes [][]string
	// Queue is the queue-length curve, in time order: the state after the
	// first event at or after each point of an even grid (Config.QueueSamples),
	// and after the last event.
	Queue []Sample
	// Excluded counts the jobs left out because they ask for more GPUs than
	// the cluster has.
	Excluded int
	// Events counts the simulation steps (distinct event times processed).
	Events int
	// GPUs is the cluster's GPU count.
	GPUs int
	// Why is the traced job's story (Config.Why), at most MaxWhySteps
	// steps; WhyDropped counts the steps past them.
	Why        []WhyStep
	WhyDropped int
	// jobs are the replayed jobs, in the order of Jobs.
	jobs *job.Table
}

// NewResult returns a Result of jobs with outcomes res (one per job, in
// order), for reports built without a replay; it fails when a job does not
// fit a job.Table or the lengths differ.
func NewResult(jobs []job.Job, res []JobResult, gpus int) (*Result, error) {
	if len(jobs) != len(res) {
		return nil, fmt.Errorf("sim: %d jobs, %d results", len(jobs), len(res))
	}
	t, err := job.TableOf(jobs)
	if err != nil {
		return nil, err
	}
	return &Result{Jobs: res, GPUs: gpus, jobs: t}, nil
}

// ID returns the id of the i-th job of Jobs.
func (r *Result) ID(i int) string { return r.jobs.ID(i) }

// User returns the user of the i-th job of Jobs.
func (r *Result) User(i int) string { return r.jobs.User(i) }

// Account returns the account of the i-th job of Jobs.
func (r *Result) Account(i int) string { return r.jobs.Account(i) }

// ErrStalled is returned when the policy leaves jobs pending with nothing
// left that could start them (a policy bug, never an input problem).
var ErrStalled = errors.New("sim: jobs pending with no event left")

// MaxTime bounds every time the simulator handles, in seconds: 2^35 s =
// 34,359,738,368 s (the year 3058 as a Unix time). Up to it float64 times
// are exact to 2^-17 s (7.6 µs), finer than the policies' tolerance of
// 1e-5 s, so that every step a policy takes moves the clock; past it a
// step of seconds may not. Prepare refuses submit times outside ±MaxTime
// and run times above it; a replay whose next event falls after it stops
// with ErrTimeRange.
const MaxTime float64 = 1 << 35

// ErrTimeRange is returned when a replay's next event falls after MaxTime.
var ErrTimeRange = errors.New("sim: time past MaxTime (2^35 = 34359738368 s)")

// running job bookkeeping kept by the simulator.
type state struct {
	task    *policy.Task
	done    float64 // fraction of the job's work done by earlier runs
	version int     // bumped on preemption, invalidating the pending completion
	group   string  // predictor.GroupKey, when waiting jobs are predicted again
}

type completion struct {
	at      float64
	seq     int
	version int
	st      *state
}

// completions is the completions to come, a heap by time, then push
// order.
type completions = minHeap[completion]

// completionFirst orders completions by time, then push order.
func completionFirst(a, b *completion) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Workload is a trace ready to replay on one cluster: the jobs that fit it,
// with the run time of each profiled job set to Iterations·α_min there (its
// reference run time), in submit order. Prepare makes one; Run replays it
// through a policy, as often as wanted, several at once.
type Workload struct {
	// Env is the cluster, its placer, the policy tunables and the site's
	// priority configuration every replay of the workload runs with.
	Env *policy.Env
	// Jobs are the jobs replayed; a replay reads them and never changes
	// them.
	Jobs *job.Table
	// Excluded counts the jobs left out as larger than the cluster.
	Excluded int
}

// Prepare is the entry into the simulator: it makes jobs (sorted by submit
// time, as the trace readers return them) a Workload on env's cluster. It
// changes jobs in place — drops the jobs larger than the cluster, sets the
// reference run time of the profiled ones — and the Workload holds it. A job
// with a submit time outside ±MaxTime, or a run time that is not in
// (0, MaxTime], is an error naming the job; jobs may then have been
// changed.
func Prepare(jobs *job.Table, env *policy.Env) (*Workload, error) {
	var err error
	excluded := jobs.Keep(func(i int) bool {
		if err != nil {
			return true
		}
		if jobs.GPUs(i) > env.G {
			return false
		}
		if jobs.GPUs(i) <= 0 || !(math.Abs(jobs.Submit(i)) <= MaxTime) || jobs.RunTime(i) <= 0 || !(jobs.RunTime(i) <= MaxTime) || jobs.Profiled(i) {
			j := jobs.Job(i)
			if _, err = prepare(&j, env); err == nil {
				jobs.SetRunTime(i, j.RunTime)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	for i := 1; i < jobs.Len(); i++ {
		if jobs.Submit(i) < jobs.Submit(i-1) {
			return nil, fmt.Errorf("sim: jobs not sorted by submit time at %s", jobs.ID(i))
		}
	}
	return &Workload{Env: env, Jobs: jobs, Excluded: excluded}, nil
}

// LowerBound returns LB for the workload (see LowerBound); it costs
// O(n log n) time and O(n) memory, each call.
func (w *Workload) LowerBound() LowerBound {
	return computeLowerBound(w.Jobs, w.Env.G)
}

// prepare checks j and sets the reference run time of a profiled job; it
// returns false for a job larger than the cluster.
func prepare(j *job.Job, env *policy.Env) (bool, error) {
	if j.GPUs > env.G {
		return false, nil
	}
	if j.GPUs <= 0 {
		return false, fmt.Errorf("job %s: %d GPUs", j.ID, j.GPUs)
	}
	if !(math.Abs(j.Submit) <= MaxTime) {
		return false, fmt.Errorf("job %s: submit time %v s, want within ±%.0f s (sim.MaxTime)", j.ID, j.Submit, MaxTime)
	}
	if j.Profiled() {
		prof, err := placement.Lookup(j.Profile, j.GPUs)
		if err != nil {
			return false, fmt.Errorf("job %s: %w", j.ID, err)
		}
		amin, _ := env.Placer.Bounds(prof)
		j.RunTime = j.Iterations * amin
	}
	if !(j.RunTime > 0) {
		return false, fmt.Errorf("job %s: run time %v s", j.ID, j.RunTime)
	}
	if !(j.RunTime <= MaxTime) {
		return false, fmt.Errorf("job %s: run time %v s, want at most %.0f s (sim.MaxTime)", j.ID, j.RunTime, MaxTime)
	}
	return true, nil
}

// Run replays the workload under cfg. It stops with ctx's error when ctx
// is done. Replays of one workload may run at once.
func (w *Workload) Run(ctx context.Context, cfg Config) (*Result, error) {
	return run(ctx, w.Jobs, w.Excluded, w.Env, cfg)
}

// maxRepredict bounds how many waiting jobs of one (user, family) group
// are predicted again when a job of the group finishes: the longest-waiting
// ones first. It bounds the work of one completion whatever the queue.
const maxRepredict = 256

// regroup is the index of waiting jobs by (user, name family), for
// re-prediction: each group's jobs in arrival order, started ones dropped
// lazily.
type regroup map[string][]*policy.Task

// repredict predicts again the waiting jobs of the group of the job that
// just finished and hands the changed estimates to the policy; finished
// reports a job that has ended, dropped from the lists with the started
// ones (a job that ended is no longer running, but does not wait either).
func (g regroup) repredict(now float64, key string, done *policy.Task, pred predictor.Predictor, upd policy.Updater, finished func(*policy.Task) bool) {
	list := g[key]
	k := 0
	for _, t := range list {
		if t.Pending() && t != done && !finished(t) {
			list[k] = t
			k++
		}
	}
	clear(list[k:])
	list = list[:k]
	if k == 0 {
		delete(g, key)
		return
	}
	g[key] = list
	// A predictor that gives the whole group one estimate is asked once;
	// the policy hears only of the estimates that changed.
	group, uniform := pred.(predictor.GroupRepredictor)
	var shared predictor.Estimate
	if uniform {
		shared, uniform = group.RepredictGroup(done.Job, now)
	}
	for _, t := range list[:min(k, maxRepredict)] {
		est := shared
		if !uniform {
			est = pred.Repredict(t.Job, now)
		}
		if est != t.Est {
			upd.Update(now, t, est)
		}
	}
}

// maxStill bounds how many steps in a row may happen at one instant; more
// means a policy keeps asking for an event that does not move time.
const maxStill = 100000

// pollEvery is how many loop iterations (events, completions, arrivals,
// decisions) pass between two looks at the context.
const pollEvery = 4096

func run(ctx context.Context, jobs *job.Table, excluded int, env *policy.Env, cfg Config) (*Result, error) {
	env = env.Fork() // replays prepared with one Env may run at once
	env.Controller = cfg.Controller
	n := jobs.Len()
	pol, err := policy.New(cfg.Policy, env)
	if err != nil {
		return nil, err
	}
	pred := cfg.Predictor
	if _, oracle := policy.Split(cfg.Policy); oracle || pred == nil {
		pred = predictor.Oracle{}
	}
	upd, _ := pol.(policy.Updater)
	// Waiting jobs are predicted again only where an estimate is read: not
	// for the policies that never read one (fifo, backfill, multifactor,
	// ...: policy.UsesPredictions), not for the closed loop, whose model
	// orders by what the sidecar writes (the sidecar predicts again on its
	// own), and not for a frozen or perfect predictor.
	var groups regroup
	base, _ := policy.Split(cfg.Policy)
	if _, isOracle := pred.(predictor.Oracle); upd != nil && !cfg.Frozen && !isOracle &&
		policy.UsesPredictions(cfg.Policy) && !policy.Sidecar(base) {
		groups = regroup{}
	}
	// A predictor that learns from running jobs hears of every start and
	// preemption, and is told the time before it predicts.
	runs, _ := predictor.Running(pred)
	tr, err := newTracer(cfg.Why, jobs, cfg.Policy)
	if err != nil {
		return nil, err
	}
	res := &Result{Policy: cfg.Policy, Predictor: pred.Name(), Jobs: make([]JobResult, n),
		Excluded: excluded, GPUs: env.G, jobs: jobs}
	if cfg.RecordNodes {
		res.Nodes = make([][]string, n)
	}
	if n == 0 {
		return res, nil
	}
	// states[i] is job i's bookkeeping while it waits or runs; nil before
	// it arrives and after it ends, so that a finished job's Task and
	// job.Job are garbage.
	states := make([]*state, n)
	free := placement.NewFree(env.Cluster)
	comps := completions{less: completionFirst}
	nsamples := cfg.QueueSamples
	if nsamples <= 0 {
		nsamples = 1000
	}
	queue := newSampler(jobs.Submit(0), jobs.Submit(n-1)-jobs.Submit(0), nsamples)
	// poll returns ctx's error at its first call and every pollEvery calls
	// after; every loop below calls it once per iteration, so a replay
	// stops soon after ctx is done however much one event holds.
	polls := 0
	poll := func() error {
		polls++
		if polls%pollEvery == 1 {
			return ctx.Err()
		}
		return nil
	}

	// finished reports a job that has ended: its state is gone.
	finished := func(t *policy.Task) bool { return states[t.Seq] == nil }
	now := jobs.Submit(0)
	next, done, pending, seq, still := 0, 0, 0, 0, 0
	progressEvery := max(n/200, 1)
	for done < n {
		if err := poll(); err != nil {
			return nil, err
		}
		at := math.Inf(1)
		if next < n {
			at = jobs.Submit(next)
		}
		if comps.Len() > 0 {
			at = math.Min(at, comps.top().at)
		}
		at = math.Min(at, pol.NextEvent(now))
		if math.IsInf(at, 1) {
			return nil, fmt.Errorf("%w: %s at t=%.0f s, %d pending", ErrStalled, cfg.Policy, now, pending)
		}
		if at > MaxTime {
			return nil, fmt.Errorf("%w: %s: next event at t=%.0f s, %d jobs not finished", ErrTimeRange, cfg.Policy, at, n-done)
		}
		if at <= now {
			at = now
			if still++; still > maxStill {
				return nil, fmt.Errorf("%w: %s keeps time at t=%.3f s, %d pending", ErrStalled, cfg.Policy, now, pending)
			}
		} else {
			still = 0
		}
		now = at
		res.Events++
		// Completions first: their GPUs are free for this event's decisions.
		for comps.Len() > 0 && comps.top().at <= now {
			if err := poll(); err != nil {
				return nil, err
			}
			c := comps.pop()
			if c.version != c.st.version {
				continue
			}
			st := c.st
			t := st.task
			if err := free.Give(&t.Placement); err != nil {
				return nil, fmt.Errorf("sim: t=%.3f: job %s ends: %w", now, t.ID, err)
			}
			r := &res.Jobs[t.Seq]
			r.End = c.at
			r.RunTime += c.at - t.Start
			if r.Preemptions > 0 {
				r.Lost += math.Min(env.Params.RestartCost, c.at-t.Start)
			}
			pol.Finish(now, t)
			tr.event(now, t, WhyFinished, free)
			pred.Observe(t.Job, c.at)
			if runs != nil {
				runs.Clock(now)
			}
			if groups != nil {
				groups.repredict(now, st.group, t, pred, upd, finished)
			}
			states[t.Seq] = nil
			done++
			if cfg.Progress != nil && done%progressEvery == 0 {
				cfg.Progress(done, n)
			}
		}
		for next < n && jobs.Submit(next) <= now {
			if err := poll(); err != nil {
				return nil, err
			}
			j := new(job.Job)
			*j = jobs.Job(next)
			if runs != nil {
				runs.Clock(now)
			}
			est := pred.Predict(j)
			t, err := env.NewTask(j, next, est)
			if err != nil {
				return nil, err
			}
			t.Preemptible = cfg.Preemptible != nil && cfg.Preemptible(j)
			st := &state{task: t}
			states[next] = st
			res.Jobs[next] = JobResult{GPUs: int32(j.GPUs), Submit: j.Submit,
				Start: math.NaN(), Reference: t.Reference, Predicted: est.Seconds}
			pol.Arrive(now, t)
			tr.event(now, t, WhySubmitted, free)
			if groups != nil {
				st.group = predictor.GroupKey(j)
				groups[st.group] = append(groups[st.group], t)
			}
			pending++
			next++
		}
		started, preempted := env.Dispatch(pol, now, free, nil)
		if err := env.ControllerErr(); err != nil {
			return nil, fmt.Errorf("sim: t=%.3f: policy %s: %w", now, pol.Name(), err)
		}
		if errs, n := env.TakeErrors(); n > 0 {
			// A placement that failed for another reason than free GPUs is
			// a bug of the policy or the placer: the replay does not go on.
			return nil, fmt.Errorf("sim: t=%.3f: policy %s: %d placement failures, the first: %w", now, pol.Name(), n, errs[0])
		}
		for _, t := range preempted {
			st := states[t.Seq]
			r := &res.Jobs[t.Seq]
			ran := now - t.Start
			wasted := 0.0 // the restart cost of this run, then the work lost
			if r.Preemptions > 0 {
				wasted = math.Min(env.Params.RestartCost, ran)
			}
			wasted += math.Min(env.Params.LostWork, ran-wasted)
			st.done += (ran - wasted) / t.TrueRunTime(t.Alpha)
			r.RunTime += ran
			r.Lost += wasted
			r.Preemptions++
			st.version++
			pending++
			if runs != nil {
				runs.Stopped(t.ID)
			}
			tr.event(now, t, WhyPreempted, free)
		}
		traced := tr.seq >= 0 && tr.seq < next && states[tr.seq] != nil && states[tr.seq].task.Pending()
		for _, d := range started {
			if err := poll(); err != nil {
				return nil, err
			}
			t := d.Task
			tr.started(t, traced)
			st := states[t.Seq]
			if r := &res.Jobs[t.Seq]; math.IsNaN(r.Start) {
				r.Start = now
				if cfg.RecordNodes {
					if res.Nodes[t.Seq], err = placement.NodeNames(env.Cluster, &t.Placement); err != nil {
						return nil, fmt.Errorf("sim: t=%.3f: job %s: %w", now, t.ID, err)
					}
				}
			}
			pending--
			if runs != nil {
				runs.Started(t.Job, now)
			}
			left := math.Max(1-st.done, 0) * t.TrueRunTime(t.Alpha)
			if res.Jobs[t.Seq].Preemptions > 0 {
				left += env.Params.RestartCost // requeue, start-up, checkpoint load
			}
			seq++
			comps.push(completion{at: now + left, seq: seq, version: st.version, st: st})
			tr.event(now, t, WhyStarted, free)
		}
		if tr.seq >= 0 && tr.seq < next && states[tr.seq] != nil {
			tr.waiting(now, states[tr.seq].task, pol, free)
		}
		if cfg.Check {
			if err := check(free, env.G, states[:next]); err != nil {
				return nil, fmt.Errorf("sim: t=%.3f: %w", now, err)
			}
		}
		queue.event(now, pending, env.G-free.Total())
	}
	res.Queue = queue.samples(now, pending, env.G-free.Total())
	res.Why, res.WhyDropped = tr.steps, tr.dropped
	if cfg.Progress != nil {
		cfg.Progress(n, n)
	}
	return res, nil
}

// check verifies that the GPUs in use equal those of the running jobs and
// never exceed the cluster.
func check(free *placement.Free, g int, states []*state) error {
	used := 0
	for _, st := range states {
		if st == nil {
			continue
		}
		if t := st.task; !t.Pending() {
			used += t.Placement.GPUs()
		}
	}
	if used+free.Total() != g {
		return fmt.Errorf("%d GPUs in use by running jobs, %d free, cluster has %d", used, free.Total(), g)
	}
	return nil
}
