package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/slurmclient"
)

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
		if s.state.Intend(ds) || broken != "" || len(p.Stops) > 0 {
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
		if nodes != nil && (!slices.Equal(nodes, e.Nodes) || gpn != e.GPUsPerNode) && s.due(e, decision.KindNodes, rep) {
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
			stop, reason, err := s.write(ctx, e, decision.KindNodes, u, dry, rep, &failedInRow)
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
			if d.SetFactor && (d.Factor != e.Factor || e.Prio != 0) && s.due(e, decision.KindSiteFactor, rep) {
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
				if stop, _, err := s.write(ctx, e, decision.KindSiteFactor, u, dry, rep, &failedInRow); stop {
					return err
				}
			}
			continue
		}
		if d.Priority != e.Prio && s.due(e, decision.KindPriority, rep) {
			if budget == 0 {
				rep.Deferred++
				continue
			}
			p := d.Priority
			budget--
			if stop, _, err := s.write(ctx, e, decision.KindPriority, slurmclient.JobUpdate{Priority: &p}, dry, rep, &failedInRow); stop {
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
		if stop, reason, err := s.writeTo(ctx, e, c, decision.KindSiteFactor, slurmclient.JobUpdate{SiteFactor: &f}, dry, rep, inRow); stop || reason != FailNone {
			return stop, false, err
		}
	}
	return false, true, nil
}

// due reports whether a write of kind to e may be sent now: not while the
// backoff after its last failure runs.
func (s *Sidecar) due(e *decision.Entry, kind string, rep *CycleReport) bool {
	if e.Due(kind, s.state.Clock) {
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
	w := sent{o: decision.Outcome{Entry: e, Target: id, Kind: kind, Update: u}, retry: e.Fails[kind] != nil}
	defer func() { s.sent = append(s.sent, w) }()
	w.err = s.slurm.UpdateJob(ctx, id, u)
	if w.err == nil || errors.Is(w.err, slurmclient.ErrAppliedDespiteError) {
		*inRow = 0
		s.state.Record(w.o)
		return false, "", nil
	}
	rep.Writes[kind]--
	w.reason = Reason(w.err)
	rep.Failed[w.reason.String()]++
	if w.reason.Systemic() || w.reason == FailJobGone {
		w.o.Result = decision.Lost
		s.state.Record(w.o)
		if w.reason == FailJobGone {
			// Cancelled between read and write: the next cycle's read drops it.
			return false, w.reason, nil
		}
		return true, w.reason, w.err
	}
	w.o.Result, w.o.Reason = decision.Failed, w.reason.String()
	w.o.NodesFinal, w.o.NotApplied = w.reason.NodesFinal(), w.reason == FailNotApplied
	w.rec = s.state.Record(w.o)
	if w.reason.Raced() || w.reason.Refused() {
		// Started or held since the read (the next read shows it), or
		// this job's request refused: no sign of a failing slurmctld.
		return false, w.reason, nil
	}
	*inRow++
	if *inRow >= maxFailuresInRow {
		return true, w.reason, fmt.Errorf("%d writes failed in a row: %w", *inRow, w.err)
	}
	return false, w.reason, nil
}

// sent is one update apply sent to Slurm and what came of it: apply
// collects them (Sidecar.sent) and account derives the write metrics and
// log lines from them once the cycle's writes are done.
type sent struct {
	// o is the outcome the state recorded; rec what the state concluded
	// from a failure.
	o   decision.Outcome
	rec decision.Recorded
	// retry: the last write of this kind to the job had failed.
	retry bool
	// err is Slurm's answer (nil, or ErrAppliedDespiteError for a value
	// written); reason its FailReason, FailNone when written.
	err    error
	reason FailReason
}

// account counts and logs the writes this cycle sent, then forgets them:
// requests, retries, writes and failures by kind; a value Slurm applied
// despite an error (debug); a failure of slurmctld or of the token (one
// incident); a job's first failure for each reason (warning).
func (s *Sidecar) account() {
	for i := range s.sent {
		w := &s.sent[i]
		kind, id := w.o.Kind, w.o.Target
		s.m.requests.WithLabelValues(kind).Inc()
		if w.retry {
			s.m.retries.WithLabelValues(kind).Inc()
		}
		if w.o.Result == decision.Written {
			s.m.writes.WithLabelValues(kind).Inc()
			if w.err != nil {
				s.m.appliedDespite.WithLabelValues(kind).Inc()
				s.log.Debug().Err(w.err).Str("job", id).Str("kind", kind).Msg("Slurm answered an error but applied the value")
			}
			continue
		}
		s.m.failures.WithLabelValues(kind, w.reason.String()).Inc()
		switch {
		case w.reason.Systemic():
			s.incident("write:"+w.reason.String(), w.err)
		case w.o.Result == decision.Failed:
			s.logFailure(w.o.Entry, kind, w.reason, w.rec, w.err)
		}
	}
	clear(s.sent)
	s.sent = s.sent[:0]
}

// logFailure logs a failed write of kind to e the first time the job fails
// for this reason (the state's record of it is r).
func (s *Sidecar) logFailure(e *decision.Entry, kind string, reason FailReason, r decision.Recorded, err error) {
	if !r.FirstOfReason {
		return
	}
	ev := s.log.Warn().Err(err).Str("job", e.ID).Str("kind", kind).Stringer("reason", reason)
	if r.GiveUp {
		ev.Msg("write failed; no further node list for this job")
	} else {
		ev.Dur("retry_in", time.Duration(r.Wait*float64(time.Second))).Msg("write failed; retrying after a backoff")
	}
}
