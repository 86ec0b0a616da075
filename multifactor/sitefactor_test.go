package multifactor

import (
	"slices"
	"testing"
)

func TestSiteFactors(t *testing.T) {
	tests := []struct {
		n    int
		max  uint32
		want []uint32
	}{
		{0, 100, []uint32{}},
		{1, 100, []uint32{100}},
		{2, 100, []uint32{100, 0}},
		{3, 100, []uint32{100, 50, 0}},
		{4, 100, []uint32{100, 67, 33, 0}},
		{3, 0, []uint32{0, 0, 0}},
		{2, 1<<32 - 1, []uint32{1<<32 - 1, 0}},
	}
	for _, tc := range tests {
		if got := SiteFactors(tc.n, tc.max, nil); !slices.Equal(got, tc.want) {
			t.Errorf("SiteFactors(%d, %d) = %v, want %v", tc.n, tc.max, got, tc.want)
		}
	}
	// Strictly decreasing while the range holds a value per job.
	got := SiteFactors(1001, 1000, nil)
	for i := 1; i < len(got); i++ {
		if got[i] >= got[i-1] {
			t.Fatalf("factor %d = %d not below factor %d = %d", i, got[i], i-1, got[i-1])
		}
	}
}

// TestFactorDue pins the write bound: every change in the head region,
// beyond max/FactorTolerance elsewhere.
func TestFactorDue(t *testing.T) {
	cases := []struct {
		name           string
		cur, want, max uint32
		head, due      bool
	}{
		{"head, any change", 1000, 999, 6400, true, true},
		{"head, no change", 1000, 1000, 6400, true, false},
		{"tail within the tolerance", 1000, 1100, 6400, false, false},
		{"tail just past the tolerance", 1000, 1101, 6400, false, true},
		{"tail down past the tolerance", 1000, 899, 6400, false, true},
		{"never written, wants a small factor", 0, 100, 6400, false, false},
		{"never written, wants more", 0, 101, 6400, false, true},
		{"range under 64: every change", 3, 4, 60, false, true},
		{"largest values", 1<<31 - 3, 0, 1<<31 - 3, false, true},
	}
	for _, c := range cases {
		if got := FactorDue(c.cur, c.want, c.max, c.head); got != c.due {
			t.Errorf("%s: FactorDue(%d, %d, %d, %v) = %v", c.name, c.cur, c.want, c.max, c.head, got)
		}
	}
}
