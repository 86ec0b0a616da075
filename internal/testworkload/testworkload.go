// Package testworkload builds the small generated workloads that tests of
// the replay replay.
package testworkload

import (
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/sim"
	"github.com/asrpt/asrpt/trace"
)

// Generated returns n jobs generated with seed (trace.Generate's defaults
// otherwise) for a cluster of nodes nodes with gpn GPUs each, prepared for
// replay on that cluster with the default policy parameters; it fails t on
// any error.
func Generated(t testing.TB, n int, seed int64, nodes, gpn int) *sim.Workload {
	t.Helper()
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.Seed, cfg.ClusterGPUs, cfg.GPUsPerNode = n, seed, nodes*gpn, gpn
	jobs, err := trace.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := job.TableOf(jobs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sim.Prepare(tab, policy.NewEnv(cluster.Uniform(nodes, gpn), policy.DefaultParams()))
	if err != nil {
		t.Fatal(err)
	}
	return w
}
