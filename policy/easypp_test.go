package policy_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/prediction"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/sim"
	"github.com/asrpt/asrpt/sim/simtest"
	"github.com/asrpt/asrpt/trace"
)

// TestEASYPPReservationAndSJBF replays tiny traces on one 8-GPU node where a
// 6-GPU job runs and an 8-GPU job waits at the head of the queue (its
// shadow time is 1000). Every job has its own user, so the predictions are
// the time limits, here equal to the run times; the oracle variant must
// agree.
func TestEASYPPReservationAndSJBF(t *testing.T) {
	c := cluster.Uniform(1, 8)
	mk := func(id string, gpus int, run, submit float64) job.Job {
		return job.Job{ID: id, User: "u-" + id, GPUs: gpus, RunTime: run, TimeLimit: run, Submit: submit}
	}
	cases := []struct {
		name   string
		jobs   []job.Job
		policy string
		starts []float64
	}{
		// small ends by the shadow and is backfilled; long would delay
		// the head and waits for it.
		{"head not delayed", []job.Job{mk("run", 6, 1000, 0), mk("big", 8, 100, 1),
			mk("small", 2, 100, 2), mk("long", 2, 5000, 3)}, "easypp", []float64{0, 1000, 2, 1100}},
		// Two candidates arrive together, both end by the shadow, room for
		// one: the shorter goes first, the longer when it is done.
		{"shortest first", []job.Job{mk("run", 6, 1000, 0), mk("big", 8, 100, 1),
			mk("longer", 2, 500, 2), mk("shorter", 2, 200, 2)}, "easypp", []float64{0, 1000, 202, 2}},
		// Slurm's backfill tries them in queue order instead.
		{"queue order under backfill", []job.Job{mk("run", 6, 1000, 0), mk("big", 8, 100, 1),
			mk("longer", 2, 500, 2), mk("shorter", 2, 200, 2)}, "backfill", []float64{0, 1000, 2, 502}},
	}
	for _, tc := range cases {
		pols := []string{tc.policy}
		if tc.policy == "easypp" {
			pols = append(pols, "easypp"+policy.OracleSuffix)
		}
		for _, name := range pols {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				r, err := simtest.Replay(tc.jobs, c, policy.DefaultParams(), sim.Config{Policy: name, Predictor: predictor.Limit{}, Check: true})
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range tc.starts {
					if r.Jobs[i].Start != s {
						t.Errorf("job %s starts at %v, want %v", r.ID(i), r.Jobs[i].Start, s)
					}
				}
			})
		}
	}
}

// scene drives a policy directly on one 8-GPU node.
type scene struct {
	t    *testing.T
	env  *policy.Env
	pol  policy.Policy
	free *placement.Free
	seq  int
}

func newScene(t *testing.T, name string) *scene {
	t.Helper()
	env := policy.NewEnv(cluster.Uniform(1, 8), policy.DefaultParams())
	pol, err := policy.New(name, env)
	if err != nil {
		t.Fatal(err)
	}
	return &scene{t: t, env: env, pol: pol, free: placement.NewFree(env.Cluster)}
}

// arrive submits a plain job at now; its replay prediction is its run time
// (which EASY++ ignores).
func (s *scene) arrive(now float64, id, user string, gpus int, limit float64) *policy.Task {
	s.t.Helper()
	j := &job.Job{ID: id, User: user, GPUs: gpus, RunTime: 1, TimeLimit: limit, Submit: now}
	task, err := s.env.NewTask(j, s.seq, prediction.Estimate{Seconds: 1, Known: true})
	if err != nil {
		s.t.Fatal(err)
	}
	s.seq++
	s.pol.Arrive(now, task)
	return task
}

// schedule runs a pass at now and returns the IDs started.
func (s *scene) schedule(now float64) []string {
	var out []string
	for _, d := range s.pol.Schedule(now, s.free) {
		if d.Preempt {
			s.t.Fatalf("job %s preempted", d.Task.ID)
		}
		out = append(out, d.Task.ID)
	}
	return out
}

func (s *scene) finish(now float64, task *policy.Task) {
	s.free.Give(&task.Placement)
	s.pol.Finish(now, task)
}

// history runs the given jobs of user one after another, each 1 GPU with
// a long limit, from time 0; it returns when the last ends.
func (s *scene) history(user string, runs []float64) float64 {
	s.t.Helper()
	now := 0.0
	for i, r := range runs {
		task := s.arrive(now, fmt.Sprintf("%s-h%d", user, i), user, 1, 1e6)
		if got := s.schedule(now); len(got) != 1 {
			s.t.Fatalf("history job of %s not started: %v", user, got)
		}
		now += r
		s.finish(now, task)
	}
	return now
}

const sceneT = 100000 // when the jobs under test arrive, seconds

