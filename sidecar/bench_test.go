package sidecar

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// benchQueue returns a sidecar over a fake Slurm with jobs pending jobs on
// nodes nodes of 8 GPUs, all but free of them fully allocated. Run times
// come from 100 job families spread over a minute to a week.
func benchQueue(b *testing.B, jobs, nodes, free int) (*Sidecar, *sidecartest.Fake) {
	b.Helper()
	ns := sidecartest.Nodes(nodes, 8)
	for i := free; i < len(ns); i++ {
		ns[i].GPUsUsed, ns[i].State = 8, "ALLOCATED"
	}
	fake := sidecartest.NewFake(ns)
	r := rand.New(rand.NewPCG(7, 11))
	runs := map[string]float64{}
	for k := range 100 {
		runs[fmt.Sprintf("fam%02d", k)] = 60 * float64(1+k*k*k%10080)
	}
	for i := range jobs {
		g := []int{1, 1, 2, 4, 8}[r.IntN(5)]
		fake.Submit(slurmclient.Job{ID: fmt.Sprint(100000 + i), Name: fmt.Sprintf("fam%02d", r.IntN(100)), User: "u",
			Partition: "gpu", State: "PENDING", Submit: t0.Add(-time.Duration(r.IntN(86400)) * time.Second),
			TimeLimit: 24 * time.Hour, GPUs: slurmclient.GPURequest{PerNode: g, Total: g}})
	}
	cfg := DefaultConfig()
	cfg.Slurm.URL = "unix:///s"
	cfg.StateFile = ""
	cfg.History = 0
	cfg.WriteLimit = jobs
	s, err := New(cfg, Options{Cluster: cluster.Uniform(nodes, 8), Slurm: fake,
		Predictor: fixedPredictor{Runs: runs}, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	return s, fake
}

func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkCycle20k measures one steady cycle (read, reconcile, schedule,
// rank, label, write) of 20,000 pending jobs on 2,000 nodes, 30 s after the
// previous one; writes/cycle counts the updates sent (releases and
// dispatches), heap-MiB the live heap after the cycles.
func BenchmarkCycle20k(b *testing.B) {
	s, fake := benchQueue(b, 20000, 2000, 20)
	ctx := context.Background()
	at := t0
	if _, err := s.RunOnce(ctx, at); err != nil {
		b.Fatal(err)
	}
	fake.ResetWrites()
	b.ReportAllocs()
	b.ResetTimer()
	changes := 0
	for b.Loop() {
		at = at.Add(30 * time.Second)
		rep, err := s.RunOnce(ctx, at)
		if err != nil {
			b.Fatal(err)
		}
		changes += rep.Released + rep.Dispatched
	}
	b.StopTimer()
	b.ReportMetric(float64(len(fake.Writes()))/float64(b.N), "writes/cycle")
	b.ReportMetric(float64(changes)/float64(b.N), "releases+dispatches/cycle")
	b.ReportMetric(heapMiB(), "heap-MiB")
	runtime.KeepAlive(s)
}

// BenchmarkFirstCycle20k measures the first cycle: 20,000 arrivals,
// predictions, and a priority for every job.
func BenchmarkFirstCycle20k(b *testing.B) {
	b.ReportAllocs()
	var s *Sidecar
	for b.Loop() {
		b.StopTimer()
		s, _ = benchQueue(b, 20000, 2000, 20)
		b.StartTimer()
		if _, err := s.RunOnce(context.Background(), t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(heapMiB(), "heap-MiB")
	runtime.KeepAlive(s)
}

// BenchmarkStateCopy20k measures what a decide step that returned its next
// state as a new value, leaving the old one untouched, would add to each
// cycle of BenchmarkCycle20k's queue: one copy of the state (the tracked
// jobs and the policy with its queues), here through the only deep copy
// the state has, its saved form (ToSave, then Restore into a fresh state,
// which rebuilds the policy's queues).
func BenchmarkStateCopy20k(b *testing.B) {
	s, _ := benchQueue(b, 20000, 2000, 20)
	if _, err := s.RunOnce(context.Background(), t0); err != nil {
		b.Fatal(err)
	}
	var givenBack atomic.Bool
	b.ReportAllocs()
	for b.Loop() {
		saved := s.state.ToSave()
		st, err := decision.NewState(s.cfg.Settings(), cluster.Uniform(2000, 8), fixedPredictor{}, s.cfg.WriteMode, nil,
			func(slurmclient.Delivery) bool { return true }, &givenBack)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Restore(saved); err != nil {
			b.Fatal(err)
		}
		if len(st.Entries) != len(s.state.Entries) {
			b.Fatalf("copy holds %d jobs, state %d", len(st.Entries), len(s.state.Entries))
		}
	}
}
