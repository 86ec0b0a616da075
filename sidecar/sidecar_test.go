package sidecar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/prediction"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// fixedPredictor predicts by job name: the number of seconds in Runs, and
// unknown (the time limit) for other names.
type fixedPredictor struct{ Runs map[string]float64 }

func (fixedPredictor) Name() string { return "fixed" }
func (p fixedPredictor) Predict(j *job.Job) predictor.Estimate {
	if s, ok := p.Runs[j.Name]; ok {
		return predictor.Estimate{Seconds: s, Known: true, Estimator: prediction.ByGroup}
	}
	return predictor.Estimate{Seconds: 3600, Estimator: prediction.ByDefault}
}
func (p fixedPredictor) Repredict(j *job.Job, _ float64) predictor.Estimate { return p.Predict(j) }
func (fixedPredictor) Observe(*job.Job, float64)                            {}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pend returns a pending job asking gpus GPUs per node on one node.
func pend(id, name string, gpus int, submit time.Time) slurmclient.Job {
	return slurmclient.Job{ID: id, Name: name, User: "u", Account: "a", Partition: "gpu", QOS: "normal",
		State: "PENDING", Submit: submit, TimeLimit: 4 * time.Hour,
		GPUs: slurmclient.GPURequest{PerNode: gpus, Total: gpus}}
}

type harness struct {
	t    testing.TB
	fake *sidecartest.Fake
	cfg  Config
	s    *Sidecar
	pred predictor.Predictor
	// tiers is Options.PartitionTiers of the sidecars newSidecar makes.
	tiers map[string]int
}

// newHarness returns a sidecar on n nodes of g GPUs with a fake Slurm; all
// GPUs are busy when busy is set, so that nothing is dispatched.
func newHarness(t testing.TB, n, g int, busy bool, mod func(*Config)) *harness {
	t.Helper()
	nodes := sidecartest.Nodes(n, g)
	if busy {
		for i := range nodes {
			nodes[i].GPUsUsed, nodes[i].State = g, "ALLOCATED"
		}
	}
	cfg := DefaultConfig()
	cfg.Slurm.URL = "unix:///run/slurmrestd.sock"
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")
	cfg.Scope.Partitions = []string{"gpu"}
	cfg.History = 0
	// The tests written before factor mode check priorities; factor
	// mode's tests set it.
	cfg.WriteMode = WritePriority
	if mod != nil {
		mod(&cfg)
	}
	h := &harness{t: t, fake: sidecartest.NewFake(nodes), cfg: cfg,
		pred: fixedPredictor{Runs: map[string]float64{"short": 60, "mid": 600, "long": 6000,
			"day": 86400, "week": 604800}}}
	h.s = h.newSidecar()
	return h
}

func (h *harness) newSidecar() *Sidecar {
	h.t.Helper()
	nodes, _ := h.fake.Nodes(context.Background())
	c := cluster.Uniform(len(nodes), nodes[0].GPUs)
	s, err := New(h.cfg, Options{Cluster: c, Slurm: h.fake, Predictor: h.pred, Log: zerolog.Nop(), PartitionTiers: h.tiers})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) cycle(at time.Time) CycleReport {
	h.t.Helper()
	rep, err := h.s.RunOnce(context.Background(), at)
	if err != nil {
		h.t.Fatalf("cycle at %v: %v", at, err)
	}
	return rep
}

// priorities returns the priorities of the given jobs.
func (h *harness) priorities(ids ...string) []uint32 {
	out := make([]uint32, len(ids))
	for i, id := range ids {
		j, _ := h.fake.Job(id)
		out[i] = j.Priority
	}
	return out
}

func writesTo(ws []sidecartest.Write, id string) int {
	n := 0
	for _, w := range ws {
		if w.JobID == id {
			n++
		}
	}
	return n
}

func strictlyDecreasing(p []uint32) bool {
	for i := 1; i < len(p); i++ {
		if p[i] >= p[i-1] {
			return false
		}
	}
	return true
}

