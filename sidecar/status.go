package sidecar

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"

	"github.com/asrpt/asrpt/internal/buildinfo"
	"github.com/asrpt/asrpt/slurmclient"
)

// Status is the running sidecar's own view, served as JSON on /status
// (asrpt status prints it): how the last cycle went, the jobs it tracks by
// stage, the ones it leaves alone and why, the open incidents, the token.
type Status struct {
	Version   string    `json:"version"`
	Started   time.Time `json:"started"`
	DryRun    bool      `json:"dry_run"`
	Policy    string    `json:"policy"`
	IntervalS float64   `json:"interval_s"`
	// WriteMode is the write mode in use: factor (site factors) or
	// priority (also when it stands in for factor mode).
	WriteMode string `json:"write_mode"`
	// LastCycle is the last cycle, successful or not (nil before the
	// first); LastSuccess the end of the last successful one.
	LastCycle   *CycleStatus `json:"last_cycle,omitempty"`
	LastSuccess time.Time    `json:"last_success,omitempty"`
	// SlurmrestdUp is false when the last cycle could not read from
	// slurmrestd.
	SlurmrestdUp bool `json:"slurmrestd_up"`
	// Stages counts the tracked jobs: queued (waiting or released),
	// dispatched (their turn has come), running, left_alone.
	Stages map[string]int `json:"stages"`
	// LeftAlone lists tracked pending jobs asrpt does not order, with the
	// reason (an admin's priority, held, out of scope, ...), at most
	// maxStatusJobs of them, oldest first.
	LeftAlone []LeftAloneJob `json:"left_alone"`
	// Incidents are the problems not yet recovered from.
	Incidents []IncidentStatus `json:"incidents"`
	// Token is the token file's user and expiry (http(s) only).
	Token *TokenStatus `json:"token,omitempty"`
}

// CycleStatus is one cycle in Status.
type CycleStatus struct {
	Time      time.Time      `json:"time"`
	OK        bool           `json:"ok"`
	Error     string         `json:"error,omitempty"`
	DurationS float64        `json:"duration_s"`
	Jobs      map[string]int `json:"jobs"`
	Writes    map[string]int `json:"writes"`
	Failed    map[string]int `json:"failed"`
}

// LeftAloneJob is a tracked job asrpt does not order.
type LeftAloneJob struct {
	JobID string `json:"job_id"`
	// Code is why, as a stable code (package reason); Reason says it in
	// words.
	Code   reason.Code `json:"code"`
	Reason string      `json:"reason"`
}

// IncidentStatus is an open incident.
type IncidentStatus struct {
	Key         string    `json:"key"`
	Since       time.Time `json:"since"`
	Occurrences int       `json:"occurrences"`
	LastError   string    `json:"last_error"`
}

// TokenStatus is the token as the status shows it.
type TokenStatus struct {
	File     string    `json:"file"`
	User     string    `json:"user,omitempty"`
	Expires  time.Time `json:"expires,omitempty"`
	Error    string    `json:"error,omitempty"`
	ExpiresS float64   `json:"expires_in_s,omitempty"`
}

// ServedPlan is the plan of the daemon's last successful cycle, served on
// /plan (asrpt plan shows it): the decisions it wrote, not a fresh dry run.
type ServedPlan struct {
	Time   time.Time          `json:"time"`
	DryRun bool               `json:"dry_run"`
	Rows   []decision.PlanRow `json:"rows"`
}

// maxServedPlanRows bounds the rows /plan serves (the head of the queue
// first, then the jobs left alone).
const maxServedPlanRows = 10000

// servePlan answers /plan with the last cycle's plan, 503 before the first.
func (s *Sidecar) servePlan(w http.ResponseWriter, _ *http.Request) {
	p := s.lastPlan.Load()
	if p == nil {
		http.Error(w, "no cycle has completed yet", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(p)
}

// maxStatusJobs bounds the jobs listed in a Status.
const maxStatusJobs = 200

// publishStatus builds the status after a cycle (err its failure, nil on
// success) and the gauges that go with it; Run's goroutine only.
func (s *Sidecar) publishStatus(rep CycleReport, err error) {
	bi := buildinfo.Get()
	st := &Status{Version: bi.Version, Started: time.Unix(0, s.started.Load()), DryRun: s.cfg.DryRun,
		Policy: s.cfg.Policy, IntervalS: s.cfg.Interval.Seconds(), WriteMode: string(s.state.Mode), Stages: map[string]int{}}
	cs := &CycleStatus{Time: rep.Time, OK: err == nil, DurationS: rep.Duration.Seconds(), Jobs: rep.Jobs,
		Writes: rep.Writes, Failed: rep.Failed}
	if err != nil {
		cs.Error = err.Error()
	}
	st.LastCycle = cs
	if ok := s.lastOK.Load(); ok != 0 {
		st.LastSuccess = time.Unix(0, ok)
	}
	st.SlurmrestdUp = err == nil || !isReadFailure(err)
	up := 0.0
	if st.SlurmrestdUp {
		up = 1
	}
	s.m.slurmUp.Set(up)
	handsOff := 0
	for _, e := range s.state.Entries {
		switch e.Phase {
		case decision.PhQueued:
			st.Stages["queued"]++
		case decision.PhDispatched:
			st.Stages["dispatched"]++
		case decision.PhRunning:
			st.Stages["running"]++
		default:
			st.Stages["left_alone"]++
			why := e.Why
			if e.HandsOff {
				why, handsOff = reason.Of(reason.AdminPriority, "priority set by an admin"), handsOff+1
			}
			if !why.None() {
				st.LeftAlone = append(st.LeftAlone, LeftAloneJob{JobID: e.ID, Code: why.Code, Reason: why.Detail})
			}
		}
	}
	s.m.handsOff.Set(float64(handsOff))
	slices.SortFunc(st.LeftAlone, func(a, b LeftAloneJob) int { return decision.CompareID(a.JobID, b.JobID) })
	if len(st.LeftAlone) > maxStatusJobs {
		st.LeftAlone = st.LeftAlone[:maxStatusJobs]
	}
	for k, in := range s.active {
		st.Incidents = append(st.Incidents, IncidentStatus{Key: k, Since: in.since, Occurrences: in.n, LastError: in.last})
	}
	slices.SortFunc(st.Incidents, func(a, b IncidentStatus) int { return cmp.Compare(a.Key, b.Key) })
	if f := s.cfg.Slurm.TokenFile; f != "" && !strings.HasPrefix(s.cfg.Slurm.URL, "unix:") {
		ts := &TokenStatus{File: f}
		if c, terr := slurmclient.ReadTokenClaims(f); terr != nil {
			ts.Error = terr.Error()
		} else {
			ts.User, ts.Expires = c.User, c.Expires
			if !c.Expires.IsZero() {
				ts.ExpiresS = time.Until(c.Expires).Seconds()
				s.m.tokenExpiry.Set(float64(c.Expires.Unix()))
			}
		}
		st.Token = ts
	}
	s.status.Store(st)
}

// isReadFailure reports a cycle error of a failed read from slurmrestd.
func isReadFailure(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "sidecar: nodes:") || strings.HasPrefix(msg, "sidecar: jobs:")
}

// serveStatus answers /status with the last published Status.
func (s *Sidecar) serveStatus(w http.ResponseWriter, _ *http.Request) {
	st := s.status.Load()
	if st == nil {
		st = &Status{Version: buildinfo.Get().Version, Started: time.Unix(0, s.started.Load()), Stages: map[string]int{},
			IntervalS: s.interval().Seconds()}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(st)
}
