package decision

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/prediction"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/reason"
)

// StateVersion is the version of the state file format.
const StateVersion = 2

// ErrCorruptState marks a state file that cannot be used.
var ErrCorruptState = errors.New("corrupt state file")

// Saved is the state file: what the sidecar needs to go on after a
// restart without reordering the queue.
type Saved struct {
	Version int    `json:"version"`
	Policy  string `json:"policy"`
	// Clock is the time of the last cycle, Unix seconds.
	Clock       float64    `json:"clock"`
	NextSeq     int        `json:"next_seq"`
	NextDSeq    int        `json:"next_dispatch_seq"`
	Jobs        []SavedJob `json:"jobs"`
	SavedAtUnix int64      `json:"saved_at"`
}

// SavedJob is one tracked job.
type SavedJob struct {
	Job job.Job `json:"job"`
	Seq int     `json:"seq"`
	Est float64 `json:"est_s"`
	// Median is the estimate's median, seconds (0: the predictor gave one
	// number).
	Median float64 `json:"median_s,omitempty"`
	Known  bool    `json:"known"`
	// Estimator is what gave the estimate (prediction.Estimator; absent
	// in files of earlier versions, and dropped when not one of them).
	Estimator string `json:"estimator,omitempty"`
	// ProfileSource is where the profile Job.Profile names came from
	// (comment, rule, default).
	ProfileSource string `json:"profile_source,omitempty"`
	Phase         string `json:"phase"`
	// Why is why an idle job is left alone, in words, and WhyCode its
	// code (package reason; absent in files of earlier versions).
	Why     string      `json:"why,omitempty"`
	WhyCode reason.Code `json:"why_code,omitempty"`
	// Remaining is the virtual work left, seconds (Task.VirtualRemaining);
	// Released says whether the virtual machine had released the job;
	// Order is its 0-based position in the policy's Pending order (queued
	// jobs), the order in which a restart restores them. Parked marks an
	// idle job withdrawn while pending that rejoins with Remaining.
	Remaining float64 `json:"remaining_s"`
	Released  bool    `json:"released"`
	Order     int     `json:"order"`
	Parked    bool    `json:"parked,omitempty"`
	// Dispatch.
	DSeq     int         `json:"dispatch_seq,omitempty"`
	PlacedAt float64     `json:"placed_at,omitempty"`
	Place    []SavedSlot `json:"placement,omitempty"`
	// Writes: the explicit priority (priority mode) and the site factor
	// (factor mode; absent in files of earlier versions, read as 0,
	// Slurm's default) asrpt wrote and believes in effect.
	Priority    uint32   `json:"priority,omitempty"`
	SiteFactor  uint32   `json:"site_factor,omitempty"`
	Nodes       []string `json:"nodes,omitempty"`
	GPUsPerNode int      `json:"gpus_per_node,omitempty"`
	NoNodes     bool     `json:"no_nodes,omitempty"`
	OwnNodes    bool     `json:"own_nodes,omitempty"`
	WroteNodes  bool     `json:"wrote_nodes,omitempty"`
	HandsOff    bool     `json:"hands_off,omitempty"`
	// HetSiteFactor lists the components of a heterogeneous job, other
	// than its leader, that asrpt wrote a site factor to.
	HetSiteFactor []string `json:"het_site_factor,omitempty"`
	// Standing marks a job asrpt does not rank but keeps at its place in
	// Slurm's own order; BasePriority is the priority it (or any job) had
	// when asrpt first saw it.
	Standing     bool   `json:"standing,omitempty"`
	BasePriority uint32 `json:"base_priority,omitempty"`
	// MayFactor and MayPriority: a site factor (other than 0) or a
	// priority was recorded here before it was sent and its outcome may
	// be unknown; a giveback undoes it whatever the value (Entry.MayFactor,
	// Entry.MayPrio). Absent in files of earlier versions: false.
	MayFactor   bool `json:"may_site_factor,omitempty"`
	MayPriority bool `json:"may_priority,omitempty"`
	// Preemption (absent in files of earlier versions: never preempted).
	// Stop is how the job stops ([B:|F:]SIGNAL@SECONDS) and StopFrom where
	// that came from ("comment", "preemption.rule[N]"); StopWhy why it may
	// not be preempted. Preemptions counts the times asrpt stopped it;
	// SignalledAt is the cycle time of the last stop, Unix seconds, saved
	// before its signal goes out; SignalSent says the signal went out.
	Stop     string `json:"stop,omitempty"`
	StopFrom string `json:"stop_from,omitempty"`
	StopWhy  string `json:"stop_why,omitempty"`
	// StopWhyCode is StopWhy's code (package reason).
	StopWhyCode reason.Code `json:"stop_why_code,omitempty"`
	Preemptions int         `json:"preemptions,omitempty"`
	SignalledAt float64     `json:"signalled_at,omitempty"`
	SignalSent  bool        `json:"signal_sent,omitempty"`
}

