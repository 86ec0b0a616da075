package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/asrpt/asrpt/cluster"
)

// busyCluster returns a nodes×gpus flat cluster with NVLink-class nodes and
// a free-GPU state in which each GPU is busy with probability busy (seeded).
func busyCluster(nodes, gpus int, busy float64, seed uint64) (*cluster.Cluster, *Free) {
	c := pcieCluster(nodes, gpus)
	for i := range c.Nodes {
		c.Nodes[i].IntraBW = cluster.DefaultNVLink
	}
	f := NewFree(c)
	rng := rand.New(rand.NewPCG(seed, 1))
	for n := range c.Nodes {
		var m uint64
		for b := 0; b < gpus; b++ {
			if rng.Float64() < busy {
				m |= 1 << uint(b)
			}
		}
		if m != 0 {
			if err := f.Take(&Placement{Slots: []Slot{{Node: n, GPUs: m}}}); err != nil {
				panic(err)
			}
		}
	}
	return c, f
}

// BenchmarkHeavyEdge64on1000x8 places a 64-GPU, 8-stage job (gpt2-1.5b:
// K = 8, d = 8) on a 1,000-node × 8-GPU cluster, empty and half busy.
func BenchmarkHeavyEdge64on1000x8(b *testing.B) {
	prof, err := Lookup("gpt2-1.5b", 64)
	if err != nil || len(prof.Stages) != 8 {
		b.Fatalf("Lookup: %v, %d stages", err, len(prof.Stages))
	}
	for _, bc := range []struct {
		name string
		busy float64
	}{{"empty", 0}, {"half-busy", 0.5}} {
		b.Run(bc.name, func(b *testing.B) {
			c, f := busyCluster(1000, 8, bc.busy, 7)
			pl := NewPlacer(c)
			if _, err := pl.Place(f, 64, prof); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pl.Place(f, 64, prof); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlacePlain places plain jobs of a trace-like size mix on a
// 1,000-node × 8-GPU cluster that is 70% busy, taking and giving back each
// placement so the best-fit index is updated as in a replay.
func BenchmarkPlacePlain(b *testing.B) {
	c, f := busyCluster(1000, 8, 0.7, 3)
	pl := NewPlacer(c)
	sizes := []int{1, 1, 1, 1, 1, 2, 2, 4, 8, 8, 16, 32}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g := sizes[i%len(sizes)]
		i++
		p, err := pl.Place(f, g, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Take(&p); err != nil {
			b.Fatal(err)
		}
		f.Give(&p)
	}
}

// BenchmarkAlpha64 evaluates α of a 64-GPU, 8-stage placement.
func BenchmarkAlpha64(b *testing.B) {
	prof, _ := Lookup("gpt2-1.5b", 64)
	c, f := busyCluster(1000, 8, 0.5, 7)
	pl := NewPlacer(c)
	p, err := pl.Place(f, 64, prof)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		pl.Alpha(prof, &p)
	}
}

// BenchmarkHeavyEdgeLarge places gpt2-1.5b on 256 and 1,024 GPUs (8 stages
// of 32 and 128 replicas) on a 1,000 × 8 cluster that is 30% busy.
func BenchmarkHeavyEdgeLarge(b *testing.B) {
	for _, g := range []int{256, 1024} {
		b.Run(fmt.Sprint(g), func(b *testing.B) {
			prof, err := Lookup("gpt2-1.5b", g)
			if err != nil {
				b.Fatal(err)
			}
			c, f := busyCluster(1000, 8, 0.3, 7)
			pl := NewPlacer(c)
			for b.Loop() {
				if _, err := pl.Place(f, g, prof); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
