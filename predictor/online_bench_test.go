package predictor_test

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/sim"
	"github.com/asrpt/asrpt/trace"
)

var replayJobs = flag.Int("replay.jobs", 100000, "jobs of BenchmarkReplayForest's generated workload (1,000,000 is the issue's target; the cluster has jobs/1000 nodes × 8 GPUs)")

// genWorkload generates n jobs for a cluster of n/1000 nodes × 8 GPUs
// (at least 32 nodes), the shape of the 1M-job replay.
func genWorkload(b *testing.B, n int) (*cluster.Cluster, []job.Job) {
	b.Helper()
	nodes := max(32, n/1000)
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.ClusterGPUs, cfg.GPUsPerNode = n, nodes*8, 8
	jobs, err := trace.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cluster.Uniform(nodes, 8), jobs
}

// BenchmarkReplayForest replays a generated workload of -replay.jobs jobs
// through A-SRPT in the simulator with the online forest (default
// settings) and reports the share of the replay's wall time spent
// training, the number of trainings and the wall time per job. Run it
// alone: go test -run '^$' -bench ReplayForest -benchtime 1x ./predictor
// [-replay.jobs 1000000].
func BenchmarkReplayForest(b *testing.B) {
	c, jobs := genWorkload(b, *replayJobs)
	for _, name := range []string{"mean", "forest"} {
		b.Run(fmt.Sprintf("jobs=%d/%s", len(jobs), name), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p, err := predictor.ByName(name, predictor.DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				r, err := sim.Run(jobs, sim.Config{Cluster: c, Policy: "asrpt", Params: policy.DefaultParams(), Predictor: p})
				if err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start).Seconds()
				b.ReportMetric(wall, "wall-s")
				b.ReportMetric(float64(r.Events)/wall, "events/s")
				if f, ok := p.(*predictor.Forest); ok {
					st := f.Stats()
					b.ReportMetric(st.TrainSeconds, "train-s")
					b.ReportMetric(st.TrainSeconds/wall, "train-share")
					b.ReportMetric(float64(st.Trainings), "trainings")
					b.ReportMetric(float64(st.TrainRows)/float64(max(1, st.Trainings)), "rows/training")
				}
			}
		})
	}
}
