package sidecar

import (
	"context"
	"math"
	"time"

	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// accountingLag is how far behind now accounting is read: slurmdbd
// records a job's end a little after it happens.
const accountingLag = 30 * time.Second

// accountingWindow bounds one accounting query.
const accountingWindow = 24 * time.Hour

// pollAccounting feeds the jobs that finished since the last poll to the
// predictor, warming it with cfg.History on the first call. A failure is
// logged once and retried from the same point next cycle.
func (s *Sidecar) pollAccounting(ctx context.Context, now time.Time) {
	to := now.Add(-accountingLag)
	if s.acctFrom.IsZero() {
		s.acctFrom = to.Add(-s.cfg.History)
	}
	for s.acctFrom.Before(to) {
		end := s.acctFrom.Add(accountingWindow)
		if end.After(to) {
			end = to
		}
		recs, err := s.slurm.AccountingJobs(ctx, s.acctFrom, end)
		if err != nil {
			s.m.errors.WithLabelValues("accounting", Reason(err)).Inc()
			s.incident("accounting", err)
			return
		}
		for i := range recs {
			j := &recs[i]
			e := s.entries[j.ID]
			if e != nil {
				s.ended[j.ID] = true
			}
			if !predictor.Finished(j) {
				continue
			}
			s.pred.Observe(j, predictor.End(j))
			s.regroups[predictor.GroupKey(j)] = true
			if f, ok := s.finished[j.ID]; ok {
				delete(s.finished, j.ID)
				s.predictionError(f.est, j.RunTime)
			} else if e != nil && (e.ph == phDispatched || e.ph == phRunning) {
				// Still tracked (absent from fewer than absentCycles lists):
				// vanish will not wait for this record again.
				s.predictionError(e.est.Seconds, j.RunTime)
			}
		}
		s.acctFrom = end
	}
	// Forget jobs accounting never reported (cancelled before start).
	for id, f := range s.finished {
		if unixSeconds(now)-f.since > 86400 {
			delete(s.finished, id)
		}
	}
}

// predictionError observes a finished managed job's prediction est against
// its run time, seconds.
func (s *Sidecar) predictionError(est, run float64) {
	s.m.predRatio.Observe(est / run)
	s.m.predAbs.Observe(math.Abs(est - run))
}

// repredict predicts again the waiting jobs whose recurrence group had a
// job finish since the last cycle and hands the changed estimates to the
// policy, which re-orders them (design §5.3).
func (s *Sidecar) repredict(t float64) {
	if len(s.regroups) == 0 {
		return
	}
	if upd, ok := s.pol.(policy.Updater); ok {
		for _, e := range s.entries {
			if e.ph != phQueued || e.task == nil || !s.regroups[predictor.GroupKey(&e.job)] {
				continue
			}
			if est := s.pred.Repredict(&e.job, t); est != e.est {
				e.est = est
				upd.Update(t, e.task, est)
				s.dirty = true
			}
		}
	}
	clear(s.regroups)
}
