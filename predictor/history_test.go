package predictor

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// TestWindowSorted checks the window's sorted copy, sum and evictions
// against the last Window values sorted afresh, with many repeated values.
func TestWindowSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var w window
	var all []float64
	for i := range 5000 {
		x := float64(rng.IntN(40)) / 4
		if i%7 == 0 {
			x = rng.Float64() * 10
		}
		old, evicted := w.add(x)
		all = append(all, x)
		if want := len(all) > Window; evicted != want || evicted && old != all[len(all)-Window-1] {
			t.Fatalf("add %d: evicted %v (%g), want %v", i, evicted, old, want)
		}
		last := slices.Clone(all[max(0, len(all)-Window):])
		slices.Sort(last)
		if !slices.Equal(w.sorted, last) {
			t.Fatalf("add %d: sorted %v, want %v", i, w.sorted, last)
		}
	}
}

func TestLowerBound(t *testing.T) {
	s := []float64{1, 2, 2, 2, 5}
	for _, tc := range []struct {
		x    float64
		want int
	}{{0, 0}, {1, 0}, {1.5, 1}, {2, 1}, {3, 4}, {5, 4}, {6, 5}, {math.Inf(1), 5}} {
		if got := lowerBound(s, tc.x); got != tc.want {
			t.Errorf("lowerBound(%v, %g) = %d, want %d", s, tc.x, got, tc.want)
		}
	}
	if got := lowerBound(nil, 1); got != 0 {
		t.Errorf("lowerBound(nil, 1) = %d", got)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 70 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(rng.IntN(20))
		}
		slices.Sort(s)
		for x := -1.0; x <= 21; x += 0.5 {
			if got, want := lowerBound(s, x), sort.SearchFloat64s(s, x); got != want {
				t.Fatalf("lowerBound(%v, %g) = %d, sort.SearchFloat64s %d", s, x, got, want)
			}
		}
	}
}

// TestHourWeekday compares hourWeekday with the time package, before and
// after the epoch.
func TestHourWeekday(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	secs := []int64{0, -1, 1, 86399, 86400, -86400, -86401, 1.7e9, 1793577600, math.MaxInt32, -math.MaxInt32}
	for range 20000 {
		secs = append(secs, rng.Int64N(8e9)-4e9)
	}
	for _, s := range secs {
		tm := time.Unix(s, 0).UTC()
		if h, wd := hourWeekday(s); h != tm.Hour() || wd != int(tm.Weekday()) {
			t.Fatalf("hourWeekday(%d) = %d, %d, want %d, %d", s, h, wd, tm.Hour(), int(tm.Weekday()))
		}
	}
}
