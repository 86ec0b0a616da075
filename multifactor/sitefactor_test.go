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
