package sidecar

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// preemptHarness is one node of 4 GPUs under asrpt-preempt (exempt for a
// minute after each start) running two 2-GPU week-long jobs the policy
// started: job 1 with comment1, job 2 with comment2, both requeueable
// unless noRequeue.
func preemptHarness(t *testing.T, comment1, comment2 string, noRequeue bool, mod func(*Config, *sidecartest.Fake)) *harness {
	t.Helper()
	h := newHarness(t, 1, 4, false, func(c *Config) {
		c.Policy = "asrpt-preempt"
		c.Params.PreemptExempt = 60
	})
	if mod != nil {
		mod(&h.cfg, h.fake)
		h.s = h.newSidecar()
	}
	for i, c := range []string{comment1, comment2} {
		j := pend([]string{"1", "2"}[i], "week", 2, t0)
		j.Comment, j.Requeue = c, !noRequeue
		h.fake.Submit(j)
	}
	h.cycle(t0)
	for _, id := range []string{"1", "2"} {
		if err := h.fake.Start(id, []string{"node0001"}, 2); err != nil {
			t.Fatal(err)
		}
	}
	h.cycle(t0.Add(time.Minute))
	for _, id := range []string{"1", "2"} {
		if e := h.s.state.Entries[id]; e == nil || e.Phase != decision.PhRunning {
			t.Fatalf("job %s not running in the policy: %+v", id, e)
		}
	}
	return h
}

// submitHead submits job 3, a short 2-GPU job that does not fit, two
// minutes before at, and runs a cycle then: A-SRPT's virtual machine
// releases it a moment after its arrival.
func (h *harness) submitHead(at time.Time) {
	h.t.Helper()
	h.fake.Submit(pend("3", "short", 2, at.Add(-2*time.Minute)))
	if rep := h.cycle(at.Add(-2 * time.Minute)); rep.Preempted != 0 {
		h.t.Fatalf("preempted at the head's arrival")
	}
}

// TestPreemptLive: the head of the queue cannot start; the running job
// that opted in (not the other) is recorded stopping in the state, then
// sent its declared signal once; it requeues, waits ranked in the policy
// with its node list cleared, and is counted requeued.
func TestPreemptLive(t *testing.T) {
	h := preemptHarness(t, "asrpt:preempt=USR1@120", "", false, nil)
	var unrecorded []string
	h.fake.SetInterceptor(func(c sidecartest.Call) error {
		if c.Method != "SignalJob" {
			return nil
		}
		st, err := readState(h.cfg.StateFile)
		if err != nil {
			unrecorded = append(unrecorded, err.Error())
			return nil
		}
		for _, j := range st.Jobs {
			if j.Job.ID == c.JobID && j.Phase == "stopping" && j.SignalledAt > 0 && j.Preemptions == 1 && j.Stop == "USR1@120" {
				return nil
			}
		}
		unrecorded = append(unrecorded, c.JobID)
		return nil
	})
	at := t0.Add(2 * time.Hour)
	h.submitHead(at)
	rep := h.cycle(at)
	want := []sidecartest.Signal{{JobID: "1", Signal: "USR1", Delivery: slurmclient.DeliverSteps}}
	if got := h.fake.Signals(); !slices.Equal(got, want) || rep.Preempted != 1 {
		t.Fatalf("signals %v (preempted %d), want %v", got, rep.Preempted, want)
	}
	if len(unrecorded) > 0 {
		t.Errorf("signals sent before the state recorded them: %v", unrecorded)
	}
	if e := h.s.state.Entries["1"]; e.Phase != decision.PhStopping || e.Task == nil || !e.Task.Blocked {
		t.Errorf("job 1 after its stop: phase %v task %+v", e.Phase, e.Task)
	}
	if e := h.s.state.Entries["3"]; e.Phase != decision.PhDispatched {
		t.Errorf("head not dispatched: %v", e.Phase)
	}
	// The plan shows, for each running job, whether it may be preempted.
	plan, err := h.s.Plan(context.Background(), at.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]string{}
	for _, r := range plan.Plan {
		if r.Preemptible != nil {
			notes[r.JobID] = r.Stage + " " + r.Note
		}
	}
	if !strings.HasPrefix(notes["1"], "stopping stop signal USR1 sent") || !strings.Contains(notes["2"], "not opted in") {
		t.Errorf("running rows: %q", notes)
	}

	// Within its grace, still running: no second signal.
	h.cycle(at.Add(time.Minute))
	if n := len(h.fake.Signals()); n != 1 {
		t.Errorf("%d signals within the grace", n)
	}
	// It checkpoints and requeues itself.
	h.fake.Requeue("1", 2, at.Add(3*time.Minute))
	if err := h.fake.Start("3", []string{"node0001"}, 2); err != nil {
		t.Fatal(err)
	}
	h.fake.ResetWrites()
	h.cycle(at.Add(90 * time.Second))
	e := h.s.state.Entries["1"]
	if e.Phase != decision.PhQueued || e.Task == nil || e.Task.Preemptions != 1 || !e.Task.Blocked {
		t.Errorf("requeued job: phase %v task %+v", e.Phase, e.Task)
	}
	if got := testutil.ToFloat64(h.s.m.preemptions.WithLabelValues(decision.OutcomeRequeued)); got != 1 {
		t.Errorf("requeued outcomes %v", got)
	}
	if j, _ := h.fake.Job("1"); len(j.RequiredNodes) != 0 {
		t.Errorf("requeued job keeps its node list %v; writes %v", j.RequiredNodes, h.fake.Writes())
	}
	if n := len(h.fake.Signals()); n != 1 || testutil.ToFloat64(h.s.m.signals) != 1 {
		t.Errorf("%d signals", n)
	}
}

