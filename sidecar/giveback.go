package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/slurmclient"
)

// GivebackReport says what a giveback did.
type GivebackReport struct {
	// Returned lists the jobs handed back: the site factor asrpt wrote set
	// back to 0 (Slurm's default), and, where asrpt set the priority, held
	// and released, so that the priority plugin recomputes it.
	Returned []string
	// NodesKept lists the jobs that keep a node list asrpt set because
	// clearing it failed.
	NodesKept []string
	// Skipped counts managed jobs left alone: no longer pending, held, or
	// whose priority someone else changed.
	Skipped int
	// Failed maps a job id to the error that stopped its giveback. A job
	// whose release failed after its hold is left held: the error says so.
	Failed map[string]error
}

// managed is what asrpt wrote to one job: the priority and node list it
// believes in effect; clearNodes when asrpt sent the job a node list and
// the job had none of its own, so that any node list it has now is
// asrpt's (also one whose write was reported failed but took effect);
// factor when the job may hold a site factor of asrpt's, to be set back to
// 0; release when asrpt may have set its priority, to be given back by a
// hold and a release.
type managed struct {
	// components are a heterogeneous job's components (not its leader)
	// that hold a site factor of asrpt's.
	components []string
	prio       uint32
	nodes      []string
	clearNodes bool
	factor     bool
	release    bool
}

// toHandBack is what a giveback undoes of a job asrpt wrote prio, factor
// and nodes to (wroteNodes: asrpt sent it a node list; ownNodes: the job
// named nodes itself; mayFactor, mayPrio: a site factor or priority write
// was recorded before it went out, its outcome maybe unknown); ok false
// when there is nothing to undo. A job asrpt gave only a site factor
// (factor mode) is not held and released: setting the factor back to 0
// makes the priority plugin compute its priority without it at once. A
// priority write of unknown outcome (mayPrio) accepts any priority.
func toHandBack(prio, factor uint32, nodes []string, wroteNodes, ownNodes, mayFactor, mayPrio bool) (managed, bool) {
	hasFactor := factor != 0 || mayFactor
	m := managed{prio: prio, nodes: nodes, clearNodes: wroteNodes && !ownNodes, factor: hasFactor,
		release: prio != 0 || mayPrio || !hasFactor}
	if mayPrio {
		m.prio = 0
	}
	return m, prio != 0 || hasFactor || mayPrio || len(nodes) > 0 || wroteNodes
}

// releaseAttempts is how many times a release is tried after a hold.
const releaseAttempts = 3

