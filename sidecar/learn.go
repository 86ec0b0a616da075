package sidecar

import (
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// learn feeds finished accounting records to the predictor: the tracked
// jobs among them are marked ended, their recurrence groups predicted
// again next cycle, and a managed job's prediction error noted.
func (tr *tracker) learn(recs []job.Job) {
	for i := range recs {
		j := &recs[i]
		e := tr.entries[j.ID]
		if e != nil {
			tr.ended[j.ID] = true
		}
		if !predictor.Finished(j) {
			continue
		}
		tr.pred.Observe(j, predictor.End(j))
		tr.regroups[[2]string{j.User, predictor.Family(j.Name)}] = true
		if f, ok := tr.finished[j.ID]; ok {
			delete(tr.finished, j.ID)
			tr.note(event{kind: evPredictionError, job: j.ID, est: f.est, run: j.RunTime})
		} else if e != nil && (e.ph == phDispatched || e.ph == phRunning) {
			// Still tracked (absent from fewer than absentCycles lists):
			// vanish will not wait for this record again.
			tr.note(event{kind: evPredictionError, job: j.ID, est: e.est.Seconds, run: j.RunTime})
		}
	}
}

// forgetUnreported forgets, at t (Unix seconds), the ended jobs that
// accounting has not reported in a day (cancelled before they started).
func (tr *tracker) forgetUnreported(t float64) {
	for id, f := range tr.finished {
		if t-f.since > 86400 {
			delete(tr.finished, id)
		}
	}
}

// repredict predicts again the waiting jobs whose recurrence group had a
// job finish since the last cycle and hands the changed estimates to the
// policy, which re-orders them (design §5.3).
func (tr *tracker) repredict(t float64) {
	if len(tr.regroups) == 0 {
		return
	}
	if upd, ok := tr.pol.(policy.Updater); ok {
		for _, e := range tr.entries {
			if e.ph != phQueued || e.task == nil || !tr.regroups[[2]string{e.job.User, e.family()}] {
				continue
			}
			if est := tr.pred.Repredict(&e.job, t); est != e.est {
				e.est = est
				upd.Update(t, e.task, est)
				tr.dirty = true
			}
		}
	}
	clear(tr.regroups)
}