// TestPreemptRefused: no signal goes to a job that did not opt in, that
// Slurm may not requeue, whose declared delivery the release cannot make,
// while the cluster has room, in a dry run, or when the state that would
// record it cannot be saved.
func TestPreemptRefused(t *testing.T) {
	cases := []struct {
		name      string
		comment   string
		mod       func(*Config, *sidecartest.Fake)
		noRequeue bool   // --no-requeue: the record says Slurm may not requeue it
		why       string // job 1's note, when not preemptible
		code      reason.Code
		dry       bool
		held      bool
		signaled  []sidecartest.Signal
	}{
		{name: "bad word", comment: "asrpt:preempt=KILL@10", why: "the signal must be one of", code: reason.BadPreemptWord},
		{name: "no word", comment: "asrpt:model=resnet50", why: "not opted in", code: reason.NotOptedIn},
		{name: "no requeue", comment: "asrpt:preempt=USR1@60", noRequeue: true, why: "may not requeue", code: reason.NoRequeue},
		{name: "22.05 steps", comment: "asrpt:preempt=USR1@60",
			mod: func(_ *Config, f *sidecartest.Fake) { f.WholeJobSignalsOnly = true }, why: "cannot send a signal to the job's steps", code: reason.SignalUnsupported},
		{name: "22.05 full job", comment: "asrpt:preempt=F:USR1@60",
			mod:      func(_ *Config, f *sidecartest.Fake) { f.WholeJobSignalsOnly = true },
			signaled: []sidecartest.Signal{{JobID: "1", Signal: "USR1", Delivery: slurmclient.DeliverAll}}},
		{name: "rule", comment: "",
			mod: func(c *Config, _ *sidecartest.Fake) {
				c.Preemption.Rules = []PreemptRule{{Account: "other", Stop: mustStop(t, "USR2@5")}, {Family: "week", Stop: mustStop(t, "B:TERM@30")}}
			},
			// Both opted in by the second rule; the head needs one's GPUs.
			signaled: []sidecartest.Signal{{JobID: "1", Signal: "TERM", Delivery: slurmclient.DeliverBatch}}},
		{name: "dry run", comment: "asrpt:preempt=USR1@60", mod: func(c *Config, _ *sidecartest.Fake) { c.DryRun = true }, dry: true},
		{name: "state not saved", comment: "asrpt:preempt=USR1@60", held: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := preemptHarness(t, c.comment, "", c.noRequeue, c.mod)
			if c.held {
				h.s.cfg.StateFile = "/dev/null/state.json"
			}
			at := t0.Add(2 * time.Hour)
			h.submitHead(at)
			rep := h.cycle(at)
			if got := h.fake.Signals(); !slices.Equal(got, c.signaled) {
				t.Errorf("signals %v, want %v", got, c.signaled)
			}
			if c.why != "" {
				if e := h.s.state.Entries["1"]; !strings.Contains(e.StopWhy.Detail, c.why) || e.StopWhy.Code != c.code || e.Phase != decision.PhRunning {
					t.Errorf("job 1: phase %v, why %q, want %q", e.Phase, e.StopWhy, c.why)
				}
				if rep.Preempted != 0 {
					t.Errorf("preempted %d", rep.Preempted)
				}
			}
			if c.dry || c.held {
				if rep.Preempted != 1 || h.fake.Calls("SignalJob") != 0 {
					t.Errorf("preempted %d, signal calls %d", rep.Preempted, h.fake.Calls("SignalJob"))
				}
				if e := h.s.state.Entries["1"]; e.SignalSent {
					t.Errorf("job 1 marked signalled")
				}
				// The job leaves the policy: never signalled later.
				h.s.cfg.StateFile = h.cfg.StateFile
				h.cycle(at.Add(time.Minute))
				if e := h.s.state.Entries["1"]; e.Phase != decision.PhIdle || h.fake.Calls("SignalJob") != 0 {
					t.Errorf("after: phase %v, signal calls %d", e.Phase, h.fake.Calls("SignalJob"))
				}
			}
		})
	}
}

