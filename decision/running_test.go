package decision

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// runTeller records what a predictor that learns from running jobs is
// told, in order.
type runTeller struct {
	*predictor.Mean
	told []string
}

func (r *runTeller) Started(j *job.Job, start float64) {
	r.told = append(r.told, fmt.Sprintf("start %s %s/%s %d GPUs at %.0f", j.ID, j.User, j.Name, j.GPUs, start-float64(epoch.Unix())))
}
func (r *runTeller) Stopped(id string) { r.told = append(r.told, "stop "+id) }
func (r *runTeller) Clock(now float64) {
	r.told = append(r.told, fmt.Sprintf("clock %.0f", now-float64(epoch.Unix())))
}

func runningJob(id, name string, gpus int, start time.Time) slurmclient.Job {
	j := pending(id, name, gpus, start.Add(-time.Minute))
	j.State, j.Start = "RUNNING", start
	return j
}

// runState is a decision state on 2 nodes of 4 GPUs whose predictor is
// pred.
func runState(t *testing.T, pred predictor.Predictor) *State {
	return testState(t, "asrpt", cluster.Uniform(2, 4), pred)
}

// testState is a decision state in factor mode with policy pol on c,
// predicting with pred.
func testState(t testing.TB, pol string, c *cluster.Cluster, pred predictor.Predictor) *State {
	t.Helper()
	var givenBack atomic.Bool
	st, err := NewState(Settings{Policy: pol, Params: policy.DefaultParams(), Scope: Scope{Partitions: []string{"gpu"}},
		Interval: 30 * time.Second, DispatchGrace: 2 * time.Minute, SiteFactorMax: 64000},
		c, pred, WriteFactor, nil, func(slurmclient.Delivery) bool { return true }, &givenBack)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTellRunning: each step tells the predictor of the jobs Slurm runs
// that it was not told of (a heterogeneous job once, at its leader, with
// every component's GPUs), of those that stopped running, and then of the
// step's time; a pending job, a running job without GPUs, without a
// start time, or with one after the step's time or two years back is not
// told of. A job listed pending again (requeued) is stopped at once; one
// that left the list (ended) stays running for accounting to report it,
// endedGrace at most, and is started again if it runs again before.
func TestTellRunning(t *testing.T) {
	rec := &runTeller{Mean: predictor.NewMean()}
	st := runState(t, rec)
	leader := runningJob("20", "het", 1, epoch.Add(time.Minute))
	comp := runningJob("21", "het", 2, epoch.Add(time.Minute))
	leader.Het = slurmclient.Het{LeaderID: "20", Components: []string{"20", "21"}}
	comp.Het = slurmclient.Het{LeaderID: "20", Offset: 1, Components: []string{"20", "21"}}
	requeued, requeuedComp := leader, comp
	requeued.State, requeuedComp.State = "PENDING", "PENDING"
	cpu := runningJob("30", "cpu", 0, epoch)
	noStart := runningJob("31", "odd", 1, time.Time{})
	future := runningJob("32", "odd", 1, epoch.Add(time.Hour))
	ancient := runningJob("33", "odd", 1, epoch.AddDate(-2, 0, 0))
	plain := runningJob("10", "train", 2, epoch)
	again := runningJob("11", "train", 1, epoch)
	restarted := runningJob("11", "train", 1, epoch.Add(650*time.Second))
	waiting := pending("40", "train", 1, epoch)
	nodes := testNodes(2, 4)
	steps := []struct {
		at   float64 // seconds after epoch
		jobs []slurmclient.Job
		want []string
	}{
		{600, []slurmclient.Job{plain, again, leader, comp, cpu, noStart, future, ancient, waiting},
			[]string{"start 10 u/train 2 GPUs at 0", "start 11 u/train 1 GPUs at 0", "start 20 u/het 3 GPUs at 60", "clock 600"}},
		{630, []slurmclient.Job{plain, leader, comp, waiting}, []string{"clock 630"}},
		{660, []slurmclient.Job{restarted, leader, comp, waiting}, []string{"start 11 u/train 1 GPUs at 650", "clock 660"}},
		{690, []slurmclient.Job{restarted, requeued, requeuedComp, waiting}, []string{"stop 20", "clock 690"}},
		{1260, []slurmclient.Job{restarted, requeued, requeuedComp, waiting}, []string{"clock 1260"}},
		{1261, []slurmclient.Job{restarted, requeued, requeuedComp, waiting}, []string{"stop 10", "clock 1261"}},
		{1290, []slurmclient.Job{restarted, requeued, requeuedComp, waiting}, []string{"clock 1290"}},
	}
	for i, s := range steps {
		rec.told = nil
		Decide(&Snapshot{Nodes: nodes, Jobs: s.jobs}, st, float64(epoch.Unix())+s.at)
		if !slices.Equal(rec.told, s.want) {
			t.Errorf("step %d: told %q, want %q", i, rec.told, s.want)
		}
	}
	if len(st.runningLeft) != 0 {
		t.Errorf("ended jobs still held: %v", st.runningLeft)
	}
}

// BenchmarkTellRunning measures one cycle's report to mean-gpus-running of a list
// of 20,000 jobs, 4,000 of them running (steady: none starts or stops).
func BenchmarkTellRunning(b *testing.B) {
	st := testState(b, "asrpt", cluster.Uniform(2000, 8), predictor.NewMeanByGPUsRunning())
	jobs := make([]slurmclient.Job, 20000)
	for i := range jobs {
		name := fmt.Sprintf("fam%02d", i%100)
		if i%5 == 0 {
			jobs[i] = runningJob(fmt.Sprint(100000+i), name, 1+i%8, epoch.Add(-time.Duration(i)*time.Second))
		} else {
			jobs[i] = pending(fmt.Sprint(100000+i), name, 1+i%8, epoch)
		}
	}
	st.view = newQueueView(jobs, float64(epoch.Unix()), st.cfg.Scope, st.env.G, false)
	st.tellRunning(float64(epoch.Unix()), jobs)
	b.ReportAllocs()
	for b.Loop() {
		st.tellRunning(float64(epoch.Unix())+30, jobs)
	}
}

// TestTellRunningAccounting: a job that left the running list is held
// until accounting reports it, then let go: a finished record ends its run
// (Observe) with no stop, a record that is not a finished run (cancelled
// at once) stops it; neither is stopped again when the grace ends.
func TestTellRunningAccounting(t *testing.T) {
	rec := &runTeller{Mean: predictor.NewMean()}
	st := runState(t, rec)
	nodes := testNodes(2, 4)
	at := func(s float64) float64 { return float64(epoch.Unix()) + s }
	done, cancelled := runningJob("10", "train", 2, epoch), runningJob("11", "train", 1, epoch)
	Decide(&Snapshot{Nodes: nodes, Jobs: []slurmclient.Job{done, cancelled}}, st, at(600))
	Decide(&Snapshot{Nodes: nodes}, st, at(630))
	if len(st.runningLeft) != 2 {
		t.Fatalf("held %v, want jobs 10 and 11", st.runningLeft)
	}
	rec.told = nil
	st.Learn([]job.Job{
		{ID: "10", User: "u", Name: "train", GPUs: 2, State: "COMPLETED", Submit: at(-60), RunTime: 620},
		{ID: "11", User: "u", Name: "train", GPUs: 1, State: "CANCELLED", Submit: at(-60)},
	})
	if want := []string{"stop 11"}; !slices.Equal(rec.told, want) {
		t.Errorf("Learn told %q, want %q", rec.told, want)
	}
	rec.told = nil
	Decide(&Snapshot{Nodes: nodes}, st, at(1300))
	if want := []string{"clock 1300"}; !slices.Equal(rec.told, want) || len(st.runningLeft) != 0 {
		t.Errorf("after the grace: told %q (want %q), held %v", rec.told, want, st.runningLeft)
	}
}
