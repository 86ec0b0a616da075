package sidecar

import (
	"fmt"
	"time"

	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// PlanRow is one managed pending job in the order asrpt gives Slurm, or,
// after them, a pending job asrpt leaves alone (Stage "left_alone", Rank 0),
// or, with policy asrpt-preempt, last, a running job (Stage "running", or
// "stopping" once asrpt sent it its stop signal; Rank 0) and whether asrpt
// may preempt it.
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
	// Estimator is what gave the prediction: forest, group (the (user,
	// family) group's own statistics), user, partition, limit, default
	// (prediction.Estimator); empty when not known (a state file written
	// before it was kept).
	Estimator string `json:"estimator,omitempty"`
	// VirtualRemaining is the virtual work left on A-SRPT's machine,
	// seconds; 0 once released.
	VirtualRemaining float64 `json:"virtual_remaining_s"`
	// Stage is dispatched (its turn has come: nodes chosen), released
	// (waiting for GPUs), waiting (on the virtual machine), standing (a job
	// asrpt does not rank, kept at its place in Slurm's own order) or
	// left_alone.
	Stage string `json:"stage"`
	// Rank is the 1-based position in the order.
	Rank int `json:"rank"`
	// PriorityNow is the job's priority in Slurm; PriorityNew the value
	// asrpt wants (equal when nothing is to be written, and always in
	// factor mode, where the priority plugin computes it).
	PriorityNow uint32 `json:"priority_now"`
	PriorityNew uint32 `json:"priority_new"`
	// SiteFactorNow is the site factor asrpt last wrote to the job (0:
	// none, Slurm's default) and SiteFactorNew the one it writes (equal
	// when the change is within the tolerance); factor mode only.
	SiteFactorNow *uint32 `json:"site_factor_now,omitempty"`
	SiteFactorNew *uint32 `json:"site_factor_new,omitempty"`
	// Nodes are the nodes chosen for a dispatched job, when asrpt writes
	// them.
	Nodes []string `json:"nodes,omitempty"`
	// Reason is why the job waits or is left alone, or why a dispatched
	// job gets no node list, or why a running job may not be preempted:
	// a stable code (package reason; empty for a dispatched job with its
	// node list, or a running job that may be preempted). Note says it in
	// words.
	Reason reason.Code `json:"reason,omitempty"`
	Note   string      `json:"note,omitempty"`
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
	// Preemptible says, for a running job (policy asrpt-preempt), whether
	// asrpt may preempt it; Note says why not, or from when. Stop is how it
	// stops ([B:|F:]SIGNAL@SECONDS) and StopFrom where that came from
	// (comment, preemption.rule[N]); Preemptions counts the times asrpt
	// stopped it.
	Preemptible *bool  `json:"preemptible,omitempty"`
	Stop        string `json:"stop,omitempty"`
	StopFrom    string `json:"stop_from,omitempty"`
	Preemptions int    `json:"preemptions,omitempty"`
	// PreemptProblem says, for a ranked pending job under asrpt-preempt,
	// why its asrpt:preempt word was refused (the job does not opt in) or
	// why the stop it declared cannot be used; Stop and StopFrom are set
	// when it can.
	PreemptProblem string `json:"preempt_problem,omitempty"`
}

