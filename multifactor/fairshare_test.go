package multifactor

import (
	"math"
	"testing"
)

// TestFairTree checks Fair Tree's ranks on a hand-computed tree: accounts
// A and B with equal shares, A has used 300 GPU-seconds (a1 200, a2 100),
// B 100 (b1 100, b2 none). Level fair shares: A 0.5/0.75, B 0.5/0.25, so
// B's users rank above A's; in B, b2 (no usage, +Inf) above b1; in A, a2
// (0.5/(1/3)) above a1 (0.5/(2/3)). Factors rank/4.
func TestFairTree(t *testing.T) {
	params := Example()
	params.DecayHalfLife = 0 // no decay: usage is plain GPU-seconds
	f := NewFairShare(&params, Shares{})
	used := map[Assoc]float64{{"A", "a1"}: 200, {"A", "a2"}: 100, {"B", "b1"}: 100, {"B", "b2"}: 0}
	now := 0.0
	for _, a := range []Assoc{{"A", "a1"}, {"A", "a2"}, {"B", "b1"}, {"B", "b2"}} {
		u := f.Association(now, a)
		if g := used[a]; g > 0 {
			f.Run(now, u, 1)
			now += g
			f.Run(now, u, -1) // 1 GPU for g seconds
		}
	}
	f.Compute(400)
	want := map[Assoc]float64{{"B", "b2"}: 1, {"B", "b1"}: 0.75, {"A", "a2"}: 0.5, {"A", "a1"}: 0.25}
	for a, w := range want {
		if got := f.assocs[a].factor; got != w {
			t.Errorf("%v: factor %v, want %v", a, got, w)
		}
	}
	// Classic: 2^(−U/S), S = 1/2·1/2 for every user.
	params.FairTree = false
	f.Compute(400)
	for a, g := range used {
		if got, w := f.assocs[a].factor, math.Exp2(-(g/400)/0.25); math.Abs(got-w) > 1e-12 {
			t.Errorf("classic %v: factor %v, want %v", a, got, w)
		}
	}
}

// TestUsageDecay checks the continuous-time decay: one GPU for a
// half-life h gives h/ln2·(1−1/2) GPU-seconds, halved again after another
// idle half-life; the result does not depend on how often it is brought
// up to date.
func TestUsageDecay(t *testing.T) {
	const h = 1000.0
	var u usage
	u.running = 1
	u.advance(h, h)
	want := h / math.Ln2 / 2
	if math.Abs(u.value-want) > 1e-9 {
		t.Fatalf("after one half-life running: %v, want %v", u.value, want)
	}
	u.running = 0
	u.advance(2*h, h)
	if math.Abs(u.value-want/2) > 1e-9 {
		t.Fatalf("after one idle half-life: %v, want %v", u.value, want/2)
	}
	var v usage
	v.running = 1
	for s := 1.0; s <= h; s++ {
		v.advance(s, h)
	}
	if math.Abs(v.value-want) > 1e-6 {
		t.Fatalf("stepwise: %v, want %v", v.value, want)
	}
}