func TestRunOnce(t *testing.T) {
	cases := []struct {
		name string
		busy bool
		mod  func(*Config)
		// setup submits jobs and may prepare the fake; run drives cycles
		// and checks.
		setup func(h *harness)
		check func(t *testing.T, h *harness)
	}{
		{
			name: "priorities follow virtual SRPT order",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "long", 1, t0))
				h.fake.Submit(pend("2", "short", 1, t0.Add(time.Second)))
				h.fake.Submit(pend("3", "mid", 1, t0.Add(2*time.Second)))
			},
			check: func(t *testing.T, h *harness) {
				h.cycle(t0.Add(time.Minute))
				p := h.priorities("2", "3", "1")
				if !strictlyDecreasing(p) {
					t.Errorf("priorities short, mid, long = %v, want strictly decreasing", p)
				}
				for _, v := range p {
					if !decision.LowBand.Contains(v) {
						t.Errorf("priority %d outside the unreleased band", v)
					}
				}
			},
		},
		{
			name: "steady queue writes nothing",
			busy: true,
			setup: func(h *harness) {
				for i := range 50 {
					h.fake.Submit(pend(fmt.Sprint(i+1), []string{"short", "mid", "long"}[i%3], 1, t0))
				}
				for i := range 50 {
					h.fake.Submit(pend(fmt.Sprint(i+51), "week", 1, t0))
				}
			},
			check: func(t *testing.T, h *harness) {
				r1 := h.cycle(t0.Add(time.Minute))
				if r1.Writes["priority"] != 100 {
					t.Fatalf("first cycle: %d priority writes, want 100", r1.Writes["priority"])
				}
				h.fake.ResetWrites()
				h.cycle(t0.Add(time.Minute))
				if n := len(h.fake.Writes()); n != 0 {
					t.Errorf("same time again: %d writes, want 0", n)
				}
				// An hour on, jobs are released: each release moves one job
				// to the upper band and costs one write, nothing else.
				r2 := h.cycle(t0.Add(time.Hour))
				if n := len(h.fake.Writes()); n != r2.Released || n == 0 {
					t.Errorf("an hour on: %d writes for %d releases", n, r2.Released)
				}
				// The virtual queue: every job waits on the virtual machine
				// until released, and the cluster is busy (none dispatched).
				if r1.Virtual+r1.Released != 100 || r2.Virtual != r1.Virtual-r2.Released {
					t.Errorf("virtual queue %d then %d, released %d then %d: want 100 jobs accounted for", r1.Virtual, r2.Virtual, r1.Released, r2.Released)
				}
			},
		},
		{
			name: "writes proportional to changes",
			busy: true,
			mod:  func(c *Config) { c.WriteLimit = 1000 },
			setup: func(h *harness) {
				for i := range 300 {
					h.fake.Submit(pend(fmt.Sprint(i+1), []string{"day", "week"}[i%2], 1, t0))
				}
			},
			check: func(t *testing.T, h *harness) {
				h.cycle(t0.Add(time.Minute))
				h.fake.ResetWrites()
				h.fake.Submit(pend("1001", "day", 1, t0.Add(90*time.Second)))
				h.fake.Submit(pend("1002", "week", 1, t0.Add(90*time.Second)))
				h.fake.Cancel("7")
				rep := h.cycle(t0.Add(2 * time.Minute))
				if n := len(h.fake.Writes()); n != 2 || rep.Released != 0 {
					t.Errorf("2 arrivals and a cancellation on 300 jobs: %d writes %v (%d released), want 2", n, h.fake.Writes(), rep.Released)
				}
			},
		},
		{
			name: "out of scope, held and running jobs untouched; a CPU-only job in scope keeps its standing",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				cpu := pend("2", "short", 1, t0)
				cpu.Partition = "cpu"
				h.fake.Submit(cpu)
				held := pend("3", "short", 1, t0)
				held.Held, held.Reason = true, "JobHeldAdmin"
				h.fake.Submit(held)
				run := pend("4", "short", 1, t0)
				run.State = "RUNNING"
				h.fake.Submit(run)
				nogpu := pend("5", "short", 0, t0)
				h.fake.Submit(nogpu)
				multi := pend("6", "short", 1, t0)
				multi.Partition = "gpu,cpu"
				h.fake.Submit(multi)
			},
			check: func(t *testing.T, h *harness) {
				rep := h.cycle(t0.Add(time.Minute))
				for _, w := range h.fake.Writes() {
					if w.JobID != "1" && w.JobID != "5" {
						t.Errorf("wrote to job %s: %v", w.JobID, w)
					}
					if w.JobID == "5" && (w.Update.Priority == nil || w.Update.RequiredNodes != nil) {
						t.Errorf("CPU-only job written %v, want its priority only", w)
					}
				}
				// Submitted with job 1 and after it by id: behind it, as in
				// Slurm's own order.
				if p := h.priorities("1", "5"); p[0] <= p[1] || p[1] == 0 {
					t.Errorf("priorities of job 1 and the CPU-only job 5: %v", p)
				}
				if rep.Jobs["held"] != 1 || rep.Jobs["running"] != 1 || rep.Jobs["managed"] != 1 || rep.Jobs["standing"] != 1 {
					t.Errorf("jobs by state %v", rep.Jobs)
				}
			},
		},
		{
			name: "QOS and account scope",
			busy: true,
			mod: func(c *Config) {
				c.Scope.QOS = []string{"normal"}
				c.Scope.Accounts = []string{"a"}
			},
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				q := pend("2", "short", 1, t0)
				q.QOS = "high"
				h.fake.Submit(q)
				a := pend("3", "short", 1, t0)
				a.Account = "b"
				h.fake.Submit(a)
			},
			check: func(t *testing.T, h *harness) {
				h.cycle(t0.Add(time.Minute))
				if w := h.fake.Writes(); len(w) != 1 || w[0].JobID != "1" {
					t.Errorf("writes %v, want one to job 1", w)
				}
			},
		},
		{
			name: "admin-set priority left alone",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				h.fake.Submit(pend("2", "mid", 1, t0))
			},
			check: func(t *testing.T, h *harness) {
				h.cycle(t0.Add(time.Minute))
				h.fake.Edit("1", func(j *slurmclient.Job) { j.Priority = 5 })
				h.fake.ResetWrites()
				h.fake.Submit(pend("3", "short", 1, t0.Add(time.Minute)))
				rep := h.cycle(t0.Add(2 * time.Minute))
				h.cycle(t0.Add(3 * time.Minute))
				if n := writesTo(h.fake.Writes(), "1"); n != 0 {
					t.Errorf("%d writes to the job an admin changed", n)
				}
				if p := h.priorities("1"); p[0] != 5 {
					t.Errorf("admin's priority became %d", p[0])
				}
				if rep.Jobs["hands_off"] != 1 {
					t.Errorf("jobs %v, want one hands_off", rep.Jobs)
				}
			},
		},
		{
			name: "held after management, then released, rejoins without rewrite",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				h.fake.Submit(pend("2", "mid", 1, t0))
			},
			check: func(t *testing.T, h *harness) {
				h.cycle(t0.Add(time.Minute))
				before := h.priorities("1")[0]
				h.fake.Edit("1", func(j *slurmclient.Job) { j.Held, j.Priority = true, 0 })
				h.fake.ResetWrites()
				h.cycle(t0.Add(2 * time.Minute))
				if n := writesTo(h.fake.Writes(), "1"); n != 0 {
					t.Fatalf("%d writes to a held job", n)
				}
				// The user releases it: Slurm recomputes the priority; asrpt
				// sees a value it did not write and must not write again.
				h.fake.Edit("1", func(j *slurmclient.Job) { j.Held, j.Priority = false, 1000 })
				h.cycle(t0.Add(3 * time.Minute))
				if n := writesTo(h.fake.Writes(), "1"); n != 0 {
					t.Errorf("%d writes after release (priority was %d)", n, before)
				}
			},
		},
		{
			name: "job cancelled between read and write",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				h.fake.Submit(pend("2", "mid", 1, t0))
				h.fake.SetInterceptor(sidecartest.FailOnce("UpdateJob", "1",
					fmt.Errorf("fake: slurm error 2017: %w", slurmclient.ErrJobGone)))
			},
			check: func(t *testing.T, h *harness) {
				rep := h.cycle(t0.Add(time.Minute))
				if rep.Failed["job_gone"] != 1 {
					t.Errorf("failures %v, want one job_gone", rep.Failed)
				}
				if n := writesTo(h.fake.Writes(), "2"); n != 1 {
					t.Errorf("job 2: %d writes, want 1", n)
				}
				h.fake.Cancel("1")
				h.fake.ResetWrites()
				rep = h.cycle(t0.Add(2 * time.Minute))
				if writesTo(h.fake.Writes(), "1") != 0 || len(rep.Failed) != 0 {
					t.Errorf("after the cancellation: writes %v, failures %v", h.fake.Writes(), rep.Failed)
				}
			},
		},
		{
			name: "write limit",
			busy: true,
			mod:  func(c *Config) { c.WriteLimit = 3 },
			setup: func(h *harness) {
				for i := range 10 {
					h.fake.Submit(pend(fmt.Sprint(i+1), "week", 1, t0.Add(time.Duration(i)*time.Second)))
				}
			},
			check: func(t *testing.T, h *harness) {
				rep := h.cycle(t0.Add(time.Minute))
				if n := len(h.fake.Writes()); n != 3 || rep.Deferred != 7 {
					t.Fatalf("%d writes, %d deferred; want 3 and 7", n, rep.Deferred)
				}
				for i := 2; i <= 4; i++ {
					h.cycle(t0.Add(time.Duration(i) * time.Minute))
				}
				if n := len(h.fake.Writes()); n != 10 {
					t.Errorf("after 4 cycles %d writes, want 10", n)
				}
				p := h.priorities("1", "2", "3", "4", "5", "6", "7", "8", "9", "10")
				if !strictlyDecreasing(p) {
					t.Errorf("priorities %v not in submit order for equal sizes", p)
				}
			},
		},
		{
			name: "dispatched job gets its nodes and the top band",
			setup: func(h *harness) {
				j := pend("1", "short", 4, t0)
				j.GPUs = slurmclient.GPURequest{PerNode: 4, Total: 8}
				h.fake.Submit(j)
			},
			check: func(t *testing.T, h *harness) {
				rep := h.cycle(t0.Add(time.Minute))
				if rep.Dispatched != 1 {
					t.Fatalf("dispatched %d, want 1", rep.Dispatched)
				}
				j, _ := h.fake.Job("1")
				if len(j.RequiredNodes) != 2 || !decision.HighBand.Contains(j.Priority) {
					t.Errorf("nodes %v priority %d; want 2 nodes in the high band", j.RequiredNodes, j.Priority)
				}
				ws := h.fake.Writes()
				if len(ws) != 1 || ws[0].Update.RequiredNodes == nil || ws[0].Update.Priority == nil || !ws[0].Update.Guard {
					t.Errorf("writes %v, want one guarded update of nodes and priority", ws)
				}
				// Slurm starts it; nothing more is written.
				_ = h.fake.Start("1", j.RequiredNodes, 4)
				h.fake.ResetWrites()
				h.cycle(t0.Add(2 * time.Minute))
				if len(h.fake.Writes()) != 0 {
					t.Errorf("writes to a running job: %v", h.fake.Writes())
				}
			},
		},
		{
			name: "node list not written when the request does not allow it",
			setup: func(h *harness) {
				j := pend("1", "short", 0, t0)
				j.GPUs = slurmclient.GPURequest{PerNode: 2, Total: 4} // 2 nodes × 2; Heavy-Edge packs 4 on one node
				h.fake.Submit(j)
			},
			check: func(t *testing.T, h *harness) {
				h.cycle(t0.Add(time.Minute))
				j, _ := h.fake.Job("1")
				if len(j.RequiredNodes) != 0 {
					t.Errorf("nodes %v written for a request of 2 GPUs on each of 2 nodes", j.RequiredNodes)
				}
				if !decision.HighBand.Contains(j.Priority) {
					t.Errorf("priority %d not in the high band", j.Priority)
				}
			},
		},
		{
			name: "dry run writes nothing and plans",
			busy: true,
			mod:  func(c *Config) { c.DryRun = true },
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "long", 1, t0))
				h.fake.Submit(pend("2", "short", 1, t0))
			},
			check: func(t *testing.T, h *harness) {
				rep := h.cycle(t0.Add(time.Minute))
				if len(h.fake.Writes()) != 0 {
					t.Errorf("dry run wrote %v", h.fake.Writes())
				}
				if len(rep.Plan) != 2 || rep.Plan[0].JobID != "2" || rep.Plan[0].PriorityNew <= rep.Plan[1].PriorityNew {
					t.Errorf("plan %+v", rep.Plan)
				}
				if _, err := os.Stat(h.cfg.StateFile); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("dry run wrote the state file: %v", err)
				}
			},
		},
		{
			name: "refused token stops the cycle's writes",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				h.fake.Submit(pend("2", "mid", 1, t0))
				h.fake.SetInterceptor(sidecartest.FailOnce("UpdateJob", "", fmt.Errorf("fake: %w", slurmclient.ErrAuth)))
			},
			check: func(t *testing.T, h *harness) {
				_, err := h.s.RunOnce(context.Background(), t0.Add(time.Minute))
				if !errors.Is(err, slurmclient.ErrAuth) {
					t.Fatalf("error %v, want ErrAuth", err)
				}
				if h.fake.Calls("UpdateJob") != 1 {
					t.Errorf("%d updates tried after an auth failure", h.fake.Calls("UpdateJob"))
				}
				h.cycle(t0.Add(2 * time.Minute))
				if n := len(h.fake.Writes()); n != 2 {
					t.Errorf("after recovery %d writes, want 2", n)
				}
			},
		},
		{
			name: "failed read changes nothing",
			busy: true,
			setup: func(h *harness) {
				h.fake.Submit(pend("1", "short", 1, t0))
				h.fake.SetInterceptor(sidecartest.FailOnce("Nodes", "", fmt.Errorf("fake: %w", slurmclient.ErrBadResponse)))
			},
			check: func(t *testing.T, h *harness) {
				if _, err := h.s.RunOnce(context.Background(), t0.Add(time.Minute)); !errors.Is(err, slurmclient.ErrBadResponse) {
					t.Fatalf("error %v", err)
				}
				if len(h.fake.Writes()) != 0 {
					t.Fatal("wrote after a failed read")
				}
				h.cycle(t0.Add(2 * time.Minute))
				if len(h.fake.Writes()) != 1 {
					t.Errorf("writes %v after recovery", h.fake.Writes())
				}
				if got := testutil.ToFloat64(h.s.m.errors.WithLabelValues("nodes", "bad_response")); got != 1 {
					t.Errorf("read error metric %v", got)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 4, 4, c.busy, c.mod)
			c.setup(h)
			c.check(t, h)
		})
	}
}