type SavedSlot struct {
	Node string `json:"node"`
	GPUs uint64 `json:"gpus"` // bit mask of GPU indices
}

// ToSave returns the state to save; its SavedAtUnix is left 0 for the
// writer, which knows the time it is written.
func (tr *State) ToSave() *Saved {
	// Jobs is never null: an empty state reads "jobs": [].
	st := &Saved{Version: StateVersion, Policy: tr.cfg.Policy, Clock: tr.Clock,
		NextSeq: tr.nextSeq, NextDSeq: tr.nextDSeq, Jobs: make([]SavedJob, 0, len(tr.Entries))}
	if math.IsInf(st.Clock, 0) {
		st.Clock = 0
	}
	order := make(map[*policy.Task]int)
	for i, t := range tr.pol.Pending() {
		order[t] = i
	}
	for _, e := range tr.Entries {
		sj := SavedJob{Job: e.job, Seq: e.Seq, Est: e.Est.Seconds, Median: e.Est.Median, Known: e.Est.Known, Estimator: string(e.Est.Estimator), Phase: e.Phase.String(),
			Why: e.Why.Detail, WhyCode: e.Why.Code, Released: e.Released, Parked: e.Parked, Remaining: e.remaining,
			Priority: e.Prio, SiteFactor: e.Factor, Nodes: e.Nodes, GPUsPerNode: e.GPUsPerNode, NoNodes: e.NoNodes, HandsOff: e.HandsOff,
			OwnNodes: e.OwnNodes, WroteNodes: e.WroteNodes, MayFactor: e.MayFactor, MayPriority: e.MayPrio, ProfileSource: string(e.prof.Source), HetSiteFactor: e.HetFactor,
			Standing: e.standing, BasePriority: e.base,
			StopFrom: e.StopFrom, StopWhy: e.StopWhy.Detail, StopWhyCode: e.StopWhy.Code, Preemptions: e.Preemptions, SignalledAt: e.signalledAt, SignalSent: e.SignalSent}
		if e.StopFrom != "" {
			sj.Stop = e.Stop.String()
		}
		if e.Phase == PhQueued && e.Task != nil {
			sj.Remaining = e.Task.VirtualRemaining()
			sj.Released = !math.IsNaN(e.Task.Released)
			sj.Order = order[e.Task]
		}
		if e.Phase == PhDispatched {
			sj.DSeq, sj.PlacedAt = e.dseq, e.placedAt
			if e.placed {
				for _, sl := range e.place.Slots {
					sj.Place = append(sj.Place, SavedSlot{Node: tr.nodes.cl.Nodes[sl.Node].Name, GPUs: sl.GPUs})
				}
			}
		}
		st.Jobs = append(st.Jobs, sj)
	}
	slices.SortFunc(st.Jobs, func(a, b SavedJob) int { return CompareID(a.Job.ID, b.Job.ID) })
	return st
}

