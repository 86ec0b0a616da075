// Package replay runs replays: policies on workloads prepared by the
// simulator, several at once, each summarised for the report as it ends.
// `asrpt replay` (one workload, many policies) and `asrpt quality` (many
// cases, seeds and policies) both run through Run.
package replay

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/loop"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/report"
	"github.com/asrpt/asrpt/sim"
)

// Spec is one replay: a policy on a prepared workload, with one predictor
// seed.
type Spec struct {
	// Label, when not empty, comes before the policy in an error
	// ("helios-16n: policy asrpt: …").
	Label string
	// Workload is the prepared trace (sim.Prepare); specs may share one.
	Workload *sim.Workload
	// LowerBound is the workload's lower bound on the total JCT, seconds
	// (sim.Workload.LowerBound): the summary's RatioToLB divides by it.
	LowerBound float64
	// Policy is the policy name (policy.Names, optionally with
	// policy.OracleSuffix).
	Policy string
	// Seed seeds the replay's predictor (Config.NewPredictor).
	Seed int64
	// NewPredictor, when not nil, makes this replay's predictors in place
	// of Config.NewPredictor (quality's reference replay of the candidate
	// with the family median).
	NewPredictor func(seed int64) (predictor.Predictor, error)
	// Preemptible tells which jobs opted in to preemption (sim.Config);
	// nil: none.
	Preemptible func(*job.Job) bool
	// Progress, when not nil, is called now and then with the replay's
	// finished jobs and its total (sim.Config.Progress).
	Progress func(done, total int)
}

// Config is what every replay of a Run shares.
type Config struct {
	// NewPredictor returns a fresh predictor with the given seed; it is
	// called once per replay. The oracle variants ignore what it returns.
	NewPredictor func(seed int64) (predictor.Predictor, error)
	// Frozen keeps every prediction made at submit (sim.Config.Frozen).
	Frozen bool
	// Why, when not empty, is the id of a job each replay tells the story
	// of (sim.Config.Why; the summary's Why).
	Why string
	// Parallel is how many replays run at once (≤ 0: GOMAXPROCS).
	Parallel int
	// Keep keeps each replay's sim.Result in its Outcome (for plots);
	// without it only the summary is kept and the result is garbage as
	// soon as it is summarised.
	Keep bool
	// Shares are the accounts' target shares and Longest how many of the
	// longest waits to list, for each summary's fairness report
	// (report.Fairness).
	Shares  map[string]float64
	Longest int
	// Against, when not nil, is the baseline's replay of the same
	// workload and AgainstFairness its fairness report: each summary then
	// compares its replay with it job by job (report.ComparePaired; the
	// summary's Paired).
	Against         *sim.Result
	AgainstFairness *report.FairnessReport
	// Sidecar, when not nil, is the site's sidecar configuration the
	// closed-loop policies run (asrpt replay --sidecar-config); nil:
	// loop.Config, the defaults with the replay's policy tunables.
	Sidecar *loop.Site
	// Done, when not nil, is called as each replay ends, in the order they
	// end, with the index of its Spec and its outcome; calls do not
	// overlap. It may change the outcome's summary, and take its Result
	// (set it to nil) so that Run does not hold it.
	Done func(i int, o *Outcome)
}

// Outcome is what one replay produced.
type Outcome struct {
	// Summary is the replay's figures (report.Summarize) with its wall
	// time, events per second, the forest's training figures and the
	// fairness report.
	Summary report.Summary
	// Result is the whole replay; nil unless Config.Keep.
	Result *sim.Result
}

