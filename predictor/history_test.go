package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/asrpt/asrpt/job"
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

// BenchmarkHistoryAdd adds 100,000 finished jobs to a history, without
// commands, with a command repeated by every 10th job, and with a command
// of its own each (the worst case: every submit line different), and
// reports the time and the heap the history holds per job (B/job, after
// a garbage collection).
func BenchmarkHistoryAdd(b *testing.B) {
	const n = 100000
	for _, tc := range []struct {
		name     string
		commands int // distinct commands, 0 for none
	}{{"no-commands", 0}, {"commands=n/10", n / 10}, {"commands=n", n}} {
		b.Run(tc.name, func(b *testing.B) {
			jobs := make([]job.Job, n)
			for i := range jobs {
				jobs[i] = job.Job{ID: fmt.Sprint(i), Submit: float64(i), User: fmt.Sprintf("u%d", i%50),
					Name: fmt.Sprintf("train-%d", i%400), Partition: "gpu", GPUs: 1, RunTime: float64(60 + i%977), State: "COMPLETED"}
				if tc.commands > 0 {
					jobs[i].Command = job.CommandKey("/w", fmt.Sprint(i%tc.commands))
				}
			}
			var before, after runtime.MemStats
			var h *History
			for b.Loop() {
				runtime.GC()
				runtime.ReadMemStats(&before)
				h = NewHistory()
				for i := range jobs {
					h.Add(&jobs[i], jobs[i].Submit+jobs[i].RunTime)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/job")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
			runtime.KeepAlive(h)
		})
	}
}

// TestHistoryCommandBound: past MaxCommands distinct commands a new one
// gets no statistics, and the ones kept still learn.
func TestHistoryCommandBound(t *testing.T) {
	h := NewHistory()
	g := groupKey{"u", "a"}
	for i := 0; i < MaxCommands; i++ {
		h.command[commandKey{g, uint64(i + 1)}] = &groupAcc{}
	}
	fresh, kept := &job.Job{User: "u", Name: "a", RunTime: 100, Command: MaxCommands + 5}, &job.Job{User: "u", Name: "a", RunTime: 100, Command: 7}
	h.Add(fresh, 100)
	h.Add(kept, 100)
	if len(h.command) != MaxCommands || h.Command(fresh).Count != 0 || h.Command(kept).Count != 1 {
		t.Errorf("%d commands, new %d runs, kept %d runs; want %d, 0, 1", len(h.command), h.Command(fresh).Count, h.Command(kept).Count, MaxCommands)
	}
	if h.Group(fresh).Count != 2 {
		t.Error("the jobs' group did not learn them")
	}
}