// TestRestartKeepsOrder runs a queue through several cycles (some jobs
// released, some dispatched), restarts from the state file, and checks that
// the plan is the same and nothing is written; then both go on and still
// agree.
func TestRestartKeepsOrder(t *testing.T) {
	h := newHarness(t, 4, 4, true, nil)
	names := []string{"short", "mid", "long", "unknownkind"}
	id := 0
	for c := range 6 {
		at := t0.Add(time.Duration(c) * 5 * time.Minute)
		for k := range 7 {
			id++
			h.fake.Submit(pend(fmt.Sprint(id), names[(id*7+k)%4], 1+id%4, at))
		}
		h.cycle(at.Add(time.Minute))
	}
	// Free one node so that a job is dispatched and holds nodes.
	h.fake.Edit("", nil)
	last := t0.Add(31 * time.Minute)
	rep1, err := h.s.Plan(context.Background(), last)
	if err != nil {
		t.Fatal(err)
	}
	h.cycle(last) // the same time: writes the plan's values, saves
	for _, e := range h.s.state.Entries {
		if e.Task != nil && e.Phase == decision.PhQueued && e.Released == math.IsNaN(e.Task.Released) {
			t.Fatalf("job %s: counted released=%v, policy Released=%v", e.ID, e.Released, e.Task.Released)
		}
	}
	h.fake.ResetWrites()
	restarted := h.newSidecar()
	rep2, err := restarted.Plan(context.Background(), last)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep2.Plan) == 0 || len(rep1.Plan) != len(rep2.Plan) {
		t.Fatalf("plan has %d rows before the restart, %d after", len(rep1.Plan), len(rep2.Plan))
	}
	released := 0
	for i := range rep1.Plan {
		a, b := rep1.Plan[i], rep2.Plan[i]
		if a.JobID != b.JobID || a.Stage != b.Stage || math.Abs(a.VirtualRemaining-b.VirtualRemaining) > 1e-6 {
			t.Fatalf("rank %d: %+v before, %+v after the restart", i+1, a, b)
		}
		// Every prediction says what gave it, and the state keeps it.
		if by := prediction.Estimator(a.Estimator); a.Estimator == "" || !by.Valid() || b.Estimator != a.Estimator {
			t.Errorf("rank %d: estimator %q before the restart, %q after", i+1, a.Estimator, b.Estimator)
		}
		if b.PriorityNow != b.PriorityNew {
			t.Errorf("rank %d: job %s would be rewritten %d → %d", i+1, b.JobID, b.PriorityNow, b.PriorityNew)
		}
		if a.Stage != "waiting" {
			released++
		}
	}
	if released == 0 || released == len(rep1.Plan) {
		t.Fatalf("%d of %d jobs released: the test needs both kinds", released, len(rep1.Plan))
	}
	// Both go on for an hour: same decisions.
	h.s.cfg.DryRun, restarted.cfg.DryRun = true, true
	for k := 1; k <= 6; k++ {
		at := last.Add(time.Duration(k) * 10 * time.Minute)
		ra, err1 := h.s.Plan(context.Background(), at)
		rb, err2 := restarted.Plan(context.Background(), at)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for i := range ra.Plan {
			if ra.Plan[i].JobID != rb.Plan[i].JobID || ra.Plan[i].Stage != rb.Plan[i].Stage {
				t.Fatalf("%v later, rank %d: %+v vs %+v", at.Sub(last), i+1, ra.Plan[i], rb.Plan[i])
			}
		}
	}
}

