package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCompletionsOrder: the heap pops completions by time, then push
// order, whatever the pushes and pops in between.
func TestCompletionsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	h := completions{less: completionFirst}
	var ref []completion
	seq := 0
	for step := range 5000 {
		if h.Len() == 0 || rng.IntN(3) > 0 {
			seq++
			c := completion{at: float64(rng.IntN(50)), seq: seq}
			h.push(c)
			ref = append(ref, c)
			continue
		}
		slices.SortFunc(ref, func(a, b completion) int {
			if a.at != b.at {
				if a.at < b.at {
					return -1
				}
				return 1
			}
			return a.seq - b.seq
		})
		if got := h.pop(); got != ref[0] {
			t.Fatalf("step %d: pop %+v, want %+v", step, got, ref[0])
		}
		ref = ref[1:]
	}
	if h.Len() != len(ref) {
		t.Fatalf("%d left, want %d", h.Len(), len(ref))
	}
}
