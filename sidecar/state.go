package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/predictor"
)

// stateVersion is the version of the state file format.
const stateVersion = 1

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
	Job   job.Job `json:"job"`
	Seq   int     `json:"seq"`
	Est   float64 `json:"est_s"`
	Known bool    `json:"known"`
	Phase string  `json:"phase"`
	Why   string  `json:"why,omitempty"`
	// Remaining is the virtual work left, seconds; Released and RelRank
	// say whether and in which order the job was released.
	Remaining float64 `json:"remaining_s"`
	Released  bool    `json:"released"`
	RelRank   int     `json:"release_rank"`
	// Dispatch.
	DSeq     int         `json:"dispatch_seq,omitempty"`
	PlacedAt float64     `json:"placed_at,omitempty"`
	Place    []savedSlot `json:"placement,omitempty"`
	// Writes.
	Priority    uint32   `json:"priority,omitempty"`
	Nodes       []string `json:"nodes,omitempty"`
	GPUsPerNode int      `json:"gpus_per_node,omitempty"`
	NoNodes     bool     `json:"no_nodes,omitempty"`
	HandsOff    bool     `json:"hands_off,omitempty"`
}

type savedSlot struct {
	Node string `json:"node"`
	GPUs uint64 `json:"gpus"` // bit mask of GPU indices
}

// errNoState means there is no state file yet.
var errNoState = errors.New("no state file")

// ErrCorruptState marks a state file that cannot be used.
var ErrCorruptState = errors.New("corrupt state file")

// readState reads the state file at path.
func readState(path string) (*savedState, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoState
	}
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
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

// snapshot returns the state to save.
func (s *Sidecar) snapshot() *savedState {
	st := &savedState{Version: stateVersion, Policy: s.cfg.Policy, Clock: s.clock,
		NextSeq: s.nextSeq, NextDSeq: s.nextDSeq, SavedAtUnix: time.Now().Unix()}
	if math.IsInf(st.Clock, 0) {
		st.Clock = 0
	}
	for _, e := range s.entries {
		if e.gone {
			continue
		}
		sj := savedJob{Job: e.job, Seq: e.seq, Est: e.est.Seconds, Known: e.est.Known, Phase: e.ph.String(),
			Why: e.why, Remaining: e.remaining, Released: e.released, RelRank: e.relRank,
			Priority: e.prio, Nodes: e.nodes, GPUsPerNode: e.gpn, NoNodes: e.noNodes, HandsOff: e.handsOff}
		if e.task != nil && !s.vm {
			sj.Released = false
		}
		if e.ph == phDispatched {
			sj.DSeq, sj.PlacedAt = e.dseq, e.placedAt
			if e.placed {
				for _, sl := range e.place.Slots {
					sj.Place = append(sj.Place, savedSlot{Node: s.cl.Nodes[sl.Node].Name, GPUs: sl.GPUs})
				}
			}
		}
		st.Jobs = append(st.Jobs, sj)
	}
	slices.SortFunc(st.Jobs, func(a, b savedJob) int { return compareID(a.Job.ID, b.Job.ID) })
	return st
}

// restore rebuilds the sidecar from a saved state: the waiting jobs
// re-enter a fresh policy at the saved clock with their saved remaining
// virtual work (released ones first, in release order), so the policy's
// order is the one it had when the state was saved. What cannot be
// restored: release times (the saved clock stands for them), the policy's
// view of running jobs (its reservations rebuild as jobs start).
func (s *Sidecar) restore(st *savedState) error {
	if st.Policy != s.cfg.Policy {
		return fmt.Errorf("%w: saved by policy %q, configured %q", ErrCorruptState, st.Policy, s.cfg.Policy)
	}
	byPhase := map[string]phase{}
	for p, n := range phaseNames {
		byPhase[n] = phase(p)
	}
	var inPolicy []*entry
	for i := range st.Jobs {
		sj := &st.Jobs[i]
		ph, ok := byPhase[sj.Phase]
		if !ok || sj.Job.ID == "" || s.entries[sj.Job.ID] != nil || sj.Seq < 0 || sj.Seq >= st.NextSeq ||
			!(sj.Remaining >= 0) || math.IsInf(sj.Remaining, 0) || !(sj.Est >= 0) {
			s.resetState()
			return fmt.Errorf("%w: job %d (%q): bad record", ErrCorruptState, i, sj.Job.ID)
		}
		e := &entry{id: sj.Job.ID, job: sj.Job, seq: sj.Seq, est: predictor.Estimate{Seconds: sj.Est, Known: sj.Known},
			ph: ph, why: sj.Why, remaining: sj.Remaining, released: sj.Released, relRank: sj.RelRank,
			dseq: sj.DSeq, placedAt: sj.PlacedAt, prio: sj.Priority, nodes: sj.Nodes, gpn: sj.GPUsPerNode,
			noNodes: sj.NoNodes, handsOff: sj.HandsOff}
		if len(sj.Place) > 0 {
			e.placed = true
			for _, sl := range sj.Place {
				n, ok := s.nodeIndex[sl.Node]
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
		s.entries[e.id] = e
		if ph == phQueued || ph == phGhost {
			inPolicy = append(inPolicy, e)
		}
	}
	s.nextSeq, s.nextDSeq = st.NextSeq, st.NextDSeq
	s.clock = st.Clock
	// Released jobs first, in release order, then the others; within
	// each, the saved sequence.
	slices.SortFunc(inPolicy, func(a, b *entry) int {
		switch {
		case a.released != b.released:
			if a.released {
				return -1
			}
			return 1
		case a.released && a.relRank != b.relRank:
			return a.relRank - b.relRank
		}
		return a.seq - b.seq
	})
	for _, e := range inPolicy {
		ph, why := e.ph, e.why
		est := e.est
		if s.vm {
			// An estimate whose virtual size is the remaining work.
			est = predictor.Estimate{Seconds: e.remaining * float64(s.env.G) / float64(max(e.job.GPUs, 1)), Known: true}
			if e.released {
				est.Seconds = 0
			}
		}
		if !s.enter(st.Clock, e, est) {
			continue
		}
		if ph == phGhost {
			e.ph, e.why = phGhost, why
		}
	}
	s.dirty = false
	return nil
}
