package sidecar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/slurmclient"
)

// maxWriteBackoff bounds the wait before a failed write to one job is
// tried again: after the n-th failure in a row the next try waits
// interval·2^(n−1), at most this long.
const maxWriteBackoff = 15 * time.Minute

// maxNodeListTries is how many node lists are tried for one job before
// asrpt stops writing node lists to it (a refusal as invalid stops at once).
const maxNodeListTries = 3

// apply writes the changed values, head of the queue first, within the
// write limit; a value whose last write to the job failed waits for its
// backoff. In factor mode it writes site factors (those decide marked) and
// no priority: an explicit priority asrpt set before is taken back by a
// release sent with the factor (an Operator's release drops it; it also
// resets the job's eligible time, so it happens only once, after a switch
// from priority mode), and a heterogeneous job's factor goes to each of
// its components, then to its leader (slurmctld applies a factor written
// to the leader to the leader only). It returns an error only when writing
// cannot go on (the token or the privileges are refused, the context
// ended).
func (s *Sidecar) apply(ctx context.Context, p *decision.Plan, dry bool, rep *CycleReport) error {
	ds := p.Decisions
	if !dry && s.cfg.StateFile != "" {
		broken, _ := s.stateBroken.Load().(string)
		if s.recordIntents(ds) || broken != "" || len(p.Stops) > 0 {
			if err := s.saveState(); err != nil {
				// Nothing goes out that the state could not undo, and no
				// signal the state does not record.
				s.m.writesHeld.Inc()
				rep.WritesHeld = true
				return s.signalStops(ctx, p.Stops, dry, true, rep)
			}
		}
	}
	// Stop signals first: the victims' grace runs while the head's values
	// are written.
	if err := s.signalStops(ctx, p.Stops, dry, false, rep); err != nil {
		return err
	}
	budget := s.cfg.WriteLimit
	failedInRow := 0
	for _, d := range ds {
		e, nodes, gpn := d.Entry, d.Nodes, d.GPUsPerNode
		if e.Record == nil || !e.Record.Pending() {
			continue // missing from this list, or shown not pending (AbsentCycles, StartedCycles)
		}
		if nodes != nil && (!slices.Equal(nodes, e.Nodes) || gpn != e.GPUsPerNode) && s.due(e, "nodes", rep) {
			if budget == 0 {
				rep.Deferred++
				continue
			}
			// One guarded request with the priority or the site factor:
			// slurmctld refuses all of it once the job runs (a node list
			// that reaches a running job resizes it), and it leaves the
			// job's eligible time alone (a hold and release would not).
			u := slurmclient.JobUpdate{RequiredNodes: nodes, Guard: true}
			if s.state.Mode == WriteFactor {
				f := d.Factor
				u.SiteFactor = &f
			} else {
				p := d.Priority
				u.Priority = &p
			}
			if gpn > 0 {
				u.GPUsPerNode, u.GPUType = &gpn, e.Record.GPUs.Type
			}
			budget--
			stop, reason, err := s.write(ctx, e, "nodes", u, dry, rep, &failedInRow)
			if stop {
				return err
			}
			if !reason.StillPending() {
				// The job may be gone or started: no priority write to it
				// until the next read says it is still pending.
				continue
			}
		}
		if s.state.Mode == WriteFactor {
			if d.SetFactor && (d.Factor != e.Factor || e.Prio != 0) && s.due(e, "site_factor", rep) {
				if budget == 0 {
					rep.Deferred++
					continue
				}
				f := d.Factor
				u := slurmclient.JobUpdate{SiteFactor: &f}
				if e.Prio != 0 {
					release := false
					u.Hold = &release
				}
				budget--
				if stop, ok, err := s.writeComponents(ctx, e, f, dry, rep, &failedInRow); stop {
					return err
				} else if !ok {
					continue // the leader's factor waits until every component has it
				}
				if stop, _, err := s.write(ctx, e, "site_factor", u, dry, rep, &failedInRow); stop {
					return err
				}
			}
			continue
		}
		if d.Priority != e.Prio && s.due(e, "priority", rep) {
			if budget == 0 {
				rep.Deferred++
				continue
			}
			p := d.Priority
			budget--
			if stop, _, err := s.write(ctx, e, "priority", slurmclient.JobUpdate{Priority: &p}, dry, rep, &failedInRow); stop {
				return err
			}
		}
	}
	s.m.deferred.Add(float64(rep.Deferred))
	hi := 0
	for _, d := range ds {
		if d.Entry.High() {
			hi++
		}
	}
	s.m.released.Set(float64(hi))
	return nil
}

