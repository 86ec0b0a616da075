package sidecar

import (
	"context"
	"fmt"
	"time"

	"github.com/asrpt/asrpt/decision"
)

// jobStates are the keys of CycleReport.Jobs, each exported as a gauge
// (0 when the cycle saw no such job).
var jobStates = []string{"pending", "running", "held", "out_of_scope", "managed", "dispatched", "hands_off", "held_back", "standing"}

// CycleReport is what one cycle saw and did.
type CycleReport struct {
	// Time is the cycle's time.
	Time time.Time
	// Duration is the wall time the cycle took.
	Duration time.Duration
	// Jobs counts the jobs seen, by state: pending, running, held,
	// out_of_scope, managed, dispatched, hands_off, held_back (managed jobs
	// Slurm holds back for a dependency, a limit, ...: ranked, not dispatched).
	Jobs map[string]int
	// Arrived counts the jobs that entered the policy this cycle;
	// Released those the virtual machine released; Dispatched those whose
	// turn came.
	Arrived, Released, Dispatched int
	// Virtual counts the managed jobs waiting on the virtual machine, not
	// yet released, after the cycle's decide step (0 in a suspect cycle,
	// which decides nothing).
	Virtual int
	// Preempted counts the running jobs the policy preempted this cycle:
	// their stop signals went out (or, in a dry run, would have).
	Preempted int
	// Writes counts the updates sent, by kind (priority, nodes); in a dry
	// run, those that would have been sent. Failed counts failed ones by
	// reason; Deferred those left for later by the write limit.
	Writes   map[string]int
	Failed   map[string]int
	Deferred int
	// DeadlineHit is set when the cycle's deadline ended its writes.
	DeadlineHit bool
	// Suspect is set when the job list showed fewer than half of the
	// tracked jobs (suspectMinJobs): the cycle changed and wrote nothing.
	Suspect bool
	// WritesHeld is set when no write went out because the state, which
	// records every value before it is written, could not be saved.
	WritesHeld bool
	// Backoff counts the changed values not sent this cycle because the
	// last write of the same kind to the same job failed and its backoff
	// runs.
	Backoff int
	// Plan is the ranked queue, head first (filled in dry runs and when
	// asked through Plan).
	Plan []decision.PlanRow
}

// RunOnce runs one cycle at time now: read the queue and the nodes, feed
// new accounting records to the predictor, bring the policy up to date,
// rank, place the jobs whose turn has come, and write the changed values
// (none in a dry run). A failed read returns an error and changes nothing;
// failed writes are counted in the report and retried in later cycles. The
// state is saved at the end of a cycle that changed it.
func (s *Sidecar) RunOnce(ctx context.Context, now time.Time) (CycleReport, error) {
	rep, err := s.cycle(ctx, now, s.cfg.DryRun)
	if !s.headless {
		s.publishStatus(rep, err)
	}
	return rep, err
}

// Plan runs one cycle as a dry run, whatever the configuration says, and
// returns its report with the plan.
func (s *Sidecar) Plan(ctx context.Context, now time.Time) (CycleReport, error) {
	return s.cycle(ctx, now, true)
}

// NextChange returns the earliest time at which a cycle may plan
// differently from the last one although Slurm shows the same queue: the
// policy's next event (a virtual release, a wait bound), the end of a
// dispatched job's grace, the end of a failed write's backoff; +Inf when
// none. The closed-loop replay (package loop), which knows when its Slurm
// changed, skips the cycles before it.
func (s *Sidecar) NextChange() float64 { return s.state.NextChange() }

// cycleDeadline bounds one cycle's reads and writes: twice the interval, at
// least a minute. A slow slurmrestd then ends a cycle's writes at the
// deadline (the rest go out next cycle) instead of holding the cycle for
// as long as the queue is.
func (s *Sidecar) cycleDeadline() time.Duration { return max(2*s.cfg.Interval, time.Minute) }

// cycle is one snapshot → decide → apply round (dry: apply counts the
// writes it would send and sends none).
func (s *Sidecar) cycle(parent context.Context, now time.Time, dry bool) (CycleReport, error) {
	ctx, cancel := context.WithTimeout(parent, s.cycleDeadline())
	defer cancel()
	start := time.Now()
	rep := CycleReport{Time: now, Jobs: map[string]int{}, Writes: map[string]int{}, Failed: map[string]int{}}
	clear(s.seen)
	snap, op, err := s.read(ctx, now)
	if err != nil {
		return s.fail(rep, start, op, err)
	}
	p := decision.Decide(&snap, s.state, unixSeconds(now))
	if p.Suspect != nil {
		s.m.suspectLists.Inc()
		s.incident("job_list", p.Suspect)
		rep.Suspect = true
		return s.succeed(rep, start, now), nil
	}
	for k, n := range p.Jobs {
		rep.Jobs[k] += n
	}
	rep.Arrived, rep.Released, rep.Dispatched, rep.Virtual = p.Arrived, p.Released, p.Dispatched, p.Virtual
	s.record(p.Events)
	err = s.apply(ctx, &p, dry, &rep)
	s.account()
	if err != nil {
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
	// A dry run's report has the whole plan; /plan serves its head.
	if dry || !s.headless {
		limit := maxServedPlanRows
		if dry {
			limit = 0
		}
		rows := s.state.PlanRows(p.Decisions, snap.Jobs, limit)
		if dry {
			rep.Plan = rows
			if len(rows) > maxServedPlanRows {
				rows = rows[:maxServedPlanRows]
			}
		}
		if !s.headless {
			s.lastPlan.Store(&ServedPlan{Time: now, DryRun: dry, Rows: rows})
		}
	}
	if !dry && s.state.Dirty && s.cfg.StateFile != "" {
		_ = s.saveState()
	}
	return s.succeed(rep, start, now), nil
}

// saveState saves the state file; a failure is counted, logged once per
// incident and shown by /healthz until a save succeeds.
func (s *Sidecar) saveState() error {
	if err := writeState(s.cfg.StateFile, s.state.ToSave()); err != nil {
		s.m.stateErrors.Inc()
		s.incident("state", err)
		s.stateBroken.Store(err.Error())
		return err
	}
	s.state.Dirty = false
	s.stateBroken.Store("")
	return nil
}

// succeed ends a cycle that read Slurm: incidents not seen close, and the
// cycle's metrics are exported.
func (s *Sidecar) succeed(rep CycleReport, start, now time.Time) CycleReport {
	s.closeIncidents()
	rep.Duration = time.Since(start)
	s.m.cycle.Observe(rep.Duration.Seconds())
	s.m.cycles.WithLabelValues("ok").Inc()
	s.m.lastSuccess.Set(float64(now.Unix()))
	s.lastOK.Store(time.Now().UnixNano())
	for _, k := range jobStates {
		s.m.jobs.WithLabelValues(k).Set(float64(rep.Jobs[k]))
	}
	if !rep.Suspect {
		s.m.virtual.Set(float64(rep.Virtual))
	}
	return rep
}

func (s *Sidecar) fail(rep CycleReport, start time.Time, op string, err error) (CycleReport, error) {
	rep.Duration = time.Since(start)
	s.m.cycle.Observe(rep.Duration.Seconds())
	s.m.cycles.WithLabelValues("error").Inc()
	if op != "write" {
		s.m.errors.WithLabelValues(op, Reason(err).String()).Inc()
	}
	return rep, fmt.Errorf("sidecar: %s: %w", op, err)
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
