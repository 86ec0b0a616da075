package sidecar

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/golden"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

var updateDecide = flag.Bool("update", false, "rewrite testdata/decision.Decide/*.txt")

// decideCase is a tiny snapshot: nodes × GPUs, the GPUs in use per node
// (drawn like the placement tests draw topologies: "4.0" is a full node
// and an idle one of four GPUs), and the jobs of the queue.
type decideCase struct {
	name  string
	nodes string // one digit per node: GPUs in use, '.' separated
	gpus  int
	jobs  func() []slurmclient.Job
}

func decideCases() []decideCase {
	one := func(id, name string, gpus int, mod func(*slurmclient.Job)) slurmclient.Job {
		j := pend(id, name, gpus, t0)
		if mod != nil {
			mod(&j)
		}
		return j
	}
	return []decideCase{
		{"idle", "0.0.0", 4, func() []slurmclient.Job {
			return []slurmclient.Job{
				one("1", "mid", 4, func(j *slurmclient.Job) { j.GPUs.Total, j.Comment = 8, "asrpt:model=gpt2-1.5b" }),
				one("2", "short", 1, nil),
				one("3", "train-bert-7", 4, nil),
				one("4", "long", 2, func(j *slurmclient.Job) { j.Comment = "asrpt:gpus=2" }),
			}
		}},
		{"full", "4.4", 4, func() []slurmclient.Job {
			return []slurmclient.Job{
				one("1", "week", 1, nil),
				one("2", "short", 4, nil),
				one("3", "day", 2, nil),
				one("4", "mid", 1, nil),
				one("5", "new-kind", 1, nil),
			}
		}},
		{"half", "2.4.0", 4, func() []slurmclient.Job {
			return []slurmclient.Job{
				one("1", "long", 4, nil),
				one("2", "short", 2, func(j *slurmclient.Job) { j.ExcludedNodes = []string{"node0001"} }),
				one("3", "mid", 2, nil),
				one("4", "short", 1, func(j *slurmclient.Job) { j.Held, j.Priority = true, 0 }),
				one("5", "short", 0, nil),
				one("6", "short", 1, func(j *slurmclient.Job) { j.Partition = "cpu" }),
				one("7", "mid", 2, func(j *slurmclient.Job) { j.RequiredNodes = []string{"node0002"} }),
			}
		}},
	}
}

// decideConfig is the configuration of the golden decisions.
func decideConfig(c *Config) {
	c.Profiles.Rules = []jobprofile.Rule{{Family: "train-bert", Model: "bert-large"}}
}

// snapshot returns tc's snapshot: its nodes with the GPUs in use, and its
// jobs as slurmctld lists them (pending, priority 1000 from the priority
// plugin unless held, by id).
func (tc decideCase) snapshot() decision.Snapshot {
	used := strings.Split(tc.nodes, ".")
	nodes := sidecartest.Nodes(len(used), tc.gpus)
	for i, u := range used {
		n := int(u[0] - '0')
		nodes[i].GPUsUsed = n
		switch {
		case n == tc.gpus:
			nodes[i].State = "ALLOCATED"
		case n > 0:
			nodes[i].State = "MIXED"
		}
	}
	jobs := tc.jobs()
	for i := range jobs {
		if jobs[i].Priority == 0 && !jobs[i].Held {
			jobs[i].Priority = 1000
		}
	}
	return decision.Snapshot{Nodes: nodes, Jobs: jobs}
}

// renderPlan writes the plan rows one line each: rank, stage, band, node
// list, profile, reason.
func renderPlan(tc decideCase, rows []decision.PlanRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nodes %s of %d GPUs\n", tc.nodes, tc.gpus)
	for _, r := range rows {
		band := "-"
		switch {
		case r.Stage == "left_alone":
		case decision.HighBand.Contains(r.PriorityNew):
			band = "high"
		case decision.LowBand.Contains(r.PriorityNew):
			band = "low"
		}
		nodes := strings.Join(r.Nodes, ",")
		if nodes == "" {
			nodes = "-"
		}
		fmt.Fprintf(&b, "%d job %s %s gpus=%d stage=%s band=%s nodes=%s profile=%s/%s heavy=%v reason=%s note=%q problem=%q\n",
			r.Rank, r.JobID, r.Name, r.GPUs, r.Stage, band, nodes, r.Profile, r.ProfileSource, r.Heavy, r.Reason, r.Note, r.ProfileProblem)
	}
	return b.String()
}

// TestDecideGolden calls the decide step on each tiny snapshot directly —
// a fresh decision.State, no Slurm, fake or real — and compares the plan (rank,
// stage, band, node list, profile, reason) with testdata/decide (go test
// ./sidecar -run DecideGolden -update rewrites them after a deliberate
// change). A dry cycle of a sidecar on a fake Slurm showing the same
// snapshot must give the same plan: the cycle adds reads and writes
// around the step, and nothing to the decisions.
func TestDecideGolden(t *testing.T) {
	for _, tc := range decideCases() {
		t.Run(tc.name, func(t *testing.T) {
			snap := tc.snapshot()
			h := newHarness(t, len(snap.Nodes), tc.gpus, false, decideConfig)
			var givenBack atomic.Bool
			tr, err := decision.NewState(h.cfg.Settings(), cluster.Uniform(len(snap.Nodes), tc.gpus), h.pred, h.cfg.WriteMode, nil,
				func(slurmclient.Delivery) bool { return true }, &givenBack)
			if err != nil {
				t.Fatal(err)
			}
			p := decision.Decide(&snap, tr, unixSeconds(t0))
			got := renderPlan(tc, tr.PlanRows(p.Decisions, snap.Jobs, 0))
			golden.Check(t, filepath.Join("testdata", "decide", tc.name+".txt"), []byte(got), *updateDecide)

			for i := range snap.Nodes {
				h.fake.EditNode(snap.Nodes[i].Name, func(nd *slurmclient.Node) { *nd = snap.Nodes[i] })
			}
			for _, j := range snap.Jobs {
				h.fake.Submit(j)
			}
			if cycled := renderPlan(tc, h.plan(t0).Plan); cycled != got {
				t.Errorf("a dry cycle on the same snapshot planned\n%s\nthe decision.Decide step\n%s", cycled, got)
			}
		})
	}
}