// plan builds the plan rows of the decisions, head first, then one row for
// each pending job of jobs that asrpt leaves alone, with the reason; at
// most limit rows (0: all).
func (tr *tracker) plan(ds []decision, jobs []slurmclient.Job, limit int) []PlanRow {
	if limit > 0 && len(ds) > limit {
		ds = ds[:limit]
	}
	rows := make([]PlanRow, len(ds), max(len(ds), min(len(jobs), max(limit, len(ds)))))
	inPlan := make(map[string]bool, len(ds))
	for i, d := range ds {
		e := d.e
		inPlan[e.id] = true
		r := PlanRow{JobID: e.id, User: e.job.User, Name: e.job.Name, GPUs: e.job.GPUs,
			Predicted: e.est.Seconds, Known: e.est.Known, Estimator: string(e.est.Estimator), Rank: i + 1, PriorityNew: d.priority}
		if e.sj != nil {
			r.PriorityNow, r.Shape = e.sj.Priority, string(e.sj.Shape())
		}
		if tr.mode == WriteFactor {
			now, next := e.factor, e.factor
			if d.setFactor {
				next = d.factor
			}
			r.PriorityNew, r.SiteFactorNow, r.SiteFactorNew = r.PriorityNow, &now, &next
		}
		r.Family = e.family()
		r.Profile, r.ProfileSource, r.ProfileProblem = e.prof.Model, string(e.prof.Source), e.prof.Problem
		if tr.cfg.preempting() {
			switch {
			case e.canStop():
				r.Stop, r.StopFrom = e.stop.String(), e.stopFrom
			case e.sj != nil && jobword.Parse(e.sj.Comment).HasPreempt:
				// It asked to opt in: why it is not.
				r.PreemptProblem = e.stopWhy.Detail
			}
		}
		if e.task != nil && e.task.Prof != nil {
			r.AlphaMin, r.Heavy = e.task.AlphaMin, e.task.Heavy
		}
		switch {
		case e.ph == phDispatched:
			r.Stage = "dispatched"
			r.Nodes, r.Reason, r.Note = d.nodes, d.why.Code, d.why.Detail
			if e.placed && e.task != nil {
				r.Alpha, _ = tr.env.Placer.AlphaOf(e.task.Prof, &e.place)
			}
		case e.standing:
			r.Stage, r.Reason = "standing", reason.Standing
			r.Note = "not ranked by asrpt (" + e.why.String() + "): ahead of every managed job Slurm's own order puts behind it"
		case e.high():
			r.Stage, r.Reason = "released", reason.NoRoom
		default:
			r.Stage, r.Reason = "waiting", reason.VirtualQueue
			if e.task != nil {
				r.VirtualRemaining = e.task.VirtualRemaining()
			}
		}
		if e.heldBack != "" && e.ph != phDispatched {
			r.Reason, r.Note = reason.HeldBack, "held back by Slurm ("+e.heldBack+"): ranked, never dispatched"
		}
		rows[i] = r
	}
	for i := range jobs {
		if limit > 0 && len(rows) >= limit {
			break
		}
		sj := &jobs[i]
		if !sj.Pending() || inPlan[sj.ID] {
			continue
		}
		why := reason.Of(reason.NotManaged, "not managed")
		if e := tr.entries[sj.ID]; e != nil && !e.why.None() {
			why = e.why
		} else if ok, w := tr.eligible(sj, e); !ok {
			why = w
		}
		rows = append(rows, PlanRow{JobID: sj.ID, User: sj.User, Name: sj.Name, Shape: string(sj.Shape()),
			GPUs: tr.view.gpus(sj), Stage: "left_alone", PriorityNow: sj.Priority,
			PriorityNew: sj.Priority, Reason: why.Code, Note: why.Detail})
	}
	if !tr.cfg.preempting() {
		return rows
	}
	for i := range jobs {
		if limit > 0 && len(rows) >= limit {
			break
		}
		if sj := &jobs[i]; !sj.Pending() {
			rows = append(rows, tr.runningRow(sj))
		}
	}
	return rows
}

// runningRow is the plan row of running job sj: whether asrpt may preempt
// it, and why not.
func (tr *tracker) runningRow(sj *slurmclient.Job) PlanRow {
	r := PlanRow{JobID: sj.ID, User: sj.User, Name: sj.Name, Shape: string(sj.Shape()), GPUs: tr.view.gpus(sj),
		Stage: "running", PriorityNow: sj.Priority, PriorityNew: sj.Priority}
	no := false
	r.Preemptible = &no
	e := tr.entries[sj.ID]
	if e == nil || (e.ph != phRunning && e.ph != phStopping) {
		r.Reason, r.Note = reason.NotInPolicy, "not running in asrpt's policy (running before the sidecar started, never ranked pending, or withdrawn): never preempted"
		if e != nil {
			r.Preemptions = e.preemptions
		}
		return r
	}
	r.Predicted, r.Known, r.Family, r.Preemptions = e.est.Seconds, e.est.Known, e.family(), e.preemptions
	r.Estimator = string(e.est.Estimator)
	if e.stopFrom != "" {
		r.Stop, r.StopFrom = e.stop.String(), e.stopFrom
	}
	p := tr.cfg.Params
	switch {
	case e.ph == phStopping:
		r.Stage, r.Reason = "stopping", reason.Stopping
		r.Note = fmt.Sprintf("stop signal %s sent at %s; waiting for its requeue", e.stop.Signal, time.Unix(int64(e.signalledAt), 0).UTC().Format(time.RFC3339))
	case !e.canStop():
		r.Reason, r.Note = e.stopWhy.Code, e.stopWhy.Detail
	case e.preemptions >= p.MaxPreemptions:
		r.Reason, r.Note = reason.MaxPreemptions, fmt.Sprintf("preempted %d times: policy.max_preemptions", e.preemptions)
	case e.task != nil && tr.clock-e.task.Start < p.PreemptExempt:
		r.Reason, r.Note = reason.Exempt, fmt.Sprintf("exempt until %s (policy.preempt_exempt after each start)",
			time.Unix(int64(e.task.Start+p.PreemptExempt), 0).UTC().Format(time.RFC3339))
	default:
		yes := true
		r.Preemptible = &yes
	}
	return r
}
