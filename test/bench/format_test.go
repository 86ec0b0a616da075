package main

import "testing"

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		key  string
		want string
	}{
		{43012, "go/x: ns/op", "43.0 µs"},
		{219.6, "go/x: ns/op", "220 ns"},
		{25.31e9, "go/x: ns/op", "25.3 s"},
		{1.5e6, "go/x: ns/op", "1.50 ms"},
		{999.6e3, "go/x: ns/op", "1000 µs"},
		{1323.4, "r/1: peak RSS MiB", "1,320"},
		{56323, "r/1: events/s", "56,300"},
		{2770123, "go/x: B/op", "2,770,000"},
		{0.2204, "p/las: ratio to fifo", "0.220"},
		{1.2449, "g/a: cost per job ratio", "1.24"},
		{53, "go/x: allocs/op", "53"},
		{0, "go/x: allocs/op", "0"},
		{31.24, "r/1: wall s", "31.2"},
		{-0.5, "x/y: z", "-0.500"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.key); got != tt.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.key, got, tt.want)
		}
	}
}

func TestRangeText(t *testing.T) {
	tests := []struct {
		lo, hi *float64
		key    string
		want   string
	}{
		{nil, ptr(4096), "r/1: peak RSS MiB", "≤ 4,096"},
		{ptr(200000), nil, "go/x: rows/s", "≥ 200,000"},
		{ptr(0.05), ptr(0.5), "p/las: ratio to fifo", "0.05 – 0.5"},
		{nil, ptr(30e9), "go/x: ns/op", "≤ 30 s"},
		{nil, ptr(1.25e6), "go/x: ns/op", "≤ 1.25 ms"},
		{nil, nil, "x/y: z", "—"},
	}
	for _, tt := range tests {
		if got := rangeText(tt.lo, tt.hi, tt.key); got != tt.want {
			t.Errorf("rangeText(%v, %v, %q) = %q, want %q", tt.lo, tt.hi, tt.key, got, tt.want)
		}
	}
}