// writeComponents writes site factor f to every component of heterogeneous
// job e other than its leader, each by its own job id, and reports whether
// all of them have it (true at once for any other job): slurmctld applies
// a site factor written to the leader to the leader only, and backfill
// plans components of unequal priority apart. A failure is recorded
// against e's site factor (the leader is then not written, so that the
// whole job is written again after the backoff).
func (s *Sidecar) writeComponents(ctx context.Context, e *decision.Entry, f uint32, dry bool, rep *CycleReport, inRow *int) (stop, ok bool, err error) {
	if e.Record.Shape() != slurmclient.ShapeHetLeader {
		return false, true, nil
	}
	for _, c := range e.Record.Het.Components {
		if c == e.ID {
			continue
		}
		if stop, reason, err := s.writeTo(ctx, e, c, "site_factor", slurmclient.JobUpdate{SiteFactor: &f}, dry, rep, inRow); stop || reason != FailNone {
			return stop, false, err
		}
	}
	return false, true, nil
}

// recordIntents marks on each job what this cycle's decisions may write
// to it (mayFactor for a site factor other than 0, mayPrio for a
// priority, wroteNodes for a node list) and reports whether a mark is new:
// then the state is saved before any write goes out, so that whatever
// reaches Slurm is in the state file before it does, and `asrpt giveback`
// can undo it even if the sidecar dies before the cycle's own save. The
// marks over-approximate (a write the limit defers is marked too); a
// giveback of a job that holds nothing is harmless.
func (s *Sidecar) recordIntents(ds []decision.Decision) bool {
	changed := false
	mark := func(b *bool) {
		if !*b {
			*b, changed = true, true
		}
	}
	for _, d := range ds {
		e := d.Entry
		if e.Record == nil || !e.Record.Pending() {
			continue
		}
		nodes := d.Nodes != nil && (!slices.Equal(d.Nodes, e.Nodes) || d.GPUsPerNode != e.GPUsPerNode)
		if nodes {
			mark(&e.WroteNodes)
		}
		if s.state.Mode == WriteFactor {
			if d.Factor != 0 && (nodes || d.SetFactor) {
				mark(&e.MayFactor)
				if d.SetFactor && e.Record.Shape() == slurmclient.ShapeHetLeader {
					// Each component is written its factor by its own id.
					for _, c := range e.Record.Het.Components {
						if c != e.ID && !slices.Contains(e.HetFactor, c) {
							e.HetFactor, changed = append(e.HetFactor, c), true
						}
					}
				}
			}
		} else if nodes || d.Priority != e.Prio {
			mark(&e.MayPrio)
		}
	}
	if changed {
		s.state.Dirty = true
	}
	return changed
}

// due reports whether a write of kind to e may be sent now: not while the
// backoff after its last failure runs.
func (s *Sidecar) due(e *decision.Entry, kind string, rep *CycleReport) bool {
	f := e.Fails[kind]
	if f == nil || s.state.Clock >= f.Next {
		return true
	}
	rep.Backoff++
	return false
}

// maxFailuresInRow stops a cycle's writes after this many consecutive
// failures of unknown cause (a failing slurmctld).
const maxFailuresInRow = 3

// write sends one update and records its effect; stop is true when no
// further write should be tried this cycle; reason is the failure's
// Reason, FailNone on success. The client re-reads the job before and after the
// update and refuses a job that is no longer pending, so nothing is sent
// to a job Slurm has started since this cycle's read; a value Slurm
// applied although it answered an error counts as written.
func (s *Sidecar) write(ctx context.Context, e *decision.Entry, kind string, u slurmclient.JobUpdate, dry bool, rep *CycleReport, inRow *int) (stop bool, reason FailReason, err error) {
	return s.writeTo(ctx, e, e.ID, kind, u, dry, rep, inRow)
}