// handBack gives back every job in jobs that is in want and still pending,
// not held, and carries the priority asrpt wrote (0: any): the node list
// asrpt wrote, when the job still has it, is cleared, the site factor set
// back to 0 (no REST API reports a job's factor, so whether it is still
// asrpt's cannot be seen: it is reset whatever its value), then the job is
// held and released. An array is handed back through its remainder and a
// heterogeneous job through its leader (the REST client addresses them
// so); a value Slurm applied although it answered an error counts as done.
func handBack(ctx context.Context, c Slurm, jobs []slurmclient.Job, want map[string]managed, log zerolog.Logger) GivebackReport {
	rep := GivebackReport{Failed: map[string]error{}}
	hold, release := true, false
	done := func(err error) bool { return err == nil || errors.Is(err, slurmclient.ErrAppliedDespiteError) }
	// first sends one of the updates that start a job's giveback (the site
	// factor, the hold) and reports whether to go on: a job gone or started
	// meanwhile is skipped, another refusal fails its giveback.
	first := func(id, what string, u slurmclient.JobUpdate) bool {
		err := c.UpdateJob(ctx, id, u)
		switch {
		case done(err):
			return true
		case errors.Is(err, slurmclient.ErrJobGone) || errors.Is(err, slurmclient.ErrNotPending):
			rep.Skipped++
		default:
			rep.Failed[id] = fmt.Errorf("%s: %w", what, err)
		}
		return false
	}
	var zero uint32
	for i := range jobs {
		sj := &jobs[i]
		m, ok := want[sj.ID]
		if !ok {
			continue
		}
		if !sj.Pending() || sj.Held || (m.prio != 0 && sj.Priority != m.prio) {
			rep.Skipped++
			continue
		}
		if len(sj.RequiredNodes) > 0 && (m.clearNodes || slices.Equal(sj.RequiredNodes, m.nodes)) {
			if err := c.UpdateJob(ctx, sj.ID, slurmclient.JobUpdate{RequiredNodes: []string{}}); !done(err) {
				log.Warn().Err(err).Str("job", sj.ID).Msg("giveback could not clear the node list asrpt wrote")
				rep.NodesKept = append(rep.NodesKept, sj.ID)
			}
		}
		if m.factor && !first(sj.ID, "site factor", slurmclient.JobUpdate{SiteFactor: &zero}) {
			continue
		}
		// A heterogeneous job's components each hold their own factor.
		failed := false
		for _, comp := range m.components {
			if err := c.UpdateJob(ctx, comp, slurmclient.JobUpdate{SiteFactor: &zero}); !done(err) && !errors.Is(err, slurmclient.ErrJobGone) && !errors.Is(err, slurmclient.ErrNotPending) {
				rep.Failed[sj.ID] = fmt.Errorf("site factor of component %s: %w", comp, err)
				failed = true
				break
			}
		}
		if failed {
			continue
		}
		if !m.release {
			rep.Returned = append(rep.Returned, sj.ID)
			continue
		}
		if !first(sj.ID, "hold", slurmclient.JobUpdate{Hold: &hold}) {
			continue
		}
		var err error
		for range releaseAttempts {
			if err = c.UpdateJob(ctx, sj.ID, slurmclient.JobUpdate{Hold: &release}); done(err) ||
				errors.Is(err, slurmclient.ErrJobGone) || ctx.Err() != nil {
				break
			}
		}
		if !done(err) && !errors.Is(err, slurmclient.ErrJobGone) {
			rep.Failed[sj.ID] = fmt.Errorf("release after hold (the job is left held; scontrol release %s): %w", sj.ID, err)
			log.Error().Err(err).Str("job", sj.ID).Msg("job held by the giveback could not be released")
			continue
		}
		rep.Returned = append(rep.Returned, sj.ID)
	}
	return rep
}

// Giveback hands every job the sidecar manages back to Slurm and forgets
// what it wrote to them. The policy keeps its order: a later cycle writes
// the priorities again. It returns an error when the queue cannot be read
// or some job could not be handed back.
func (s *Sidecar) Giveback(ctx context.Context) (GivebackReport, error) {
	s.givenBack.Store(true) // no stop signal after a giveback
	jobs, bad, err := givebackJobs(ctx, s.slurm)
	if err != nil {
		return GivebackReport{}, err
	}
	want := map[string]managed{}
	for id, e := range s.state.Entries {
		if m, ok := toHandBack(e.Prio, e.Factor, e.Nodes, e.WroteNodes, e.OwnNodes, e.MayFactor, e.MayPrio); ok && !e.HandsOff {
			m.components = e.HetFactor
			want[id] = m
		}
	}
	rep := handBack(ctx, s.slurm, jobs, want, s.log)
	bad.fail(&rep, want)
	for _, id := range rep.Returned {
		s.state.Record(decision.Outcome{Entry: s.state.Entries[id], Target: id, Kind: decision.KindGiveback})
		m := want[id]
		if m.factor {
			s.m.writes.WithLabelValues("site_factor").Inc()
		}
		if m.release {
			s.m.writes.WithLabelValues("hold").Inc()
			s.m.writes.WithLabelValues("release").Inc()
		}
	}
	s.state.Dirty = true
	return rep, rep.err()
}

// skipped are the job records a giveback's job list could not use.
type skipped struct{ *slurmclient.RecordErrors }

