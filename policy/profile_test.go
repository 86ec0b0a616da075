package policy

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// naiveFree is the free count at t from first principles: the GPUs free
// now, plus every running job that ended by t, minus every window that
// covers t.
func naiveFree(now float64, base int, ends []float64, gpus []int, res []window, t float64) int {
	f := base
	for i, e := range ends {
		if math.Max(e, now) <= t {
			f += gpus[i]
		}
	}
	for _, w := range res {
		if w.start <= t && t < w.end {
			f -= w.gpus
		}
	}
	return f
}

// naiveEarliest tries every candidate start (now, every end, every window
// end) and checks the span on a fine set of points: its start and every
// change inside it.
func naiveEarliest(now float64, base int, ends []float64, gpus []int, res []window, d float64, g int) float64 {
	cands := []float64{now}
	points := []float64{}
	for _, e := range ends {
		cands = append(cands, math.Max(e, now))
	}
	for _, w := range res {
		cands = append(cands, w.end)
		points = append(points, w.start)
	}
	slices.Sort(cands)
	for _, c := range cands {
		if c < now {
			continue
		}
		ok := naiveFree(now, base, ends, gpus, res, c) >= g
		for _, s := range points {
			if s > c && s < c+d && naiveFree(now, base, ends, gpus, res, s) < g {
				ok = false
			}
		}
		if ok {
			return c
		}
	}
	return math.Inf(1)
}

func TestProfileEarliestMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 3000 {
		const cluster = 16
		now := float64(rng.IntN(5))
		busy := 0
		var ends []float64
		var gpus []int
		for busy < cluster && rng.IntN(6) > 0 {
			g := 1 + rng.IntN(min(4, cluster-busy))
			// After running.refresh every end lies after now.
			ends = append(ends, now+float64(1+rng.IntN(20)))
			gpus = append(gpus, g)
			busy += g
		}
		// Running jobs come in end order, as the running set yields them.
		idx := make([]int, len(ends))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case ends[a] < ends[b]:
				return -1
			case ends[a] > ends[b]:
				return 1
			}
			return 0
		})
		se := make([]float64, len(ends))
		sg := make([]int, len(ends))
		for k, i := range idx {
			se[k], sg[k] = ends[i], gpus[i]
		}
		var run endTree
		for k := range se {
			run.insert(&Task{Job: &job.Job{GPUs: sg[k]}, Seq: k, end: se[k]})
		}
		var p profile
		p.reset(now, cluster-busy, &run)
		// Reservations made the way the dispatch makes them.
		for range rng.IntN(4) {
			d := float64(1 + rng.IntN(8))
			g := 1 + rng.IntN(cluster)
			at := p.earliest(d, g)
			if want := naiveEarliest(now, cluster-busy, se, sg, p.res, d, g); at != want {
				t.Fatalf("trial %d: earliest(%v, %d) = %v, naive %v (res %v)", trial, d, g, at, want, p.res)
			}
			p.add(at, d, g)
		}
		d := float64(1 + rng.IntN(8))
		g := 1 + rng.IntN(cluster)
		if got, want := p.fits(now, d, g), naiveEarliest(now, cluster-busy, se, sg, p.res, d, g) == now; got != want {
			t.Fatalf("trial %d: fits(now, %v, %d) = %v, naive %v", trial, d, g, got, want)
		}
	}
}
