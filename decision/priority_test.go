package decision

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// checkLabels fails unless out is strictly decreasing inside b.
func checkLabels(t *testing.T, out []uint32, b Band) {
	t.Helper()
	for i, v := range out {
		if !b.Contains(v) {
			t.Fatalf("item %d: %d outside [%d, %d]", i, v, b.Lo, b.Hi)
		}
		if i > 0 && v >= out[i-1] {
			t.Fatalf("item %d: %d not below item %d's %d", i, v, i-1, out[i-1])
		}
	}
}

func changed(cur, out []uint32) int {
	n := 0
	for i := range cur {
		if cur[i] != out[i] {
			n++
		}
	}
	return n
}

func TestLabel(t *testing.T) {
	small := Band{Lo: 10, Hi: 20}
	cases := []struct {
		name string
		b    Band
		cur  []uint32
		// maxChanged bounds the number of values that may change.
		maxChanged int
	}{
		{"empty", LowBand, nil, 0},
		{"fresh", LowBand, make([]uint32, 5), 5},
		{"stable", LowBand, []uint32{500 << 20, 400 << 20, 300 << 20}, 0},
		{"one new at head", LowBand, []uint32{0, 500 << 20, 400 << 20}, 1},
		{"one new at tail", LowBand, []uint32{500 << 20, 400 << 20, 0}, 1},
		{"one new inside", LowBand, []uint32{500 << 20, 0, 400 << 20}, 1},
		{"swap", LowBand, []uint32{400 << 20, 500 << 20, 300 << 20}, 1},
		{"out of band", LowBand, []uint32{5, 500 << 20, HighBand.Lo}, 2},
		{"adjacent values need room", LowBand, []uint32{LowBand.Lo + 1000, 0, LowBand.Lo + 999}, 2},
		{"full small band", small, []uint32{20, 19, 0, 18, 17, 16, 15, 14, 13, 12}, 10},
		{"equal values", LowBand, []uint32{70 << 20, 70 << 20, 70 << 20}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := Label(c.cur, c.b, nil)
			if len(out) != len(c.cur) {
				t.Fatalf("%d labels for %d items", len(out), len(c.cur))
			}
			checkLabels(t, out, c.b)
			if n := changed(c.cur, out); n > c.maxChanged {
				t.Errorf("%d values changed, want ≤ %d: %v → %v", n, c.maxChanged, c.cur, out)
			}
		})
	}
}

// TestLabelSteadyQueue checks that arrivals, departures and moves cost
// writes in proportion to the changes, not to the queue length.
func TestLabelSteadyQueue(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	cur := Label(make([]uint32, n), LowBand, nil)
	total := 0
	for round := range 200 {
		// Remove 5 jobs and insert 5 new ones at random ranks.
		for range 5 {
			i := r.IntN(len(cur))
			cur = append(cur[:i], cur[i+1:]...)
		}
		for range 5 {
			i := r.IntN(len(cur) + 1)
			cur = append(cur[:i], append([]uint32{0}, cur[i:]...)...)
		}
		out := Label(cur, LowBand, nil)
		checkLabels(t, out, LowBand)
		c := changed(cur, out)
		total += c
		if c > 50 {
			t.Fatalf("round %d: %d values changed for 10 queue changes", round, c)
		}
		cur = out
	}
	t.Logf("%d writes over 200 rounds of 5 arrivals and 5 departures on %d jobs", total, n)
}

// TestLabelRepeatedHeadInsert inserts at the same spot until the gap is
// exhausted; the renumbering must stay local.
func TestLabelRepeatedHeadInsert(t *testing.T) {
	cur := Label(make([]uint32, 1000), LowBand, nil)
	worst := 0
	for range 200 {
		cur = append(cur[:500], append([]uint32{0}, cur[500:]...)...)
		out := Label(cur, LowBand, nil)
		checkLabels(t, out, LowBand)
		worst = max(worst, changed(cur, out))
		cur = out
	}
	if worst > 64 {
		t.Errorf("worst single insertion changed %d values", worst)
	}
}

func FuzzLabel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 200, 0, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() {
			if len(data) > 300 {
				data = data[:300]
			}
			b := Band{Lo: 100, Hi: 100 + 400}
			cur := make([]uint32, len(data))
			for i, d := range data {
				if d != 0 {
					cur[i] = 90 + uint32(d)*2
				}
			}
			checkLabels(t, Label(cur, b, nil), b)
		})
	})
}

func BenchmarkLabel20k(b *testing.B) {
	cur := Label(make([]uint32, 20000), LowBand, nil)
	cur[100] = 0
	cur[15000] = 0
	out := make([]uint32, 0, len(cur))
	b.ReportAllocs()
	for b.Loop() {
		out = Label(cur, LowBand, out)
	}
}
