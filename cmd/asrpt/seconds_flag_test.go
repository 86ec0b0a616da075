package main

import "testing"

func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]float64{"86400": 86400, "24h": 86400, "90m": 5400, "1.5d": 129600, " 60 ": 60, "0.5": 0.5} {
		if got, err := parseSeconds(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "0", "-5", "NaN", "Inf", "1e300", "-1h", "101y", "36600d"} {
		if got, err := parseSeconds(in); err == nil {
			t.Errorf("%q: %v, want an error", in, got)
		}
	}
}