// TestEASYPPUserPrediction checks the prediction of a candidate of user u
// through whether it backfills: at sceneT a 6-GPU job whose prediction is
// hole starts, an 8-GPU job waits with its shadow at sceneT+hole, and the
// 2-GPU candidate backfills exactly when its prediction is ≤ hole.
func TestEASYPPUserPrediction(t *testing.T) {
	cases := []struct {
		name   string
		hist   []float64 // u's finished jobs, oldest first
		limit  float64   // the candidate's time limit
		hole   float64
		starts bool
	}{
		{"mean of the last two", []float64{400, 600}, 1e6, 500, true},
		{"not the first alone", []float64{400, 600}, 1e6, 499, false},
		{"not the last alone", []float64{600, 400}, 1e6, 500, true},
		{"only the last two", []float64{5000, 400, 600}, 1e6, 500, true},
		{"one job", []float64{300}, 1e6, 300, true},
		{"one job, too long", []float64{300}, 1e6, 299, false},
		{"capped by the limit", []float64{400, 600}, 450, 450, true},
		{"no history: the limit", nil, 450, 450, true},
		{"no history: the limit, too long", nil, 450, 449, false},
		{"no history, no limit", nil, 0, prediction.DefaultLimit, true},
		{"no history, no limit, too long", nil, 0, prediction.DefaultLimit - 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScene(t, "easypp")
			s.history("u", tc.hist)
			s.arrive(sceneT, "run", "v", 6, tc.hole)
			s.arrive(sceneT, "big", "w", 8, 100)
			s.arrive(sceneT, "cand", "u", 2, tc.limit)
			got := s.schedule(sceneT)
			want := []string{"run"}
			if tc.starts {
				want = append(want, "cand")
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("started %v, want %v", got, want)
			}
			var pending []string
			for _, p := range s.pol.Pending() {
				pending = append(pending, p.ID)
			}
			if !tc.starts && fmt.Sprint(pending) != "[big cand]" {
				t.Errorf("pending %v, want [big cand]", pending)
			}
		})
	}
}

// TestEASYPPCorrection checks the raising of a prediction that proves too
// short. User v's history predicts 100 s for the 6-GPU job started at
// sceneT, which keeps running; an 8-GPU job waits behind it. At sceneT+dt
// the shadow time must be sceneT+shadow, reported by NextEvent and seen by
// a 2-GPU candidate: one predicted to end at the shadow time backfills, one
// a second longer does not.
func TestEASYPPCorrection(t *testing.T) {
	cases := []struct {
		name   string
		limit  float64 // of the running job
		dt     float64
		shadow float64
	}{
		{"before the predicted end", 1e6, 50, 100},
		{"one minute more", 1e6, 150, 160},
		{"then five minutes", 1e6, 200, 460},
		{"four corrections", 1e6, 2000, 3160},
		{"capped by the limit", 400, 200, 400},
		{"past the limit", 400, 500, 1300},
	}
	for _, tc := range cases {
		for _, extra := range []float64{0, 1} {
			t.Run(fmt.Sprintf("%s/+%v", tc.name, extra), func(t *testing.T) {
				s := newScene(t, "easypp")
				s.history("v", []float64{100, 100})
				s.arrive(sceneT, "run", "v", 6, tc.limit)
				s.arrive(sceneT, "big", "w", 8, 100)
				if got := s.schedule(sceneT); fmt.Sprint(got) != "[run]" {
					t.Fatalf("started %v, want [run]", got)
				}
				if got := s.pol.NextEvent(sceneT); got != sceneT+100 {
					t.Errorf("next event at start %v, want %v", got-sceneT, 100)
				}
				now := sceneT + tc.dt
				if got := s.pol.NextEvent(now); got != sceneT+tc.shadow {
					t.Errorf("next event %v, want %v", got-sceneT, tc.shadow)
				}
				s.arrive(now, "cand", "c", 2, tc.shadow-tc.dt+extra)
				got := s.schedule(now)
				if starts := len(got) == 1 && got[0] == "cand"; starts != (extra == 0) {
					t.Errorf("started %v with the candidate ending %v after the shadow", got, extra)
				}
			})
		}
	}
}

// TestEASYPPReplay replays a few thousand jobs of the built-in workload:
// every job starts once, after its submit, and finishes, and the GPU
// accounting holds after every event.
func TestEASYPPReplay(t *testing.T) {
	cfg := trace.DefaultGenConfig()
	cfg.Jobs = 3000
	jobs, err := trace.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.Uniform(cfg.ClusterGPUs/cfg.GPUsPerNode, cfg.GPUsPerNode)
	for _, name := range []string{"easypp", "easypp" + policy.OracleSuffix} {
		t.Run(name, func(t *testing.T) {
			r, err := simtest.Replay(jobs, c, policy.DefaultParams(), sim.Config{Policy: name, Predictor: predictor.NewMean(), Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Jobs)+r.Excluded != len(jobs) {
				t.Fatalf("%d results and %d excluded for %d jobs", len(r.Jobs), r.Excluded, len(jobs))
			}
			for i, j := range r.Jobs {
				if math.IsNaN(j.Start) || j.Start < j.Submit || !(j.End >= j.Start) || j.Preemptions > 0 {
					t.Fatalf("job %s: %+v", r.ID(i), j)
				}
			}
		})
	}
}
