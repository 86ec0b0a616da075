package decision

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

// PlanRows builds the rows of the decisions, head first, then one row for
// each pending job of jobs that asrpt leaves alone, with the reason, then
// (asrpt-preempt) one for each job Slurm runs that has no row yet; one row
// per job, at most limit rows (0: all).
func (tr *State) PlanRows(ds []Decision, jobs []slurmclient.Job, limit int) []PlanRow {
	if limit > 0 && len(ds) > limit {
		ds = ds[:limit]
	}
	rows := make([]PlanRow, len(ds), max(len(ds), min(len(jobs), max(limit, len(ds)))))
	inPlan := make(map[string]bool, len(ds))
	for i, d := range ds {
		e := d.Entry
		inPlan[e.ID] = true
		r := PlanRow{JobID: e.ID, User: e.job.User, Name: e.job.Name, GPUs: e.job.GPUs,
			Predicted: e.Est.Seconds, Known: e.Est.Known, Estimator: string(e.Est.Estimator), Rank: i + 1, PriorityNew: d.Priority}
		if e.Record != nil {
			r.PriorityNow, r.Shape = e.Record.Priority, string(e.shape)
		}
		if tr.Mode == WriteFactor {
			now, next := e.Factor, e.Factor
			if d.SetFactor {
				next = d.Factor
			}
			r.PriorityNew, r.SiteFactorNow, r.SiteFactorNew = r.PriorityNow, &now, &next
		}
		r.Family = e.family()
		r.Profile, r.ProfileSource, r.ProfileProblem = e.prof.Model, string(e.prof.Source), e.prof.Problem
		if tr.cfg.preempting() {
			switch {
			case e.CanStop():
				r.Stop, r.StopFrom = e.Stop.String(), e.StopFrom
			case e.Record != nil && jobword.Parse(e.Record.Comment).HasPreempt:
				// It asked to opt in: why it is not.
				r.PreemptProblem = e.StopWhy.Detail
			}
		}
		if e.Task != nil && e.Task.Prof != nil {
			r.AlphaMin, r.Heavy = e.Task.AlphaMin, e.Task.Heavy
		}
		switch {
		case e.Phase == PhDispatched:
			r.Stage = "dispatched"
			r.Nodes, r.Reason, r.Note = d.Nodes, d.Why.Code, d.Why.Detail
			if e.placed && e.Task != nil {
				r.Alpha, _ = tr.env.Placer.AlphaOf(e.Task.Prof, &e.place)
			}
		case e.standing:
			r.Stage, r.Reason = "standing", reason.Standing
			r.Note = "not ranked by asrpt (" + e.Why.String() + "): ahead of every managed job Slurm's own order puts behind it"
		case e.High():
			r.Stage, r.Reason = "released", reason.NoRoom
		default:
			r.Stage, r.Reason = "waiting", reason.VirtualQueue
			if e.Task != nil {
				r.VirtualRemaining = e.Task.VirtualRemaining()
			}
		}
		if e.heldBack != "" && e.Phase != PhDispatched {
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
		c := tr.view.classify(sj)
		if e := tr.Entries[sj.ID]; e != nil && !e.Why.None() {
			why = e.Why
		} else if ok, w := admitted(c, e); !ok {
			why = w
		}
		rows = append(rows, PlanRow{JobID: sj.ID, User: sj.User, Name: sj.Name, Shape: string(c.shape),
			GPUs: c.gpus, Stage: "left_alone", PriorityNow: sj.Priority,
			PriorityNew: sj.Priority, Reason: why.Code, Note: why.Detail})
	}
	if !tr.cfg.preempting() {
		return rows
	}
	for i := range jobs {
		if limit > 0 && len(rows) >= limit {
			break
		}
		// A job the policy still ranks (Slurm started it before its turn,
		// StartedCycles lists ago at most) keeps its ranked row only.
		if sj := &jobs[i]; !sj.Pending() && !inPlan[sj.ID] {
			rows = append(rows, tr.runningRow(sj))
		}
	}
	return rows
}

// runningRow is the plan row of running job sj: whether asrpt may preempt
// it, and why not.
func (tr *State) runningRow(sj *slurmclient.Job) PlanRow {
	sh := sj.Shape()
	r := PlanRow{JobID: sj.ID, User: sj.User, Name: sj.Name, Shape: string(sh), GPUs: tr.view.gpus(sj, sh),
		Stage: "running", PriorityNow: sj.Priority, PriorityNew: sj.Priority}
	no := false
	r.Preemptible = &no
	e := tr.Entries[sj.ID]
	if e == nil || (e.Phase != PhRunning && e.Phase != PhStopping) {
		r.Reason, r.Note = reason.NotInPolicy, "not running in asrpt's policy (running before the sidecar started, never ranked pending, or withdrawn): never preempted"
		if e != nil {
			r.Preemptions = e.Preemptions
		}
		return r
	}
	r.Predicted, r.Known, r.Family, r.Preemptions = e.Est.Seconds, e.Est.Known, e.family(), e.Preemptions
	r.Estimator = string(e.Est.Estimator)
	if e.StopFrom != "" {
		r.Stop, r.StopFrom = e.Stop.String(), e.StopFrom
	}
	p := tr.cfg.Params
	switch {
	case e.Phase == PhStopping:
		r.Stage, r.Reason = "stopping", reason.Stopping
		r.Note = fmt.Sprintf("stop signal %s sent at %s; waiting for its requeue", e.Stop.Signal, time.Unix(int64(e.signalledAt), 0).UTC().Format(time.RFC3339))
	case !e.CanStop():
		r.Reason, r.Note = e.StopWhy.Code, e.StopWhy.Detail
	case e.Preemptions >= p.MaxPreemptions:
		r.Reason, r.Note = reason.MaxPreemptions, fmt.Sprintf("preempted %d times: policy.max_preemptions", e.Preemptions)
	case e.Task != nil && tr.Clock-e.Task.Start < p.PreemptExempt:
		r.Reason, r.Note = reason.Exempt, fmt.Sprintf("exempt until %s (policy.preempt_exempt after each start)",
			time.Unix(int64(e.Task.Start+p.PreemptExempt), 0).UTC().Format(time.RFC3339))
	default:
		yes := true
		r.Preemptible = &yes
	}
	return r
}
