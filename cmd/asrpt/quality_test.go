package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		err  string
	}{
		{"", []int64{7}, ""},
		{"1,2,3", []int64{1, 2, 3}, ""},
		{" 3 , -1 ", []int64{3, -1}, ""},
		{"1,x", nil, `seed "x" is not an integer`},
		{"2,2", nil, "seed 2 given twice"},
		{strings.Repeat("1,", maxSeeds) + "99", nil, "want at most 16"},
	} {
		got, err := parseSeeds(tc.in, 7)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseSeeds(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseSeeds(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
