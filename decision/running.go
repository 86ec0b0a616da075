package decision

import (
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// maxRunSeconds is the longest a job is taken to have run, in seconds (a
// year): a running record whose start time is older is not believed.
const maxRunSeconds = 365 * 86400

// tellRunning tells a predictor that learns from running jobs
// (predictor.RunAware: mean-gpus-running) which jobs Slurm runs now, as the replay
// tells it of every start: each running record with GPUs and a start time
// (a heterogeneous job once, at its leader, with all its GPUs, as
// accounting reports it; not one whose start is after t or more than
// maxRunSeconds before it), managed or not, is Started once, and Stopped
// once a list no longer shows it running (requeued, or ended: accounting's
// record, when Learn has it, is the run that counts). Then it sets the
// predictor's clock to t, the time of this cycle's estimates. The view of
// this cycle's records must be built (newQueueView). Memory: one entry
// per running job listed.
func (tr *State) tellRunning(t float64, jobs []slurmclient.Job) {
	runs, ok := predictor.Running(tr.pred)
	if !ok {
		return
	}
	if tr.running == nil {
		tr.running, tr.runningNext = map[string]bool{}, map[string]bool{}
	}
	now := tr.runningNext
	clear(now)
	for i := range jobs {
		sj := &jobs[i]
		if !sj.Running() || sj.Start.IsZero() {
			continue
		}
		// A start time slurmrestd gets wrong (after now, or years back)
		// would size the job's whole group by it: such a record is not
		// told of.
		start := unixSeconds(sj.Start)
		if start > t || t-start > maxRunSeconds {
			continue
		}
		sh := sj.Shape()
		if sh == slurmclient.ShapeHetComponent {
			continue
		}
		gpus := tr.view.gpus(sj, sh)
		if gpus <= 0 {
			continue
		}
		now[sj.ID] = true
		if !tr.running[sj.ID] {
			j := toJob(sj)
			j.GPUs = gpus
			runs.Started(&j, start)
		}
	}
	for id := range tr.running {
		if !now[id] {
			runs.Stopped(id)
		}
	}
	tr.running, tr.runningNext = now, tr.running
	runs.Clock(t)
}
