package loop

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/testworkload"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/sim"
	"github.com/asrpt/asrpt/slurmclient"
)

// workload returns a generated workload of n jobs prepared for a 4×8
// cluster.
func workload(t testing.TB, n int, seed int64) *sim.Workload {
	t.Helper()
	return testworkload.Generated(t, n, seed, 4, 8)
}

// call is one call the sidecar made to Slurm and what it got.
type call struct {
	method   string
	from, to time.Time
	id       string
	update   slurmclient.JobUpdate
	jobs     []slurmclient.Job
	nodes    []slurmclient.Node
	acct     []job.Job
	err      error
}

// recorder passes the sidecar's calls to Slurm and records them.
type recorder struct {
	sidecar.Slurm
	calls []call
}

func (r *recorder) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	js, err := r.Slurm.Jobs(ctx)
	r.calls = append(r.calls, call{method: "Jobs", jobs: slices.Clone(js), err: err})
	return js, err
}

func (r *recorder) Nodes(ctx context.Context) ([]slurmclient.Node, error) {
	ns, err := r.Slurm.Nodes(ctx)
	r.calls = append(r.calls, call{method: "Nodes", nodes: slices.Clone(ns), err: err})
	return ns, err
}

func (r *recorder) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	js, err := r.Slurm.AccountingJobs(ctx, from, to)
	r.calls = append(r.calls, call{method: "AccountingJobs", from: from, to: to, acct: slices.Clone(js), err: err})
	return js, err
}

func (r *recorder) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	err := r.Slurm.UpdateJob(ctx, id, u)
	r.calls = append(r.calls, call{method: "UpdateJob", id: id, update: u, err: err})
	return err
}

// playback is a Slurm that answers a recorded call sequence and fails at
// the first call that differs from the recording.
type playback struct {
	sidecar.Slurm // SupportsSiteFactor, SignalJob, SupportsDelivery
	calls         []call
	next          int
	diverged      error
}

func (p *playback) take(method string) (call, error) {
	if p.diverged != nil {
		return call{}, p.diverged
	}
	if p.next >= len(p.calls) {
		p.diverged = fmt.Errorf("call %d: %s, past the end of the recording", p.next, method)
		return call{}, p.diverged
	}
	c := p.calls[p.next]
	if c.method != method {
		p.diverged = fmt.Errorf("call %d: %s, the recording has %s", p.next, method, c.method)
		return call{}, p.diverged
	}
	p.next++
	return c, nil
}

func (p *playback) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	c, err := p.take("Jobs")
	if err != nil {
		return nil, err
	}
	return slices.Clone(c.jobs), c.err
}

func (p *playback) Nodes(ctx context.Context) ([]slurmclient.Node, error) {
	c, err := p.take("Nodes")
	if err != nil {
		return nil, err
	}
	return slices.Clone(c.nodes), c.err
}

func (p *playback) AccountingJobs(ctx context.Context, from, to time.Time) ([]job.Job, error) {
	c, err := p.take("AccountingJobs")
	if err != nil {
		return nil, err
	}
	if !c.from.Equal(from) || !c.to.Equal(to) {
		p.diverged = fmt.Errorf("call %d: accounting [%v, %v), the recording has [%v, %v)", p.next-1, from, to, c.from, c.to)
		return nil, p.diverged
	}
	return slices.Clone(c.acct), c.err
}

func (p *playback) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	c, err := p.take("UpdateJob")
	if err != nil {
		return err
	}
	if c.id != id || !reflect.DeepEqual(c.update, u) {
		p.diverged = fmt.Errorf("call %d: update of job %s %+v, the recording has job %s %+v", p.next-1, id, u, c.id, c.update)
		return p.diverged
	}
	return c.err
}

