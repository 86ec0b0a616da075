package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"

	"github.com/asrpt/asrpt/internal/golden"
)

var updatePlan = flag.Bool("update-plan", false, "rewrite testdata/plan.golden")

func TestWritePlanGolden(t *testing.T) {
	rows := []decision.PlanRow{
		{JobID: "17", User: "ana", Name: "bert-ft", Shape: "plain", GPUs: 8, Predicted: 3725, Known: true, Estimator: "forest", Stage: "dispatched", Rank: 1,
			PriorityNow: 1000, PriorityNew: 1610612735, Nodes: []string{"gpu01", "gpu02"},
			Profile: "bert-large", ProfileSource: "comment", Heavy: true, AlphaMin: 0.137, Alpha: 0.152},
		{JobID: "30", User: "dee", Name: "sweep", Shape: "array_remainder", GPUs: 1, Predicted: 610, Known: true, Estimator: "group", Stage: "dispatched",
			Rank: 2, PriorityNow: 1000, PriorityNew: 1610547199, Reason: reason.NodeListShape, Note: "array: a node list would pin every task"},
		{JobID: "18", User: "bo", Name: "resnet", Shape: "plain", GPUs: 1, Predicted: 45, Known: true, Stage: "released", Reason: reason.NoRoom, Rank: 3,
			PriorityNow: 1610547199, PriorityNew: 1610547199, Profile: "data-parallel", ProfileSource: "default",
			ProfileProblem: "bad asrpt: word in the job comment: \"asrpt:gpt\": want asrpt:model=NAME"},
		{JobID: "21", User: "cy", Name: "new-thing", Shape: "het_leader", GPUs: 2, Predicted: 200000, Estimator: "user", Stage: "waiting", Reason: reason.VirtualQueue, VirtualRemaining: 612.4,
			Rank: 4, PriorityNow: 1000, PriorityNew: 545259520, Profile: "vgg16", ProfileSource: "rule"},
		{JobID: "22", User: "cy", Name: "new-thing", Shape: "het_component", GPUs: 1, Stage: "left_alone", PriorityNow: 545259520,
			PriorityNew: 545259520, Reason: reason.HetComponent, Note: "heterogeneous job component (the job is ranked through its leader)"},
	}
	var buf bytes.Buffer
	if err := writePlan(&buf, rows); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "plan.golden"), buf.Bytes(), *updatePlan)

	// Factor mode: the priority stays the priority plugin's; the site
	// factor asrpt wrote and the one it writes.
	u := func(v uint32) *uint32 { return &v }
	rows = []decision.PlanRow{
		{JobID: "17", User: "ana", Name: "bert-ft", Shape: "plain", GPUs: 8, Predicted: 3725, Known: true, Estimator: "forest", Stage: "dispatched", Rank: 1,
			PriorityNow: 11200, PriorityNew: 11200, SiteFactorNow: u(9500), SiteFactorNew: u(10000), Nodes: []string{"gpu01", "gpu02"}},
		{JobID: "18", User: "bo", Name: "resnet", Shape: "plain", GPUs: 1, Predicted: 45, Known: true, Stage: "waiting", Reason: reason.VirtualQueue, Rank: 2,
			VirtualRemaining: 30, PriorityNow: 6100, PriorityNew: 6100, SiteFactorNow: u(5000), SiteFactorNew: u(5000)},
		{JobID: "19", User: "cy", Name: "sweep", Shape: "plain", GPUs: 1, Predicted: 610, Known: true, Stage: "waiting", Reason: reason.VirtualQueue, Rank: 3,
			VirtualRemaining: 610, PriorityNow: 1100, PriorityNew: 1100, SiteFactorNow: u(0), SiteFactorNew: u(0)},
	}
	buf.Reset()
	if err := writePlan(&buf, rows); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "plan-factor.golden"), buf.Bytes(), *updatePlan)

	// asrpt-preempt: the running jobs, whether asrpt may stop them, and why
	// not.
	yes, no := true, false
	rows = []decision.PlanRow{
		{JobID: "40", User: "ana", Name: "train-llm", Shape: "plain", GPUs: 8, Predicted: 86400, Known: true, Estimator: "forest", Stage: "running",
			PriorityNow: 5000, PriorityNew: 5000, Preemptible: &yes, Stop: "USR1@120", StopFrom: "comment", Preemptions: 1},
		{JobID: "41", User: "bo", Name: "train-vit", Shape: "plain", GPUs: 4, Predicted: 7200, Known: true, Stage: "stopping",
			PriorityNow: 5000, PriorityNew: 5000, Preemptible: &no, Stop: "F:USR2@60", StopFrom: "preemption.rule[2]", Preemptions: 2,
			Reason: reason.Stopping, Note: "stop signal USR2 sent at 2026-12-04T10:00:00Z; waiting for its requeue"},
		{JobID: "43", User: "dee", Name: "train-x", Shape: "plain", GPUs: 2, Predicted: 600, Known: true, Stage: "waiting", Reason: reason.VirtualQueue, Rank: 1,
			VirtualRemaining: 75, PriorityNow: 5000, PriorityNew: 5000,
			PreemptProblem: "bad asrpt: word in the job comment: \"asrpt:preempt=KILL@10\": the signal must be one of USR1, USR2, TERM, INT, HUP"},
		{JobID: "42", User: "cy", Name: "eval", Shape: "plain", GPUs: 1, Stage: "running", PriorityNow: 5000, PriorityNew: 5000,
			Preemptible: &no, Reason: reason.NotInPolicy, Note: "not running in asrpt's policy (running before the sidecar started, never ranked pending, or withdrawn): never preempted"},
	}
	buf.Reset()
	if err := writePlan(&buf, rows); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "plan-preempt.golden"), buf.Bytes(), *updatePlan)
}