// Restore rebuilds the state from a saved one: the waiting jobs
// re-enter a fresh policy at the saved clock through Policy.Restore, in
// their saved Pending order with their saved virtual work left, so the
// policy's order is the one it had when the state was saved. What cannot
// be restored: release times (the saved clock stands for them), the
// policy's view of running jobs (its reservations rebuild as jobs start).
func (tr *State) Restore(st *Saved) error {
	if st.Policy != tr.cfg.Policy {
		return fmt.Errorf("%w: saved by policy %q, configured %q", ErrCorruptState, st.Policy, tr.cfg.Policy)
	}
	byPhase := map[string]Phase{}
	for p, n := range phaseNames {
		byPhase[n] = Phase(p)
	}
	var inPolicy []*Entry
	order := map[*Entry]int{}
	for i := range st.Jobs {
		sj := &st.Jobs[i]
		ph, ok := byPhase[sj.Phase]
		if !ok || sj.Job.ID == "" || tr.Entries[sj.Job.ID] != nil || sj.Seq < 0 || sj.Seq >= st.NextSeq ||
			!(sj.Remaining >= 0) || math.IsInf(sj.Remaining, 0) || !(sj.Est >= 0) || !(sj.Median >= 0) || math.IsInf(sj.Median, 0) || sj.Order < 0 ||
			sj.Preemptions < 0 || sj.Preemptions > policy.MaxPreemptionsBound || !(sj.SignalledAt >= 0) || math.IsInf(sj.SignalledAt, 0) {
			tr.Reset()
			return fmt.Errorf("%w: job %d (%q): bad record", ErrCorruptState, i, sj.Job.ID)
		}
		by := prediction.Estimator(sj.Estimator)
		if !by.Valid() {
			by = "" // not a name of ours: not shown
		}
		e := &Entry{ID: sj.Job.ID, job: sj.Job, Seq: sj.Seq, Est: predictor.Estimate{Seconds: sj.Est, Median: sj.Median, Known: sj.Known, Estimator: by},
			Phase: ph, Why: savedReason(sj.WhyCode, sj.Why, reason.Withdrawn), Released: sj.Released, Parked: sj.Parked && ph == PhIdle, remaining: sj.Remaining,
			dseq: sj.DSeq, placedAt: sj.PlacedAt, Prio: sj.Priority, Factor: sj.SiteFactor, Nodes: sj.Nodes, GPUsPerNode: sj.GPUsPerNode,
			NoNodes: sj.NoNodes, HandsOff: sj.HandsOff, OwnNodes: sj.OwnNodes, WroteNodes: sj.WroteNodes,
			MayFactor: sj.MayFactor, MayPrio: sj.MayPriority, HetFactor: sj.HetSiteFactor,
			standing: sj.Standing && ph == PhIdle, base: sj.BasePriority,
			StopFrom: sj.StopFrom, StopWhy: savedReason(sj.StopWhyCode, sj.StopWhy, reason.PreemptFailed), Preemptions: sj.Preemptions, signalledAt: sj.SignalledAt, SignalSent: sj.SignalSent}
		if e.StopFrom != "" {
			st, err := jobword.ParseStop(sj.Stop)
			if err != nil {
				tr.Reset()
				return fmt.Errorf("%w: job %d (%q): stop: %w", ErrCorruptState, i, sj.Job.ID, err)
			}
			e.Stop = st
		}
		e.prof = tr.profiles.Restore(sj.Job.Profile, jobprofile.Source(sj.ProfileSource), max(sj.Job.GPUs, 1))
		e.job.Profile = e.prof.Model
		if len(sj.Place) > 0 {
			e.placed = true
			for _, sl := range sj.Place {
				n, ok := tr.nodes.index[sl.Node]
				if !ok {
					e.placed = false
					break
				}
				e.place.Slots = append(e.place.Slots, placement.Slot{Node: n, GPUs: sl.GPUs})
			}
			if !e.placed {
				e.place = placement.Placement{}
			}
		}
		tr.Entries[e.ID] = e
		if ph == PhQueued {
			inPolicy = append(inPolicy, e)
			order[e] = sj.Order
		}
	}
	tr.nextSeq, tr.nextDSeq = st.NextSeq, st.NextDSeq
	tr.Clock = st.Clock
	slices.SortFunc(inPolicy, func(a, b *Entry) int {
		if c := order[a] - order[b]; c != 0 {
			return c
		}
		return a.Seq - b.Seq
	})
	for _, e := range inPolicy {
		released, remaining := e.Released, e.remaining
		tr.enter(st.Clock, e, func(t *policy.Task) { tr.pol.Restore(st.Clock, t, remaining, released) })
		e.remaining = 0
	}
	tr.Dirty = false
	return nil
}

// savedReason is the reason a state file saved as code and detail. A file
// of an earlier version saved the detail alone: its code is then old, the
// code most such reasons had (reason.Withdrawn for an idle job's,
// reason.PreemptFailed for a stop's).
func savedReason(code reason.Code, detail string, old reason.Code) reason.Reason {
	if code == "" && detail != "" {
		code = old
	}
	return reason.Of(code, detail)
}