// TestReplayEqualsSidecar: in each write mode, a sidecar run on its own
// against the sequence of reads the closed-loop replay showed its sidecar
// (the same jobs, nodes and accounting records, cycle by cycle) sends the
// same writes, in the same order, to the same jobs: the replay writes what
// the sidecar writes. The replay's sidecar does write (the site factors or
// priorities, and node lists).
func TestReplayEqualsSidecar(t *testing.T) {
	for _, base := range []string{"asrpt-sidecar", "asrpt-sidecar-priority"} {
		t.Run(base, func(t *testing.T) {
			w := workload(t, 300, 1)
			ctx := context.Background()
			cfg := Config(w.Env, Mode(base))
			rec := &recorder{}
			var times []float64
			ctl, err := newController(ctx, w.Env, cfg, predictor.NewMean(), func(s sidecar.Slurm) sidecar.Slurm {
				rec.Slurm = s
				return rec
			})
			if err != nil {
				t.Fatal(err)
			}
			ctl.Trace = func(now float64, _ sidecar.CycleReport) { times = append(times, now) }
			r, err := w.Run(ctx, sim.Config{Policy: base, Predictor: predictor.NewMean(), Controller: ctl})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Jobs) != 300 {
				t.Fatalf("%d jobs replayed, want 300", len(r.Jobs))
			}
			kinds := map[string]int{}
			for _, c := range rec.calls {
				if c.method == "UpdateJob" && c.err == nil {
					switch {
					case c.update.RequiredNodes != nil:
						kinds["nodes"]++
					case c.update.SiteFactor != nil:
						kinds["site_factor"]++
					case c.update.Priority != nil:
						kinds["priority"]++
					}
				}
			}
			want := "site_factor"
			if Mode(base) == sidecar.WritePriority {
				want = "priority"
			}
			if kinds[want] == 0 || kinds["nodes"] == 0 {
				t.Fatalf("the replay's sidecar wrote %v in %d cycles: want %s and node-list writes", kinds, len(times), want)
			}

			pb := &playback{Slurm: newSlurm(w.Env.Cluster), calls: rec.calls}
			s, err := sidecar.New(cfg, sidecar.Options{Cluster: w.Env.Cluster, Slurm: pb, Predictor: predictor.NewMean()})
			if err != nil {
				t.Fatal(err)
			}
			for _, now := range times {
				if _, err := s.RunOnce(ctx, Time(now)); err != nil && pb.diverged == nil {
					t.Fatalf("t=%.0f: %v", now, err)
				}
				if pb.diverged != nil {
					t.Fatalf("the sidecar on its own diverged from the replay's: %v", pb.diverged)
				}
			}
			if pb.next != len(rec.calls) {
				t.Fatalf("the sidecar on its own made %d calls, the replay's %d", pb.next, len(rec.calls))
			}
			t.Logf("%d cycles, %d calls, writes %v", len(times), len(rec.calls), kinds)
		})
	}
}

// TestSkippedPollsChangeNothing: the closed loop skips the polls at which
// neither the queue nor the sidecar's own clock-driven plans changed; the
// schedule is the one a poll every interval gives, job by job.
func TestSkippedPollsChangeNothing(t *testing.T) {
	for _, base := range []string{"asrpt-sidecar", "asrpt-sidecar-priority"} {
		for _, seed := range []int64{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/seed%d", base, seed), func(t *testing.T) {
				w := workload(t, 400, seed)
				run := func(strict bool) (*sim.Result, int) {
					ctl, err := New(context.Background(), w.Env, Config(w.Env, Mode(base)), predictor.NewMean())
					if err != nil {
						t.Fatal(err)
					}
					ctl.Strict = strict
					r, err := w.Run(context.Background(), sim.Config{Policy: base, Predictor: predictor.NewMean(), Controller: ctl})
					if err != nil {
						t.Fatal(err)
					}
					return r, ctl.Cycles
				}
				every, n := run(true)
				skipping, m := run(false)
				for i := range every.Jobs {
					a, b := every.Jobs[i], skipping.Jobs[i]
					if a.Start != b.Start || a.End != b.End {
						t.Fatalf("job %s: start %.0f end %.0f polling every interval, %.0f and %.0f skipping quiet polls",
							every.ID(i), a.Start, a.End, b.Start, b.End)
					}
				}
				if m >= n {
					t.Fatalf("skipping made %d polls, every interval %d", m, n)
				}
				t.Logf("%d polls instead of %d", m, n)
			})
		}
	}
}
