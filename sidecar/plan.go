package sidecar

import (
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

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

// plan builds the plan rows of the decisions, head first, then one row for
// each pending job of jobs that asrpt leaves alone, with the reason; at
// most limit rows (0: all).
func (s *Sidecar) plan(ds []decision, jobs []slurmclient.Job, limit int) []PlanRow {
	if limit > 0 && len(ds) > limit {
		ds = ds[:limit]
	}
	rows := make([]PlanRow, len(ds), max(len(ds), min(len(jobs), max(limit, len(ds)))))
	inPlan := make(map[string]bool, len(ds))
	for i, d := range ds {
		e := d.e
		inPlan[e.id] = true
		r := PlanRow{JobID: e.id, User: e.job.User, Name: e.job.Name, GPUs: e.job.GPUs,
			Predicted: e.est.Seconds, Known: e.est.Known, Rank: i + 1, PriorityNew: d.priority}
		if e.sj != nil {
			r.PriorityNow, r.Shape = e.sj.Priority, string(e.sj.Shape())
		}
		if s.mode == WriteFactor {
			now, next := e.factor, e.factor
			if d.setFactor {
				next = d.factor
			}
			r.PriorityNew, r.SiteFactorNow, r.SiteFactorNew = r.PriorityNow, &now, &next
		}
		r.Family = predictor.Family(e.job.Name)
		r.Profile, r.ProfileSource, r.ProfileProblem = e.prof.Model, string(e.prof.Source), e.prof.Problem
		if e.task != nil && e.task.Prof != nil {
			r.AlphaMin, r.Heavy = e.task.AlphaMin, e.task.Heavy
		}
		switch {
		case e.ph == phDispatched:
			r.Stage = "dispatched"
			r.Nodes, r.Note = d.nodes, d.why
			if e.placed && e.task != nil {
				r.Alpha, _ = s.env.Placer.AlphaOf(e.task.Prof, &e.place)
			}
		case e.standing:
			r.Stage = "standing"
			r.Note = "not ranked by asrpt (" + e.why + "): ahead of every managed job Slurm's own order puts behind it"
		case s.high(e):
			r.Stage = "released"
		default:
			r.Stage = "waiting"
			if e.task != nil {
				r.VirtualRemaining = e.task.VirtualRemaining()
			}
		}
		if e.heldBack != "" && e.ph != phDispatched {
			r.Note = "held back by Slurm (" + e.heldBack + "): ranked, never dispatched"
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
