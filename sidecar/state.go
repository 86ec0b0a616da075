package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/asrpt/asrpt/reason"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/asrpt/asrpt/internal/ownedpath"
	"github.com/asrpt/asrpt/internal/regularfile"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/prediction"
	"github.com/asrpt/asrpt/predictor"
)

// stateVersion is the version of the state file format.
const stateVersion = 2

// savedState is the state file: what the sidecar needs to go on after a
// restart without reordering the queue.
type savedState struct {
	Version int    `json:"version"`
	Policy  string `json:"policy"`
	// Clock is the time of the last cycle, Unix seconds.
	Clock       float64    `json:"clock"`
	NextSeq     int        `json:"next_seq"`
	NextDSeq    int        `json:"next_dispatch_seq"`
	Jobs        []savedJob `json:"jobs"`
	SavedAtUnix int64      `json:"saved_at"`
}

// savedJob is one tracked job.
type savedJob struct {
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
	Place    []savedSlot `json:"placement,omitempty"`
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
	// be unknown; a giveback undoes it whatever the value (entry.mayFactor,
	// entry.mayPrio). Absent in files of earlier versions: false.
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

type savedSlot struct {
	Node string `json:"node"`
	GPUs uint64 `json:"gpus"` // bit mask of GPU indices
}

// maxStateFile bounds the state file read, bytes (256 MiB: about half a
// million jobs).
const maxStateFile = 256 << 20

// errNoState means there is no state file yet.
var errNoState = errors.New("no state file")

// ErrCorruptState marks a state file that cannot be used.
var ErrCorruptState = errors.New("corrupt state file")

// readState reads the state file at path, refusing one it cannot trust
// (openState; an error wrapping ownedpath.ErrUntrusted).
func readState(path string) (*savedState, error) {
	f, err := openState(path)
	switch {
	case errors.Is(err, ownedpath.ErrUntrusted):
		return nil, err
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNoState
	case errors.Is(err, regularfile.ErrNotRegular):
		return nil, fmt.Errorf("state: %w: %w", ErrCorruptState, err)
	case err != nil:
		return nil, fmt.Errorf("state: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if len(data) > maxStateFile {
		return nil, fmt.Errorf("state %s: %w: larger than %d bytes", path, ErrCorruptState, maxStateFile)
	}
	var st savedState
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("state %s: %w: %w", path, ErrCorruptState, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("state %s: %w: version %d, want %d", path, ErrCorruptState, st.Version, stateVersion)
	}
	return &st, nil
}

// writeState writes st to path atomically: a temporary file in the same
// directory, synced, renamed over path, and the directory synced.
func writeState(path string, st *savedState) error {
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".state-*.tmp")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// moveAside renames a bad state file to path.corrupt-<unix time> and
// returns the new name.
func moveAside(path string) (string, error) {
	to := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
	return to, os.Rename(path, to)
}

// stateToSave returns the state to save.
func (tr *tracker) stateToSave() *savedState {
	// Jobs is never null: an empty state reads "jobs": [].
	st := &savedState{Version: stateVersion, Policy: tr.cfg.Policy, Clock: tr.clock,
		NextSeq: tr.nextSeq, NextDSeq: tr.nextDSeq, SavedAtUnix: time.Now().Unix(), Jobs: make([]savedJob, 0, len(tr.entries))}
	if math.IsInf(st.Clock, 0) {
		st.Clock = 0
	}
	order := make(map[*policy.Task]int)
	for i, t := range tr.pol.Pending() {
		order[t] = i
	}
	for _, e := range tr.entries {
		sj := savedJob{Job: e.job, Seq: e.seq, Est: e.est.Seconds, Median: e.est.Median, Known: e.est.Known, Estimator: string(e.est.Estimator), Phase: e.ph.String(),
			Why: e.why.Detail, WhyCode: e.why.Code, Released: e.released, Parked: e.parked, Remaining: e.remaining,
			Priority: e.prio, SiteFactor: e.factor, Nodes: e.nodes, GPUsPerNode: e.gpn, NoNodes: e.noNodes, HandsOff: e.handsOff,
			OwnNodes: e.ownNodes, WroteNodes: e.wroteNodes, MayFactor: e.mayFactor, MayPriority: e.mayPrio, ProfileSource: string(e.prof.Source), HetSiteFactor: e.hetFactor,
			Standing: e.standing, BasePriority: e.base,
			StopFrom: e.stopFrom, StopWhy: e.stopWhy.Detail, StopWhyCode: e.stopWhy.Code, Preemptions: e.preemptions, SignalledAt: e.signalledAt, SignalSent: e.signalSent}
		if e.stopFrom != "" {
			sj.Stop = e.stop.String()
		}
		if e.ph == phQueued && e.task != nil {
			sj.Remaining = e.task.VirtualRemaining()
			sj.Released = !math.IsNaN(e.task.Released)
			sj.Order = order[e.task]
		}
		if e.ph == phDispatched {
			sj.DSeq, sj.PlacedAt = e.dseq, e.placedAt
			if e.placed {
				for _, sl := range e.place.Slots {
					sj.Place = append(sj.Place, savedSlot{Node: tr.nodes.cl.Nodes[sl.Node].Name, GPUs: sl.GPUs})
				}
			}
		}
		st.Jobs = append(st.Jobs, sj)
	}
	slices.SortFunc(st.Jobs, func(a, b savedJob) int { return compareID(a.Job.ID, b.Job.ID) })
	return st
}

// restore rebuilds the sidecar from a saved state: the waiting jobs
// re-enter a fresh policy at the saved clock through Policy.Restore, in
// their saved Pending order with their saved virtual work left, so the
// policy's order is the one it had when the state was saved. What cannot
// be restored: release times (the saved clock stands for them), the
// policy's view of running jobs (its reservations rebuild as jobs start).
func (tr *tracker) restore(st *savedState) error {
	if st.Policy != tr.cfg.Policy {
		return fmt.Errorf("%w: saved by policy %q, configured %q", ErrCorruptState, st.Policy, tr.cfg.Policy)
	}
	byPhase := map[string]phase{}
	for p, n := range phaseNames {
		byPhase[n] = phase(p)
	}
	var inPolicy []*entry
	order := map[*entry]int{}
	for i := range st.Jobs {
		sj := &st.Jobs[i]
		ph, ok := byPhase[sj.Phase]
		if !ok || sj.Job.ID == "" || tr.entries[sj.Job.ID] != nil || sj.Seq < 0 || sj.Seq >= st.NextSeq ||
			!(sj.Remaining >= 0) || math.IsInf(sj.Remaining, 0) || !(sj.Est >= 0) || !(sj.Median >= 0) || math.IsInf(sj.Median, 0) || sj.Order < 0 ||
			sj.Preemptions < 0 || sj.Preemptions > policy.MaxPreemptionsBound || !(sj.SignalledAt >= 0) || math.IsInf(sj.SignalledAt, 0) {
			tr.resetState()
			return fmt.Errorf("%w: job %d (%q): bad record", ErrCorruptState, i, sj.Job.ID)
		}
		by := prediction.Estimator(sj.Estimator)
		if !by.Valid() {
			by = "" // not a name of ours: not shown
		}
		e := &entry{id: sj.Job.ID, job: sj.Job, seq: sj.Seq, est: predictor.Estimate{Seconds: sj.Est, Median: sj.Median, Known: sj.Known, Estimator: by},
			ph: ph, why: savedReason(sj.WhyCode, sj.Why, reason.Withdrawn), released: sj.Released, parked: sj.Parked && ph == phIdle, remaining: sj.Remaining,
			dseq: sj.DSeq, placedAt: sj.PlacedAt, prio: sj.Priority, factor: sj.SiteFactor, nodes: sj.Nodes, gpn: sj.GPUsPerNode,
			noNodes: sj.NoNodes, handsOff: sj.HandsOff, ownNodes: sj.OwnNodes, wroteNodes: sj.WroteNodes,
			mayFactor: sj.MayFactor, mayPrio: sj.MayPriority, hetFactor: sj.HetSiteFactor,
			standing: sj.Standing && ph == phIdle, base: sj.BasePriority,
			stopFrom: sj.StopFrom, stopWhy: savedReason(sj.StopWhyCode, sj.StopWhy, reason.PreemptFailed), preemptions: sj.Preemptions, signalledAt: sj.SignalledAt, signalSent: sj.SignalSent}
		if e.stopFrom != "" {
			st, err := jobword.ParseStop(sj.Stop)
			if err != nil {
				tr.resetState()
				return fmt.Errorf("%w: job %d (%q): stop: %w", ErrCorruptState, i, sj.Job.ID, err)
			}
			e.stop = st
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
		tr.entries[e.id] = e
		if ph == phQueued {
			inPolicy = append(inPolicy, e)
			order[e] = sj.Order
		}
	}
	tr.nextSeq, tr.nextDSeq = st.NextSeq, st.NextDSeq
	tr.clock = st.Clock
	slices.SortFunc(inPolicy, func(a, b *entry) int {
		if c := order[a] - order[b]; c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	for _, e := range inPolicy {
		released, remaining := e.released, e.remaining
		tr.enter(st.Clock, e, func(t *policy.Task) { tr.pol.Restore(st.Clock, t, remaining, released) })
		e.remaining = 0
	}
	tr.dirty = false
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