func TestCorruptStateRebuilt(t *testing.T) {
	for _, content := range []string{"{not json", `{"version": 99}`, `{"version":1,"policy":"asrpt","next_seq":1,"jobs":[{"job":{"ID":""},"phase":"queued"}]}`,
		`{"version":1,"policy":"fifo"}`} {
		h := newHarness(t, 2, 4, true, nil)
		if err := os.WriteFile(h.cfg.StateFile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		h.fake.Submit(pend("1", "short", 1, t0))
		s := h.newSidecar()
		if got := testutil.ToFloat64(s.m.stateErrors); got != 1 {
			t.Errorf("%q: state errors %v, want 1", content, got)
		}
		h.s = s
		h.cycle(t0)
		if len(h.fake.Writes()) != 1 {
			t.Errorf("%q: writes %v", content, h.fake.Writes())
		}
		if _, err := readState(h.cfg.StateFile); err != nil {
			t.Errorf("%q: rebuilt state unreadable: %v", content, err)
		}
		moved, _ := filepath.Glob(h.cfg.StateFile + ".corrupt-*")
		if len(moved) != 1 {
			t.Errorf("%q: corrupt file not moved aside: %v", content, moved)
		}
	}
}

func TestGiveback(t *testing.T) {
	h := newHarness(t, 2, 4, true, nil)
	for i := range 4 {
		h.fake.Submit(pend(fmt.Sprint(i+1), "mid", 1, t0))
	}
	h.cycle(t0.Add(time.Minute))
	h.fake.Edit("2", func(j *slurmclient.Job) { j.Priority = 7 }) // an admin's
	h.fake.Submit(pend("9", "mid", 1, t0))                        // never written
	rep, err := h.s.Giveback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rep.Returned, decision.CompareID)
	if !slices.Equal(rep.Returned, []string{"1", "3", "4"}) || rep.Skipped != 1 {
		t.Errorf("returned %v skipped %d", rep.Returned, rep.Skipped)
	}
	if p := h.priorities("1", "2", "3", "4"); !slices.Equal(p, []uint32{1000, 7, 1000, 1000}) {
		t.Errorf("priorities after giveback %v", p)
	}
	// From the state file, with the sidecar stopped.
	h2 := newHarness(t, 2, 4, true, nil)
	for i := range 3 {
		h2.fake.Submit(pend(fmt.Sprint(i+1), "mid", 1, t0))
	}
	h2.cycle(t0.Add(time.Minute))
	stray := pend("8", "mid", 1, t0)
	stray.Priority = decision.LowBand.Lo + 5
	h2.fake.Submit(stray)
	rep, err = GivebackFile(context.Background(), h2.fake, h2.cfg.StateFile, h2.cfg.Scope, true, zerolog.Nop())
	if err != nil || len(rep.Returned) != 4 {
		t.Errorf("from file: %v, returned %v", err, rep.Returned)
	}
	st, err := readState(h2.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range st.Jobs {
		if j.Priority != 0 {
			t.Errorf("job %s: state still records priority %d", j.Job.ID, j.Priority)
		}
	}
	// A release that keeps failing leaves the job held and says so.
	h3 := newHarness(t, 2, 4, true, nil)
	h3.fake.Submit(pend("1", "mid", 1, t0))
	h3.cycle(t0.Add(time.Minute))
	h3.fake.SetInterceptor(func(c sidecartest.Call) error {
		if c.Update.Hold != nil && !*c.Update.Hold {
			return fmt.Errorf("fake: %w", slurmclient.ErrServer)
		}
		return nil
	})
	rep, err = h3.s.Giveback(context.Background())
	if err == nil || rep.Failed["1"] == nil || h3.fake.Calls("UpdateJob") != 1+1+releaseAttempts {
		t.Errorf("failing release: err %v, report %+v, %d updates", err, rep, h3.fake.Calls("UpdateJob"))
	}
}

// TestDispatchGrace: a job whose turn has come but that Slurm does not
// start on its nodes is placed again elsewhere after the grace period, and
// keeps the top of the order.
func TestDispatchGrace(t *testing.T) {
	h := newHarness(t, 3, 4, false, func(c *Config) { c.DispatchGrace = time.Minute })
	h.fake.Submit(pend("1", "short", 4, t0))
	h.cycle(t0)
	j, _ := h.fake.Job("1")
	if len(j.RequiredNodes) != 1 || !decision.HighBand.Contains(j.Priority) {
		t.Fatalf("nodes %v priority %d", j.RequiredNodes, j.Priority)
	}
	first := j.RequiredNodes[0]
	h.fake.ResetWrites()
	h.cycle(t0.Add(30 * time.Second)) // within the grace: nothing changes
	if len(h.fake.Writes()) != 0 {
		t.Fatalf("writes within the grace: %v", h.fake.Writes())
	}
	h.cycle(t0.Add(2 * time.Minute))
	j, _ = h.fake.Job("1")
	if len(j.RequiredNodes) != 1 || j.RequiredNodes[0] == first {
		t.Errorf("after the grace: nodes %v, want one node other than %s", j.RequiredNodes, first)
	}
	if got := testutil.ToFloat64(h.s.m.replaced); got != 1 {
		t.Errorf("replacements %v", got)
	}
}

// TestStartedBeforeItsTurn: Slurm starts a job the policy still holds as
// waiting; the job gets no more writes, is withdrawn from the policy once
// decision.StartedCycles lists show it running, takes no GPUs from the others, and
// is forgotten decision.AbsentCycles lists after it left the queue.
func TestStartedBeforeItsTurn(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil)
	h.fake.Submit(pend("1", "mid", 2, t0))
	h.fake.Submit(pend("2", "mid", 2, t0.Add(time.Second)))
	h.cycle(t0)
	// Slurm's backfill starts job 2 on its own; job 1 is still waiting.
	h.fake.Edit("2", func(j *slurmclient.Job) { j.State = "RUNNING" })
	h.fake.ResetWrites()
	h.cycle(t0.Add(time.Minute))
	if writesTo(h.fake.Writes(), "2") != 0 {
		t.Errorf("wrote to a running job: %v", h.fake.Writes())
	}
	// Two GPUs free up: job 1 is dispatched; job 2, withdrawn, is not.
	h.fake.EditNode("node0001", func(n *slurmclient.Node) { n.GPUsUsed, n.State = 0, "IDLE" })
	rep := h.cycle(t0.Add(time.Hour))
	if rep.Dispatched != 1 {
		t.Errorf("dispatched %d, want job 1 only", rep.Dispatched)
	}
	if e := h.s.state.Entries["2"]; e == nil || e.Task != nil {
		t.Errorf("job 2 still in the policy after its turn: %+v", e)
	}
	h.fake.Finish("2", 0, 0)
	for i := range decision.AbsentCycles {
		if _, ok := h.s.state.Entries["2"]; !ok {
			t.Fatalf("job 2 forgotten after %d lists without it", i)
		}
		h.cycle(t0.Add(2*time.Hour + time.Duration(i)*time.Minute))
	}
	if _, ok := h.s.state.Entries["2"]; ok {
		t.Errorf("job 2 still tracked after %d lists without it: %+v", decision.AbsentCycles, h.s.state.Entries["2"])
	}
}