// Run replays every spec, cfg.Parallel at a time, in the order of specs,
// and returns their outcomes in that order. It stops at the first error,
// or with ctx's error when ctx is done. Run lets go of each spec as its
// replay ends, so that a workload nobody else holds is garbage once its
// last replay is done.
func Run(ctx context.Context, specs []Spec, cfg Config) ([]Outcome, error) {
	if cfg.NewPredictor == nil {
		return nil, errors.New("replay: no predictor")
	}
	specs = append([]Spec(nil), specs...)
	out := make([]Outcome, len(specs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := cfg.Parallel
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range min(workers, len(specs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				mu.Lock()
				sp := specs[i]
				mu.Unlock()
				o, err := one(ctx, sp, cfg)
				mu.Lock()
				specs[i] = Spec{}
				if err != nil {
					if firstErr == nil {
						firstErr = err
						cancel()
					}
				} else if firstErr == nil {
					out[i] = o
					if cfg.Done != nil {
						cfg.Done(i, &out[i])
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range specs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// one runs and summarises one replay.
func one(ctx context.Context, sp Spec, cfg Config) (Outcome, error) {
	fail := func(err error) (Outcome, error) {
		if sp.Label != "" {
			return Outcome{}, fmt.Errorf("%s: policy %s: %w", sp.Label, sp.Policy, err)
		}
		return Outcome{}, fmt.Errorf("policy %s: %w", sp.Policy, err)
	}
	if err := ctx.Err(); err != nil {
		return Outcome{}, err
	}
	pred, err := sp.newPredictor(cfg)(sp.Seed)
	if err != nil {
		return fail(err)
	}
	ctl, err := controller(ctx, sp, cfg)
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	sc := sim.Config{Policy: sp.Policy, Predictor: pred, Frozen: cfg.Frozen,
		Preemptible: sp.Preemptible, Progress: sp.Progress, Why: cfg.Why}
	if ctl != nil {
		sc.Controller = ctl
	}
	r, err := sp.Workload.Run(ctx, sc)
	if err != nil {
		return fail(err)
	}
	wall := time.Since(start).Seconds()
	s := report.Summarize(r, sp.LowerBound)
	s.WallSeconds = wall
	if f, ok := predictor.Unwrap(pred).(*predictor.Forest); ok && r.Predictor == f.Name() {
		st := f.Stats()
		s.Trainings, s.TrainSeconds = st.Trainings, st.TrainSeconds
	}
	if wall > 0 {
		s.EventsPerSecond = float64(r.Events) / wall
	}
	if ctl != nil {
		s.Loop = ctl.Figures()
	}
	fair := report.Fairness(r, cfg.Shares, cfg.Longest)
	s.FairnessReport = &fair
	if cfg.Against != nil && cfg.Against != r {
		if s.Paired, err = report.ComparePaired(r, cfg.Against, &fair, cfg.AgainstFairness, cfg.Longest); err != nil {
			return fail(err)
		}
	}
	o := Outcome{Summary: s}
	if cfg.Keep {
		o.Result = r
	}
	return o, nil
}

// newPredictor returns what makes sp's predictors: its own, else cfg's.
func (sp Spec) newPredictor(cfg Config) func(seed int64) (predictor.Predictor, error) {
	if sp.NewPredictor != nil {
		return sp.NewPredictor
	}
	return cfg.NewPredictor
}

// controller returns the sidecar that polls the replay's Slurm for a
// closed-loop policy (policy.Sidecar), with a predictor of its own from
// cfg.NewPredictor (it learns from the replay's accounting); nil for any
// other policy.
func controller(ctx context.Context, sp Spec, cfg Config) (*loop.Controller, error) {
	base, oracle := policy.Split(sp.Policy)
	if !policy.Sidecar(base) {
		return nil, nil
	}
	if oracle {
		return nil, fmt.Errorf("the closed loop has no oracle variant: the sidecar predicts from the accounting it reads")
	}
	pred, err := sp.newPredictor(cfg)(sp.Seed)
	if err != nil {
		return nil, err
	}
	sc := loop.Config(sp.Workload.Env, loop.Mode(base))
	if cfg.Sidecar != nil {
		if sc, err = cfg.Sidecar.Config(loop.Mode(base)); err != nil {
			return nil, err
		}
	}
	return loop.New(ctx, sp.Workload.Env, sc, pred)
}
