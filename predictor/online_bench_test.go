package predictor_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/sim"
	"github.com/asrpt/asrpt/sim/simtest"
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
// settings), and with the window predictors (mean, and mean-gpus, the
// default) for comparison, and reports the share of the replay's wall
// time spent training, the number of trainings and the wall time per job. Run it
// alone: go test -run '^$' -bench ReplayForest -benchtime 1x ./predictor
// [-replay.jobs 1000000].
func BenchmarkReplayForest(b *testing.B) {
	c, jobs := genWorkload(b, *replayJobs)
	for _, name := range []string{"mean", predictor.Default, "forest"} {
		b.Run(fmt.Sprintf("jobs=%d/%s", len(jobs), name), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p, err := predictor.ByName(name, predictor.DefaultConfig())
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				r, err := simtest.Replay(jobs, c, policy.DefaultParams(), sim.Config{Policy: "asrpt", Predictor: p})
				if err != nil {
					b.Fatal(err)
				}
				wall := time.Since(start).Seconds()
				b.ReportMetric(wall, "wall-s")
				b.ReportMetric(float64(r.Events)/wall, "events/s")
				if f, ok := predictor.Unwrap(p).(*predictor.Forest); ok {
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

// BenchmarkReplaySeeds replays A-SRPT with the online forest under forest
// seeds 1..4 and reports the total JCT relative to A-SRPT with perfect
// predictions (vs-oracle-%): the spread over seeds is the noise floor of
// the comparisons in README.md. Workloads: the generated default (10,000
// jobs, 32 nodes × 8 GPUs) at load 1.3, and the Helios excerpt on 64 nodes
// × 8 GPUs when $ASRPT_TRACES names a directory holding the excerpt
// (quality/README.md). Run it alone:
// ASRPT_TRACES=DIR go test -run '^$' -bench ReplaySeeds -benchtime 1x ./predictor
func BenchmarkReplaySeeds(b *testing.B) {
	type workload struct {
		name  string
		jobs  []job.Job
		nodes int
	}
	cfg := trace.DefaultGenConfig()
	cfg.Load = 1.3
	gen, err := trace.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	wls := []workload{{"gen-load1.3", gen, 32}}
	helios := filepath.Join(os.Getenv("ASRPT_TRACES"), "helios-15k-excerpt", "helios_data_training.csv")
	if _, err := os.Stat(helios); err == nil && os.Getenv("ASRPT_TRACES") != "" {
		f, _ := trace.ParseFormat("helios")
		jobs, _, err := trace.ReadFileStats(helios, f, trace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		wls = append(wls, workload{"helios", jobs, 64})
	}
	total := func(r *sim.Result) float64 {
		var s float64
		for _, j := range r.Jobs {
			s += j.End - j.Submit
		}
		return s
	}
	for _, w := range wls {
		c := cluster.Uniform(w.nodes, 8)
		sc := sim.Config{Policy: "asrpt", Predictor: predictor.Oracle{}}
		r, err := simtest.Replay(w.jobs, c, policy.DefaultParams(), sc)
		if err != nil {
			b.Fatal(err)
		}
		oracle := total(r)
		for seed := uint64(1); seed <= 4; seed++ {
			b.Run(fmt.Sprintf("%s/seed=%d", w.name, seed), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					pc := predictor.DefaultConfig()
					pc.Train.Forest.Seed = seed
					p, err := predictor.NewForest(pc)
					if err != nil {
						b.Fatal(err)
					}
					sc.Predictor = p
					r, err := simtest.Replay(w.jobs, c, policy.DefaultParams(), sc)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(100*(total(r)/oracle-1), "vs-oracle-%")
				}
			})
		}
	}
}