// TestParkedJobRejoinsItsPlace: a waiting job that leaves the scope for a
// while (held with its priority kept, here) is withdrawn from the policy
// and, when eligible again, rejoins with the virtual work it had left (not
// its full size, as a new arrival would), without a rewrite when its place
// is unchanged.
func TestParkedJobRejoinsItsPlace(t *testing.T) {
	h := newHarness(t, 2, 4, true, nil)
	// Virtual sizes on 8 GPUs: long 750 s, mid 150 s, day 10800 s, short 15 s.
	for i, name := range []string{"long", "mid", "day", "short"} {
		h.fake.Submit(pend(fmt.Sprint(i+1), name, 1+i%2, t0.Add(time.Duration(i)*time.Second)))
	}
	h.cycle(t0.Add(time.Minute))
	at := t0.Add(2 * time.Minute) // short done after 15 s; mid has 105 s left
	before, err := h.s.Plan(context.Background(), at)
	if err != nil {
		t.Fatal(err)
	}
	left := -1.0
	for _, r := range before.Plan {
		if r.JobID == "2" {
			left = r.VirtualRemaining
		}
	}
	if math.Abs(left-105) > 1e-6 {
		t.Fatalf("job 2 has %v s of virtual work left, want 105: %+v", left, before.Plan)
	}
	h.cycle(at)
	h.fake.Edit("2", func(j *slurmclient.Job) { j.Held = true })
	h.fake.ResetWrites()
	rep := h.cycle(at)
	if e := h.s.state.Entries["2"]; e == nil || e.Task != nil || !e.Parked {
		t.Fatalf("held job not parked: %+v", e)
	}
	if rep.Jobs["managed"] != 3 || writesTo(h.fake.Writes(), "2") != 0 {
		t.Fatalf("managed %d, writes %v", rep.Jobs["managed"], h.fake.Writes())
	}
	// Released 8 minutes later: the others moved on, job 2 did not.
	later := at.Add(8 * time.Minute)
	h.cycle(later)
	h.fake.Edit("2", func(j *slurmclient.Job) { j.Held = false })
	h.fake.ResetWrites()
	h.cycle(later)
	after, err := h.s.Plan(context.Background(), later)
	if err != nil {
		t.Fatal(err)
	}
	// short (released, the cluster is busy) stays first; job 2 with 105 s
	// left goes before long (270 s left), as before the hold.
	var order []string
	for _, r := range after.Plan {
		order = append(order, r.JobID)
	}
	if !slices.Equal(order, []string{"4", "2", "1", "3"}) || math.Abs(after.Plan[1].VirtualRemaining-105) > 1e-6 {
		t.Errorf("after the hold: %+v, want 4 2 1 3 with 105 s left for job 2", after.Plan)
	}
	if ws := h.fake.Writes(); writesTo(ws, "2") != 0 {
		t.Errorf("job 2 rewritten after it rejoined its place: %v", ws)
	}
}