// writeTo is write to job id, e's own or, for a site factor, that of one of
// heterogeneous job e's components (recorded in e.hetFactor, for giveback);
// a failure counts against e.
func (s *Sidecar) writeTo(ctx context.Context, e *decision.Entry, id, kind string, u slurmclient.JobUpdate, dry bool, rep *CycleReport, inRow *int) (stop bool, reason FailReason, err error) {
	rep.Writes[kind]++
	if dry {
		return false, "", nil
	}
	s.m.requests.WithLabelValues(kind).Inc()
	if len(u.RequiredNodes) > 0 && !e.WroteNodes {
		e.WroteNodes, s.state.Dirty = true, true
	}
	if e.Fails[kind] != nil {
		s.m.retries.WithLabelValues(kind).Inc()
	}
	err = s.slurm.UpdateJob(ctx, id, u)
	if err == nil || errors.Is(err, slurmclient.ErrAppliedDespiteError) {
		*inRow = 0
		s.m.writes.WithLabelValues(kind).Inc()
		if err != nil {
			s.m.appliedDespite.WithLabelValues(kind).Inc()
			s.log.Debug().Err(err).Str("job", id).Str("kind", kind).Msg("Slurm answered an error but applied the value")
		}
		s.state.Dirty = true
		if id != e.ID {
			if !slices.Contains(e.HetFactor, id) {
				e.HetFactor = append(e.HetFactor, id)
			}
			return false, "", nil
		}
		delete(e.Fails, kind)
		if u.Priority != nil {
			e.Prio, e.MayPrio = *u.Priority, false // known now
		} else if u.Hold != nil && !*u.Hold {
			// Released without a priority: the priority plugin's value
			// stands.
			e.Prio = 0
		}
		if u.SiteFactor != nil {
			e.Factor = *u.SiteFactor
		}
		if u.RequiredNodes != nil {
			e.Nodes = slices.Clone(u.RequiredNodes)
			e.GPUsPerNode = 0
			if u.GPUsPerNode != nil {
				e.GPUsPerNode = *u.GPUsPerNode
			}
		}
		return false, "", nil
	}
	rep.Writes[kind]--
	reason = Reason(err)
	rep.Failed[reason.String()]++
	s.m.failures.WithLabelValues(kind, reason.String()).Inc()
	switch {
	case reason.Systemic():
		s.incident("write:"+reason.String(), err)
		return true, reason, err
	case reason == FailJobGone:
		// Cancelled between read and write: the next cycle's read drops it.
		return false, reason, nil
	}
	s.failed(e, kind, reason, err)
	if reason.Raced() || reason.Refused() {
		// Started or held since the read (the next read shows it), or
		// this job's request refused: no sign of a failing slurmctld.
		return false, reason, nil
	}
	*inRow++
	if *inRow >= maxFailuresInRow {
		return true, reason, fmt.Errorf("%d writes failed in a row: %w", *inRow, err)
	}
	return false, reason, nil
}

// failed records a failed write of kind to e: the next try waits for a
// backoff that doubles with each failure in a row; a node list that Slurm
// refused as invalid, or that failed maxNodeListTries times, is not tried
// again for this job. Each job's failure is logged once per reason.
func (s *Sidecar) failed(e *decision.Entry, kind string, reason FailReason, err error) {
	if e.Fails == nil {
		e.Fails = map[string]*decision.WriteFailure{}
	}
	f := e.Fails[kind]
	if f == nil {
		f = &decision.WriteFailure{}
		e.Fails[kind] = f
	}
	f.N++
	wait := math.Min(s.cfg.Interval.Seconds()*math.Exp2(float64(f.N-1)), maxWriteBackoff.Seconds())
	f.Next = s.state.Clock + wait
	s.state.Dirty = true
	giveUp := kind == "nodes" && (reason.NodesFinal() || f.N >= maxNodeListTries)
	if giveUp {
		e.NoNodes = true
	}
	if reason == FailNotApplied {
		// Slurm answered success but the job differs: assume nothing asrpt
		// can rely on.
		switch kind {
		case "priority":
			e.Prio = 0
		case "nodes":
			e.Nodes = nil
		}
	}
	if !slices.Contains(f.Logged, string(reason)) {
		f.Logged = append(f.Logged, string(reason))
		ev := s.log.Warn().Err(err).Str("job", e.ID).Str("kind", kind).Stringer("reason", reason)
		if giveUp {
			ev.Msg("write failed; no further node list for this job")
		} else {
			ev.Dur("retry_in", time.Duration(wait*float64(time.Second))).Msg("write failed; retrying after a backoff")
		}
	}
}