func TestSidecarCheck(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[slurm]\nurl = \"ftp://x\"\n[sidecar]\nintervall = \"1s\"\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{"sidecar", "--check", "--config", bad}, &out, &errOut); code != 1 {
		t.Errorf("exit %d for a bad file", code)
	}
	for _, want := range []string{"bad.toml:2: slurm.url", "bad.toml:4: sidecar.intervall: unknown key", "slurm.conf_dir"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// A good file with its files present.
	conf := filepath.Join(dir, "slurm")
	os.MkdirAll(conf, 0o755)
	os.WriteFile(filepath.Join(conf, "slurm.conf"), []byte("ClusterName=t\nGresTypes=gpu\nNodeName=n[1-2] Gres=gpu:4 CPUs=8\nPartitionName=gpu Nodes=n[1-2]\n"), 0o644)
	os.WriteFile(filepath.Join(conf, "gres.conf"), []byte("NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-3]\n"), 0o644)
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("[slurm]\nurl = \"unix:///run/s.sock\"\nconf_dir = \""+conf+"\"\n[sidecar]\nstate_file = \""+filepath.Join(dir, "state.json")+"\"\n"), 0o644)
	out.Reset()
	if code := run([]string{"sidecar", "--check", "--config", good}, &out, &errOut); code != 0 {
		t.Errorf("exit %d for a good file:\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "ok (2 nodes, 8 GPUs") {
		t.Errorf("output %q", out.String())
	}
	// Factor mode (the default): the release cannot be told offline.
	if !strings.Contains(out.String(), `warning: sidecar.write_mode = "factor" needs Slurm 24.11 or later`) {
		t.Errorf("offline check of factor mode does not say the release is unchecked:\n%s", out.String())
	}
}

func TestErrorText(t *testing.T) {
	if got := errorText("sidecar", errors.New("sidecar: cluster model: x")); got != "cluster model: x" {
		t.Errorf("errorText = %q", got)
	}
	if got := errorText("plan", errors.New("sidecar: x")); got != "sidecar: x" {
		t.Errorf("errorText of another prefix = %q", got)
	}
	for n, want := range map[int]string{0: "0 problems", 1: "1 problem", 2: "2 problems"} {
		if got := plural(n, "problem"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