// startingFake is the fake Slurm with the REST client's guard: UpdateJob
// re-reads the job first and refuses one that is no longer pending. The
// jobs in started read as running, as if Slurm had started them between
// the cycle's read and the write.
type startingFake struct {
	*sidecartest.Fake
	started map[string]bool
}

func (f startingFake) UpdateJob(ctx context.Context, id string, u slurmclient.JobUpdate) error {
	if f.started[id] {
		return fmt.Errorf("fake: job %s: %w: it is RUNNING", id, slurmclient.ErrNotPending)
	}
	return f.Fake.UpdateJob(ctx, id, u)
}

// TestNoNodeListToStartedJob: a job whose turn has come but that Slurm
// started since the cycle's read gets no node list (22.05 would resize the
// running job) and no priority; a job still pending gets both.
func TestNoNodeListToStartedJob(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	sf := startingFake{Fake: h.fake, started: map[string]bool{"1": true}}
	s, err := New(h.cfg, Options{Cluster: cluster.Uniform(2, 4), Slurm: sf, Predictor: h.pred, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	h.fake.Submit(pend("1", "short", 4, t0))
	h.fake.Submit(pend("2", "short", 4, t0.Add(time.Second)))
	rep, err := s.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if n := writesTo(h.fake.Writes(), "1"); n != 0 {
		t.Errorf("%d writes to the job Slurm started: %v", n, h.fake.Writes())
	}
	if ws := h.fake.Writes(); writesTo(ws, "2") != 1 || ws[0].Update.RequiredNodes == nil || ws[0].Update.Priority == nil {
		t.Errorf("writes %v to the pending job, want one of nodes and priority", ws)
	}
	if rep.Failed["not_pending"] != 1 || testutil.ToFloat64(s.m.failures.WithLabelValues("nodes", "not_pending")) != 1 {
		t.Errorf("failures %v", rep.Failed)
	}
}

// TestNoPriorityAfterFailedNodeList: when the node list write to a job
// fails because the job is gone, its priority is not written in the same
// cycle (one failed write, not two).
func TestNoPriorityAfterFailedNodeList(t *testing.T) {
	for _, c := range []struct {
		err       error
		wantCalls int
	}{
		{fmt.Errorf("fake: slurm error 2017: %w", slurmclient.ErrJobGone), 1},
		{fmt.Errorf("fake: slurm error 2084: %w", slurmclient.ErrServer), 1},
		{fmt.Errorf("fake: bad node: %w", slurmclient.ErrInvalid), 2},
	} {
		t.Run(Reason(c.err).String(), func(t *testing.T) {
			h := newHarness(t, 2, 4, false, nil)
			h.fake.Submit(pend("1", "short", 4, t0))
			h.fake.SetInterceptor(sidecartest.FailOnce("UpdateJob", "1", c.err))
			rep := h.cycle(t0)
			if rep.Failed[Reason(c.err).String()] != 1 || h.fake.Calls("UpdateJob") != c.wantCalls {
				t.Errorf("failures %v, %d updates tried, want %d", rep.Failed, h.fake.Calls("UpdateJob"), c.wantCalls)
			}
		})
	}
}

// TestStateEstimatorNames: a state file's estimator names come back as
// they were saved; one that is not a name of ours (the file is the
// daemon's, but shown to admins) is dropped, not shown.
func TestStateEstimatorNames(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	data := fmt.Sprintf(`{"version":%d,"policy":"asrpt","next_seq":3,"jobs":[`+
		`{"job":{"ID":"1"},"seq":1,"phase":"queued","estimator":"\u001b[31mred"},`+
		`{"job":{"ID":"2"},"seq":2,"phase":"queued","estimator":"forest"}]}`, decision.StateVersion)
	if err := os.WriteFile(h.cfg.StateFile, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s := h.newSidecar()
	a, b := s.state.Entries["1"], s.state.Entries["2"]
	if a == nil || b == nil {
		t.Fatalf("state not restored: %v", s.state.Entries)
	}
	if a.Est.Estimator != "" || b.Est.Estimator != prediction.ByForest {
		t.Errorf("estimators %q and %q restored, want \"\" and forest", a.Est.Estimator, b.Est.Estimator)
	}
}
