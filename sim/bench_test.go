package sim

import (
	"fmt"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/trace"
)

// BenchmarkReplay replays generated traces on 1,000 nodes × 8 GPUs with
// A-SRPT (the revised dispatch), and with asrpt-preempt with every job
// opted in, and reports events per second and ns per job.
func BenchmarkReplay(b *testing.B) {
	c := cluster.Uniform(1000, 8)
	for _, n := range []int{10000, 100000} {
		cfg := trace.DefaultGenConfig()
		cfg.Jobs, cfg.ClusterGPUs, cfg.GPUsPerNode = n, c.TotalGPUs(), 8
		jobs, err := trace.Generate(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range []string{"asrpt", "asrpt-preempt"} {
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				events := 0
				for b.Loop() {
					r, err := replayJobs(jobs, c, policy.DefaultParams(), Config{Policy: name, Predictor: predictor.NewMean(),
						Preemptible: func(*job.Job) bool { return true }}) // the most work for the preemption step
					if err != nil {
						b.Fatal(err)
					}
					events += r.Events
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
			})
		}
	}
}

// BenchmarkLowerBound computes LB for a 100k-job trace.
func BenchmarkLowerBound(b *testing.B) {
	cfg := trace.DefaultGenConfig()
	cfg.Jobs, cfg.ClusterGPUs = 100000, 8000
	jobs, err := trace.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	env := policy.NewEnv(cluster.Uniform(1000, 8), policy.DefaultParams())
	w, err := prepareJobs(jobs, env)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		w.LowerBound()
	}
}
