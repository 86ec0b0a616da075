package sim

import (
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

// learning predicts 1000 s for family "long" until one of its jobs has
// finished, then the true run time; family "mid" is always 500 s.
type learning struct{ seen map[string]bool }

func (*learning) Name() string { return "learning" }
func (l *learning) Predict(j *job.Job) predictor.Estimate {
	if j.Name == "long" && !l.seen[j.Name] {
		return predictor.Estimate{Seconds: 1000, Known: true}
	}
	if j.Name == "mid" {
		return predictor.Estimate{Seconds: 500, Known: true}
	}
	return predictor.Estimate{Seconds: j.RunTime, Known: true}
}
func (l *learning) Repredict(j *job.Job, _ float64) predictor.Estimate { return l.Predict(j) }
func (l *learning) Observe(j *job.Job, _ float64)                      { l.seen[j.Name] = true }

// TestRepredictReordersWaitingJobs checks design §5.3 through the replay:
// on one GPU, "long" family jobs are predicted 1000 s until the first one
// finishes after 10 s; its waiting sibling is then predicted 10 s and goes
// before a 500 s job submitted earlier. With predictions frozen at submit
// the sibling waits behind it.
func TestRepredictReordersWaitingJobs(t *testing.T) {
	c := cluster.Uniform(1, 1)
	jobs := []job.Job{
		{ID: "1", User: "u", Name: "long", GPUs: 1, RunTime: 10, Submit: 0},
		{ID: "2", User: "u", Name: "mid", GPUs: 1, RunTime: 500, Submit: 1},
		{ID: "3", User: "u", Name: "long", GPUs: 1, RunTime: 10, Submit: 2},
	}
	for _, tc := range []struct {
		policy string
		frozen bool
		start3 float64
	}{
		{"asrpt", false, 10},
		{"asrpt", true, 510},
		{"spjf", false, 10},
		{"spjf", true, 510},
	} {
		r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: tc.policy,
			Predictor: &learning{seen: map[string]bool{}}, Frozen: tc.frozen, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Jobs[2].Start; got != tc.start3 {
			t.Errorf("%s frozen=%v: job 3 started at %v, want %v", tc.policy, tc.frozen, got, tc.start3)
		}
	}
}

// counting counts the re-predictions a replay asks of the running means,
// one per job (Repredict) or one per group (RepredictGroup).
type counting struct {
	*predictor.Mean
	perJob, perGroup int
}

func (c *counting) Repredict(j *job.Job, now float64) predictor.Estimate {
	c.perJob++
	return c.Mean.Repredict(j, now)
}

func (c *counting) RepredictGroup(done *job.Job, now float64) (predictor.Estimate, bool) {
	c.perGroup++
	return c.Mean.RepredictGroup(done, now)
}

// perJob is the running means without their group shortcut: every waiting
// job is predicted on its own.
type perJob struct{ m *predictor.Mean }

func (p perJob) Name() string                                         { return p.m.Name() }
func (p perJob) Predict(j *job.Job) predictor.Estimate                { return p.m.Predict(j) }
func (p perJob) Repredict(j *job.Job, now float64) predictor.Estimate { return p.m.Repredict(j, now) }
func (p perJob) Observe(j *job.Job, end float64)                      { p.m.Observe(j, end) }

// TestRepredictOnlyWhereRead: the replay predicts waiting jobs again only
// for the policies that read an estimate (policy.UsesPredictions), and
// asks a predictor that gives its whole group one estimate once per
// finish; the schedule is the one predicting each waiting job gives.
func TestRepredictOnlyWhereRead(t *testing.T) {
	c := cluster.Uniform(4, 8)
	jobs := randomJobs(5, 600, c.TotalGPUs())
	for _, name := range allPolicies {
		cnt := &counting{Mean: predictor.NewMean()}
		got, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: cnt})
		if err != nil {
			t.Fatal(err)
		}
		if cnt.perJob != 0 {
			t.Errorf("%s: %d re-predictions job by job, want them by group", name, cnt.perJob)
		}
		if !policy.UsesPredictions(name) {
			if cnt.perGroup != 0 {
				t.Errorf("%s reads no estimate: %d re-predictions, want 0", name, cnt.perGroup)
			}
			continue
		}
		if _, ok := mustPolicy(t, name, c).(policy.Updater); ok && cnt.perGroup == 0 {
			t.Errorf("%s: no re-prediction on 600 jobs", name)
		}
		want, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: perJob{predictor.NewMean()}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Jobs {
			if got.Jobs[i].Start != want.Jobs[i].Start || got.Jobs[i].End != want.Jobs[i].End {
				t.Fatalf("%s: job %d runs %v–%v predicted by group, %v–%v job by job", name, i,
					got.Jobs[i].Start, got.Jobs[i].End, want.Jobs[i].Start, want.Jobs[i].End)
			}
		}
	}
}

// mustPolicy returns a fresh policy name on cluster c.
func mustPolicy(t *testing.T, name string, c *cluster.Cluster) policy.Policy {
	t.Helper()
	p, err := policy.New(name, policy.NewEnv(c, policy.DefaultParams()))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hidden is a predictor that does not say it learns from running jobs.
type hidden struct{ predictor.Predictor }

// TestRunningJobsSizeTheirGroup: the replay tells a predictor that learns
// from running jobs (mean-gpus-running) of every start and of the time. On two
// GPUs, family "a" has run 10 s once when a run of it starts that lasts
// 5000 s; 400 s in, a job of "a" and one of "b" (run once: 50 s) wait for
// the next free GPU. Told that "a"'s run has outlived its 10 s mean,
// mean-gpus sizes the waiting "a" job at about 406 s and runs the "b" job
// first; not told, it sizes it at 10 s and runs it first. (Ranked by the
// median, mean-gpus's own ranking is the expected value, the running jobs
// change nothing: the median is of finished runs alone.)
func TestRunningJobsSizeTheirGroup(t *testing.T) {
	c := cluster.Uniform(1, 2)
	jobs := []job.Job{
		{ID: "1", User: "u", Name: "a", GPUs: 1, RunTime: 10, Submit: 0},
		{ID: "2", User: "u", Name: "b", GPUs: 1, RunTime: 50, Submit: 0},
		{ID: "3", User: "u", Name: "a", GPUs: 1, RunTime: 5000, Submit: 100},
		{ID: "4", User: "u", Name: "c", GPUs: 1, RunTime: 1000, Submit: 100},
		{ID: "5", User: "u", Name: "b", GPUs: 1, RunTime: 50, Submit: 500},
		{ID: "6", User: "u", Name: "a", GPUs: 1, RunTime: 10, Submit: 501},
	}
	for _, tc := range []struct {
		name   string
		pred   predictor.Predictor
		startB float64
		estA   float64
	}{
		{"told", predictor.NewMeanByGPUsRunning(), 1100, (10 + 2*401) / 2.0},
		{"not told", hidden{predictor.NewMeanByGPUsRunning()}, 1110, 10},
		{"mean-gpus", predictor.NewMeanByGPUs(), 1110, 10},
	} {
		params := policy.DefaultParams()
		params.Rank = policy.RankFor(predictor.Default) // the expected value
		r, err := replayJobs(jobs, c, params, Config{Policy: "asrpt", Predictor: tc.pred, Check: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Jobs[4].Start; got != tc.startB {
			t.Errorf("%s: the waiting b job started at %v, want %v", tc.name, got, tc.startB)
		}
		if got := r.Jobs[5].Predicted; got != tc.estA {
			t.Errorf("%s: the waiting a job predicted %v s, want %v", tc.name, got, tc.estA)
		}
	}
}
