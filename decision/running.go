package decision

import (
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// maxRunSeconds is the longest a job is taken to have run, in seconds (a
// year): a running record whose start time is older is not believed.
const maxRunSeconds = 365 * 86400

// endedGrace is how long, in seconds, a job that left the running list
// other than back to pending still counts as running: accounting reports
// an end some time after the list stops showing the job (the sidecar reads
// it 30 s behind, slurmdbd adds its own lag), and until it does the run is
// in neither the group's running jobs nor its finished runs, so the
// group's estimate would drop for that while and come back. Past the
// grace (accounting down, or a job it never reports) the job is forgotten.
const endedGrace = 600

// tellRunning tells a predictor that learns from running jobs
// (predictor.RunAware: mean-gpus-running) which jobs Slurm runs now, as the replay
// tells it of every start: each running record with GPUs and a start time
// (a heterogeneous job once, at its leader, with all its GPUs, as
// accounting reports it; not one whose start is after t or more than
// maxRunSeconds before it), managed or not, is Started once, and Stopped
// once it no longer runs: at once when the list shows it pending again
// (requeued: no finished run); when it ended, once accounting reports it
// (Learn: Observe ends a finished run, any other record stops it) or
// endedGrace after it left the running list, so that the run counts until
// its finished run does. Then it sets the predictor's clock to t, the time
// of this cycle's estimates. The view of this cycle's records must be
// built (newQueueView). Memory: one entry per running job listed and per
// job ended in the last endedGrace.
func (tr *State) tellRunning(t float64, jobs []slurmclient.Job) {
	runs, ok := predictor.Running(tr.pred)
	if !ok {
		return
	}
	if tr.running == nil {
		tr.running, tr.runningNext, tr.runningLeft = map[string]bool{}, map[string]bool{}, map[string]float64{}
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
			delete(tr.runningLeft, sj.ID) // ended, and runs again
			j := toJob(sj)
			j.GPUs = gpus
			runs.Started(&j, start)
		}
	}
	for id := range tr.running {
		if !now[id] {
			tr.runningLeft[id] = t
		}
	}
	for id, left := range tr.runningLeft {
		if t-left > endedGrace {
			runs.Stopped(id)
			delete(tr.runningLeft, id)
		}
	}
	if len(tr.runningLeft) > 0 {
		// A left job listed pending again was requeued: its run ended
		// without a finished run.
		for i := range jobs {
			if sj := &jobs[i]; sj.Pending() {
				if _, ok := tr.runningLeft[sj.ID]; ok {
					runs.Stopped(sj.ID)
					delete(tr.runningLeft, sj.ID)
				}
			}
		}
	}
	tr.running, tr.runningNext = now, tr.running
	runs.Clock(t)
}