// givebackJobs reads the job list for a giveback: records the client
// skipped fail only their own jobs' giveback (skipped.fail).
func givebackJobs(ctx context.Context, c Slurm) ([]slurmclient.Job, skipped, error) {
	jobs, err := c.Jobs(ctx)
	var bad *slurmclient.RecordErrors
	if err != nil && !errors.As(err, &bad) {
		return nil, skipped{}, fmt.Errorf("giveback: %w", err)
	}
	return jobs, skipped{bad}, nil
}

// fail marks the giveback of each job in want whose record was skipped
// as failed.
func (b skipped) fail(rep *GivebackReport, want map[string]managed) {
	if b.RecordErrors == nil {
		return
	}
	for _, id := range b.IDs {
		if _, ok := want[id]; ok {
			rep.Failed[id] = fmt.Errorf("its job record could not be read: %w", b.RecordErrors)
		}
	}
}

func (r GivebackReport) err() error {
	if len(r.Failed) == 0 {
		return nil
	}
	ids := make([]string, 0, len(r.Failed))
	for id := range r.Failed {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, decision.CompareID)
	errs := make([]error, len(ids))
	for i, id := range ids {
		errs[i] = fmt.Errorf("job %s: %w", id, r.Failed[id])
	}
	return fmt.Errorf("giveback: %d jobs failed: %w", len(ids), errors.Join(errs...))
}

// GivebackFile hands back the jobs recorded in the state file at path,
// for `asrpt giveback` run while the sidecar is stopped. With inBand it
// also hands back every pending job in scope whose priority lies in
// asrpt's bands (the state file lost, or never written), and, where the
// REST API can write site factors, sets the site factor of every other
// pending job in scope back to 0 (any factor: a lost state file leaves
// no way to tell asrpt's). The state file is rewritten without the
// returned jobs' writes.
func GivebackFile(ctx context.Context, c Slurm, path string, scope Scope, inBand bool, log zerolog.Logger) (GivebackReport, error) {
	st, err := readState(path)
	switch {
	case errors.Is(err, errNoState) && inBand:
		st = nil
	case err != nil:
		return GivebackReport{}, fmt.Errorf("giveback: %w", err)
	}
	jobs, bad, err := givebackJobs(ctx, c)
	if err != nil {
		return GivebackReport{}, err
	}
	want := map[string]managed{}
	if st != nil {
		for _, j := range st.Jobs {
			if m, ok := toHandBack(j.Priority, j.SiteFactor, j.Nodes, j.WroteNodes, j.OwnNodes, j.MayFactor, j.MayPriority); ok && !j.HandsOff {
				m.components = j.HetSiteFactor
				want[j.Job.ID] = m
			}
		}
	}
	if inBand {
		for i := range jobs {
			sj := &jobs[i]
			// asrpt writes arrays through their remainder and heterogeneous
			// jobs through their leader: a giveback of those reaches the
			// rest.
			sh := sj.Shape()
			if sh == slurmclient.ShapeArrayTask || sh == slurmclient.ShapeHetComponent {
				continue
			}
			if _, ok := want[sj.ID]; ok || !sj.Pending() || !scope.Contains(sj.Partition, sj.QOS, sj.Account) {
				continue
			}
			m := managed{release: decision.HighBand.Contains(sj.Priority) || decision.LowBand.Contains(sj.Priority), factor: c.SupportsSiteFactor()}
			if m.release || m.factor {
				want[sj.ID] = m
			}
		}
	}
	rep := handBack(ctx, c, jobs, want, log)
	bad.fail(&rep, want)
	if st != nil && len(rep.Returned) > 0 {
		for i := range st.Jobs {
			if slices.Contains(rep.Returned, st.Jobs[i].Job.ID) {
				sj := &st.Jobs[i]
				sj.Priority, sj.SiteFactor, sj.Nodes, sj.GPUsPerNode, sj.MayFactor, sj.MayPriority = 0, 0, nil, 0, false, false
			}
		}
		if err := writeState(path, st); err != nil {
			return rep, errors.Join(rep.err(), err)
		}
	}
	return rep, rep.err()
}
