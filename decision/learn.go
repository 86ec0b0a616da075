package decision

import (
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// Learn feeds finished accounting records to the predictor: the tracked
// jobs among them are marked ended, their recurrence groups predicted
// again next cycle, and a managed job's prediction error noted. A job that
// left the running list (tellRunning) is no longer held as running once
// accounting reports it: Observe ends a finished run, any other record
// (cancelled, failed before it counts) stops it.
func (tr *State) Learn(recs []job.Job) {
	for i := range recs {
		j := &recs[i]
		e := tr.Entries[j.ID]
		if e != nil {
			tr.ended[j.ID] = true
		}
		_, left := tr.runningLeft[j.ID]
		if left {
			delete(tr.runningLeft, j.ID)
		}
		if !predictor.Finished(j) {
			if left {
				if runs, ok := predictor.Running(tr.pred); ok {
					runs.Stopped(j.ID)
				}
			}
			continue
		}
		tr.pred.Observe(j, predictor.End(j))
		tr.regroups[[2]string{j.User, predictor.Family(j.Name)}] = true
		if f, ok := tr.finished[j.ID]; ok {
			delete(tr.finished, j.ID)
			tr.note(Event{Kind: EvPredictionError, Job: j.ID, Est: f.est, Run: j.RunTime})
		} else if e != nil && (e.Phase == PhDispatched || e.Phase == PhRunning) {
			// Still tracked (absent from fewer than AbsentCycles lists):
			// vanish will not wait for this record again.
			tr.note(Event{Kind: EvPredictionError, Job: j.ID, Est: e.Est.Seconds, Run: j.RunTime})
		}
	}
}

// ForgetUnreported forgets, at t (Unix seconds), the ended jobs that
// accounting has not reported in a day (cancelled before they started).
func (tr *State) ForgetUnreported(t float64) {
	for id, f := range tr.finished {
		if t-f.since > 86400 {
			delete(tr.finished, id)
		}
	}
}

// repredict predicts again the waiting jobs whose recurrence group had a
// job finish since the last cycle and hands the changed estimates to the
// policy, which re-orders them (design §5.3).
func (tr *State) repredict(t float64) {
	if len(tr.regroups) == 0 {
		return
	}
	if upd, ok := tr.pol.(policy.Updater); ok {
		for _, e := range tr.Entries {
			if e.Phase != PhQueued || e.Task == nil || !tr.regroups[[2]string{e.job.User, e.family()}] {
				continue
			}
			if est := tr.pred.Repredict(&e.job, t); est != e.Est {
				e.Est = est
				upd.Update(t, e.Task, est)
				tr.Dirty = true
			}
		}
	}
	clear(tr.regroups)
}

// finishedJob remembers a job that left the queue until accounting reports
// its run time, for the prediction error metric.
type finishedJob struct {
	est   float64
	since float64
}
