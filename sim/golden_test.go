package sim

import (
	"bytes"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/internal/golden"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.txt")

// goldenTrace is a tiny trace and the cluster it runs on.
type goldenTrace struct {
	name    string
	cluster *cluster.Cluster
	jobs    func(pl *placement.Placer) []job.Job
}

// iterations returns the iterations that make a catalogue model on gpus GPUs
// run seconds at its best placement.
func iterations(t *testing.T, pl *placement.Placer, model string, gpus int, seconds float64) float64 {
	t.Helper()
	prof, err := placement.Lookup(model, gpus)
	if err != nil {
		t.Fatal(err)
	}
	amin, _ := pl.Bounds(prof)
	return seconds / amin
}

func goldenTraces(t *testing.T) []goldenTrace {
	return []goldenTrace{
		{"mixed", cluster.Uniform(3, 4), func(pl *placement.Placer) []job.Job {
			return []job.Job{
				{ID: "a1", User: "u1", Name: "train", GPUs: 4, RunTime: 300, TimeLimit: 600, Submit: 0},
				{ID: "b1", User: "u2", Name: "eval", GPUs: 1, RunTime: 50, TimeLimit: 100, Submit: 5},
				{ID: "a2", User: "u1", Name: "train", GPUs: 4, RunTime: 300, TimeLimit: 600, Submit: 10},
				{ID: "h1", User: "u3", Name: "gpt", GPUs: 8, Profile: "gpt2-1.5b", Iterations: iterations(t, pl, "gpt2-1.5b", 8, 400), TimeLimit: 2000, Submit: 15},
				{ID: "b2", User: "u2", Name: "eval", GPUs: 1, RunTime: 60, TimeLimit: 100, Submit: 20},
				{ID: "c1", User: "u4", Name: "sweep", GPUs: 2, RunTime: 1000, TimeLimit: 3600, Submit: 30},
				{ID: "d1", User: "u5", Name: "bert", GPUs: 4, Profile: "bert-large", Iterations: iterations(t, pl, "bert-large", 4, 200), TimeLimit: 1000, Submit: 50},
				{ID: "b3", User: "u2", Name: "eval", GPUs: 1, RunTime: 40, TimeLimit: 100, Submit: 400},
				{ID: "a3", User: "u1", Name: "train", GPUs: 4, RunTime: 280, TimeLimit: 600, Submit: 500},
			}
		}},
		{"burst", cluster.Uniform(1, 8), func(*placement.Placer) []job.Job {
			return []job.Job{
				{ID: "w8", User: "u1", Name: "wide", GPUs: 8, RunTime: 100, TimeLimit: 200, Submit: 0},
				{ID: "l1", User: "u2", Name: "long", GPUs: 1, RunTime: 900, TimeLimit: 1000, Submit: 0},
				{ID: "s2", User: "u3", Name: "short", GPUs: 2, RunTime: 30, TimeLimit: 60, Submit: 0},
				{ID: "m4", User: "u4", Name: "mid", GPUs: 4, RunTime: 200, TimeLimit: 400, Submit: 1},
				{ID: "s1", User: "u3", Name: "short", GPUs: 1, RunTime: 20, TimeLimit: 60, Submit: 2},
				{ID: "w6", User: "u1", Name: "wide", GPUs: 6, RunTime: 120, TimeLimit: 200, Submit: 3},
				{ID: "m2", User: "u4", Name: "mid", GPUs: 2, RunTime: 250, TimeLimit: 400, Submit: 4},
			}
		}},
	}
}

// TestGoldenSchedules replays tiny traces with every policy, with the mean
// predictor and with perfect predictions, and compares each job's start,
// end and nodes with testdata/golden (go test ./sim -run Golden -update
// rewrites them after a deliberate change).
func TestGoldenSchedules(t *testing.T) {
	for _, tr := range goldenTraces(t) {
		t.Run(tr.name, func(t *testing.T) {
			jobs := tr.jobs(placement.NewPlacer(tr.cluster))
			var buf bytes.Buffer
			for _, name := range policy.Names {
				for _, oracle := range []bool{false, true} {
					pol, pred := name, predictor.Predictor(predictor.NewMean())
					if oracle {
						pol, pred = name+policy.OracleSuffix, predictor.Oracle{}
					}
					r, err := replayJobs(jobs, tr.cluster, policy.DefaultParams(), Config{Policy: pol,
						Predictor: pred, Check: true, RecordNodes: true})
					if err != nil {
						t.Fatalf("%s: %v", pol, err)
					}
					total := 0.0
					fmt.Fprintf(&buf, "== %s\n", pol)
					for i := range r.Jobs {
						j := &r.Jobs[i]
						total += j.JCT()
						fmt.Fprintf(&buf, "%-3s start %7.1f  end %7.1f  preempted %d  nodes %s\n", r.ID(i), j.Start, j.End, j.Preemptions, strings.Join(r.Nodes[i], ","))
					}
					fmt.Fprintf(&buf, "total JCT %.1f\n", total)
				}
			}
			golden.Check(t, filepath.Join("testdata", "golden", tr.name+".txt"), buf.Bytes(), *updateGolden)
		})
	}
}