func mustStop(t *testing.T, s string) jobword.Stop {
	t.Helper()
	st, err := jobword.ParseStop(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPreemptOutcomes: a signalled job that ends within its grace counts
// as finished; one still running after its grace ignored the signal and is
// never signalled again; one that requeues while the sidecar was
// restarted arrives again with its count of preemptions.
func TestPreemptOutcomes(t *testing.T) {
	at := t0.Add(2 * time.Hour)
	cases := []struct {
		name    string
		after   func(h *harness) // what the job does after the signal
		outcome string
		check   func(t *testing.T, h *harness)
	}{
		{name: "finished", outcome: decision.OutcomeFinished, after: func(h *harness) {
			h.fake.Finish("1", 2, 0)
			for i := range decision.AbsentCycles {
				h.cycle(at.Add(time.Duration(i+1) * time.Minute))
			}
		}, check: func(t *testing.T, h *harness) {
			if _, ok := h.s.state.Entries["1"]; ok {
				t.Errorf("finished job still tracked")
			}
		}},
		{name: "ignored", outcome: decision.OutcomeIgnored, after: func(h *harness) {
			h.cycle(at.Add(2 * time.Minute))
			if e := h.s.state.Entries["1"]; e.Phase != decision.PhStopping {
				t.Fatalf("within grace + slack: phase %v", e.Phase)
			}
			for i := range 3 {
				h.cycle(at.Add(time.Duration(10+i) * time.Minute))
			}
		}, check: func(t *testing.T, h *harness) {
			if e := h.s.state.Entries["1"]; e.Phase != decision.PhIdle || e.Task != nil || e.CanStop() {
				t.Errorf("job that ignored its signal: phase %v task %v", e.Phase, e.Task)
			}
		}},
		{name: "requeued across a restart", outcome: decision.OutcomeRequeued, after: func(h *harness) {
			h.s = h.newSidecar() // restores the state saved before the signal
			h.fake.Requeue("1", 2, at.Add(3*time.Minute))
			h.cycle(at.Add(time.Minute))
		}, check: func(t *testing.T, h *harness) {
			if e := h.s.state.Entries["1"]; e.Phase != decision.PhQueued || e.Task == nil || e.Task.Preemptions != 1 {
				t.Errorf("requeued job after a restart: phase %v task %+v", e.Phase, e.Task)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := preemptHarness(t, "asrpt:preempt=USR1@60", "", false, nil)
			h.submitHead(at)
			h.cycle(at)
			c.after(h)
			if n := len(h.fake.Signals()); n != 1 {
				t.Errorf("%d signals, want 1", n)
			}
			if got := testutil.ToFloat64(h.s.m.preemptions.WithLabelValues(c.outcome)); got != 1 {
				t.Errorf("%s outcomes %v, want 1", c.outcome, got)
			}
			c.check(t, h)
		})
	}
}

func TestPreemptionConfig(t *testing.T) {
	const head = "[slurm]\nurl = \"unix:///s\"\n[policy]\nname = \"asrpt-preempt\"\npreempt_exempt = \"30m\"\nmax_preemptions = 2\n"
	for _, tc := range []struct {
		name, body string
		rules      []PreemptRule
		problems   []string // each "line:key: text"
	}{
		{"rules in order, family normalised",
			"[[preemption.rule]]\nfamily = \"train-llm-2024-11-01\"\nstop = \"usr1@120\"\n[[preemption.rule]]\naccount = \"vision\"\nqos = \"long\"\nstop = \"F:SIGUSR2@300\"\n",
			[]PreemptRule{{Family: "train-llm", Stop: jobword.Stop{Signal: "USR1", Grace: 120}},
				{Account: "vision", QOS: "long", Stop: jobword.Stop{Signal: "USR2", Grace: 300, To: jobword.ToFull}}}, nil},
		{"each bad rule named with its header's line",
			"[[preemption.rule]]\nfamily = \"a\"\nstop = \"KILL@10\"\n[[preemption.rule]]\nstop = \"USR1@10\"\n[[preemption.rule]]\nqos = \"x\"\n[[preemption.rule]]\nqos = \"x\"\nstop = \"USR1@10\"\nmodel = \"gpt\"\n[[preemption.rule]]\naccount = 3\nstop = \"USR1@0\"\n",
			nil, []string{
				"7: preemption.rule[1]: stop: bad asrpt: word",
				"10: preemption.rule[2]: a rule needs a family, an account or a qos",
				"12: preemption.rule[3]: stop: missing",
				"14: preemption.rule[4]: model: unknown key (want family, account, qos, stop)",
				"18: preemption.rule[5]: account: want a string",
			}},
		{"not an array of tables", "[preemption]\nrule = 1\n", nil, []string{"8: preemption.rule: want [[preemption.rule]] tables"}},
		{"unknown key", "[preemption]\nenabled = true\n", nil, []string{"8: preemption.enabled: unknown key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(head+tc.body), "asrpt.toml")
			if len(tc.problems) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(c.Preemption.Rules, tc.rules) {
					t.Errorf("rules %+v, want %+v", c.Preemption.Rules, tc.rules)
				}
				if c.Params.PreemptExempt != 1800 || c.Params.MaxPreemptions != 2 {
					t.Errorf("params %+v", c.Params)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %v", tc.problems)
			}
			for _, p := range tc.problems {
				if !strings.Contains(err.Error(), "asrpt.toml:"+p) {
					t.Errorf("error\n%v\nlacks %q", err, p)
				}
			}
		})
	}
	// Rules without the policy that reads them are a warning.
	c, err := ParseConfig([]byte("[slurm]\nurl = \"unix:///s\"\n[[preemption.rule]]\nqos = \"x\"\nstop = \"USR1@9\"\n"), "asrpt.toml")
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "opt nobody in") {
		t.Errorf("warnings %q", w)
	}
}

// TestPreemptAdopted: a waiting job that Slurm starts before its turn
// (its GPUs came free before A-SRPT's virtual machine released it) is
// taken into the policy's running jobs on the GPUs Slurm gave it, and is
// preempted for a head that cannot start, as a job the policy started.
func TestPreemptAdopted(t *testing.T) {
	h := newHarness(t, 1, 4, true, func(c *Config) {
		c.Policy = "asrpt-preempt"
		c.Params.PreemptExempt = 60
	})
	for _, id := range []string{"1", "2"} {
		j := pend(id, "week", 2, t0)
		j.Comment, j.Requeue = "asrpt:preempt=USR2@60", true
		h.fake.Submit(j)
	}
	h.cycle(t0)
	// The node frees up; Slurm starts both on its own.
	h.fake.EditNode("node0001", func(n *slurmclient.Node) { n.GPUsUsed, n.State = 0, "IDLE" })
	for _, id := range []string{"1", "2"} {
		if err := h.fake.Start(id, []string{"node0001"}, 2); err != nil {
			t.Fatal(err)
		}
	}
	for i := range decision.StartedCycles {
		h.cycle(t0.Add(time.Duration(i+1) * time.Second))
	}
	for _, id := range []string{"1", "2"} {
		e := h.s.state.Entries[id]
		if e.Phase != decision.PhRunning || e.Task == nil || len(e.Task.Placement.Slots) != 1 {
			t.Fatalf("job %s started by Slurm: phase %v task %+v", id, e.Phase, e.Task)
		}
	}
	at := t0.Add(2 * time.Hour)
	h.submitHead(at)
	h.cycle(at)
	want := []sidecartest.Signal{{JobID: "1", Signal: "USR2", Delivery: slurmclient.DeliverSteps}}
	if got := h.fake.Signals(); !slices.Equal(got, want) {
		t.Errorf("signals %v, want %v", got, want)
	}
}

// TestPreemptPlanPending: under asrpt-preempt the plan shows, for each
// ranked pending job, the stop it declared, or why the word it wrote does
// not opt it in.
func TestPreemptPlanPending(t *testing.T) {
	h := newHarness(t, 1, 4, true, func(c *Config) { c.Policy = "asrpt-preempt" })
	for id, comment := range map[string]string{"1": "asrpt:preempt=KILL@10", "2": "asrpt:preempt=B:USR1@60 asrpt:model=resnet50", "3": ""} {
		j := pend(id, "week", 2, t0)
		j.Comment, j.Requeue = comment, true
		h.fake.Submit(j)
	}
	rep, err := h.s.Plan(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rep.Plan {
		got[r.JobID] = r.Stop + "|" + r.StopFrom + "|" + r.PreemptProblem
	}
	if !strings.Contains(got["1"], "the signal must be one of") || got["2"] != "B:USR1@60|comment|" || got["3"] != "||" {
		t.Errorf("plan rows %q", got)
	}
}
