package sidecar

import (
	"context"
	"time"
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
			s.m.errors.WithLabelValues("accounting", Reason(err).String()).Inc()
			s.incident("accounting", err)
			return
		}
		s.state.Learn(recs)
		s.record(s.state.TakeEvents())
		s.acctFrom = end
	}
	s.state.ForgetUnreported(unixSeconds(now))
}
