package slurmtime

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in          string
		bareMinutes bool
		want        float64
		unlimited   bool
		bad         bool
	}{
		{"01:02:03", false, 3723, false, false},
		{"1-00:00:00", false, 86400, false, false},
		{"2-03", false, 2*86400 + 3*3600, false, false},
		{"2-03:04", false, 2*86400 + 3*3600 + 4*60, false, false},
		{"05:30", false, 330, false, false},
		{"90", true, 5400, false, false},
		{"90", false, 90, false, false},
		{"00:01.500", false, 1.5, false, false},
		{"UNLIMITED", false, 0, true, false},
		{"", false, 0, false, true},
		{"1:2:3:4", false, 0, false, true},
		{"-5", false, 0, false, true},
		{"a:b", false, 0, false, true},
		{"1-", false, 0, false, true},
	}
	for _, tc := range tests {
		got, unl, err := Parse(tc.in, tc.bareMinutes)
		if (err != nil) != tc.bad || got != tc.want || unl != tc.unlimited {
			t.Errorf("Parse(%q, %v) = %v, %v, %v; want %v, %v, bad %v", tc.in, tc.bareMinutes, got, unl, err, tc.want, tc.unlimited, tc.bad)
		}
	}
}

// FuzzParse checks that Parse never panics and gives a finite, non-negative
// time or an error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"01:02:03", "1-00:00:00", "2-03", "90", "00:01.500", "UNLIMITED", "", "1-", "-5"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, bareMinutes bool) {
		secs, unlimited, err := Parse(s, bareMinutes)
		if err != nil || unlimited {
			return
		}
		if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			t.Fatalf("Parse(%q) = %v", s, secs)
		}
	})
}
