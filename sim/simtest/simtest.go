// Package simtest replays a slice of jobs in one call, for the tests and
// benchmarks of the packages above the simulator.
package simtest

import (
	"context"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/sim"
)

// Replay replays a copy of jobs (sorted by submit time) on cluster c with
// the policy tunables params under cfg.
func Replay(jobs []job.Job, c *cluster.Cluster, params policy.Params, cfg sim.Config) (*sim.Result, error) {
	t, err := job.TableOf(jobs)
	if err != nil {
		return nil, err
	}
	w, err := sim.Prepare(t, policy.NewEnv(c, params))
	if err != nil {
		return nil, err
	}
	return w.Run(context.Background(), cfg)
}
