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

// TestTellRunning: each step tells the predictor of the jobs Slurm runs
// that it was not told of (a heterogeneous job once, at its leader, with
// every component's GPUs), of those that stopped running, and then of the
// step's time; a pending job, a running job without GPUs, without a
// start time, or with one after the step's time or two years back is not
// told of.
func TestTellRunning(t *testing.T) {
	rec := &runTeller{Mean: predictor.NewMean()}
	var givenBack atomic.Bool
	st, err := NewState(Settings{Policy: "asrpt", Params: policy.DefaultParams(), Scope: Scope{Partitions: []string{"gpu"}},
		Interval: 30 * time.Second, DispatchGrace: 2 * time.Minute, SiteFactorMax: 64000},
		cluster.Uniform(2, 4), rec, WriteFactor, nil, func(slurmclient.Delivery) bool { return true }, &givenBack)
	if err != nil {
		t.Fatal(err)
	}
	leader := runningJob("20", "het", 1, epoch.Add(time.Minute))
	comp := runningJob("21", "het", 2, epoch.Add(time.Minute))
	leader.Het = slurmclient.Het{LeaderID: "20", Components: []string{"20", "21"}}
	comp.Het = slurmclient.Het{LeaderID: "20", Offset: 1, Components: []string{"20", "21"}}
	cpu := runningJob("30", "cpu", 0, epoch)
	noStart := runningJob("31", "odd", 1, time.Time{})
	future := runningJob("32", "odd", 1, epoch.Add(time.Hour))
	ancient := runningJob("33", "odd", 1, epoch.AddDate(-2, 0, 0))
	plain := runningJob("10", "train", 2, epoch)
	waiting := pending("40", "train", 1, epoch)
	nodes := testNodes(2, 4)
	steps := []struct {
		jobs []slurmclient.Job
		want []string
	}{
		{[]slurmclient.Job{plain, leader, comp, cpu, noStart, future, ancient, waiting},
			[]string{"start 10 u/train 2 GPUs at 0", "start 20 u/het 3 GPUs at 60", "clock 600"}},
		{[]slurmclient.Job{plain, leader, comp, waiting}, []string{"clock 630"}},
		{[]slurmclient.Job{leader, comp, waiting}, []string{"stop 10", "clock 660"}},
	}
	for i, s := range steps {
		rec.told = nil
		at := float64(epoch.Unix()) + 600 + 30*float64(i)
		Decide(&Snapshot{Nodes: nodes, Jobs: s.jobs}, st, at)
		if !slices.Equal(rec.told, s.want) {
			t.Errorf("step %d: told %q, want %q", i, rec.told, s.want)
		}
	}
}

// BenchmarkTellRunning measures one cycle's report to mean-gpus-running of a list
// of 20,000 jobs, 4,000 of them running (steady: none starts or stops).
func BenchmarkTellRunning(b *testing.B) {
	var givenBack atomic.Bool
	st, err := NewState(Settings{Policy: "asrpt", Params: policy.DefaultParams(), Scope: Scope{Partitions: []string{"gpu"}},
		Interval: 30 * time.Second, DispatchGrace: 2 * time.Minute, SiteFactorMax: 64000},
		cluster.Uniform(2000, 8), predictor.NewMeanByGPUsRunning(), WriteFactor, nil, func(slurmclient.Delivery) bool { return true }, &givenBack)
	if err != nil {
		b.Fatal(err)
	}
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
