package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/policy"
)

func ptr(v float64) *float64 { return &v }

func TestCheckRanges(t *testing.T) {
	wall := Figure{Table: "replay asrpt forest", Row: "1000000", Col: "wall s"}
	ratio := Figure{Table: "policies mean 100000", Row: "las", Col: "ratio to fifo"}
	tests := []struct {
		name    string
		fig     *Figure // nil: not measured
		rng     Range
		status  string
		message string
	}{
		{"in range, max only", &Figure{Table: wall.Table, Row: wall.Row, Col: wall.Col, Value: 18.5},
			Range{Key: wall.Key(), Max: ptr(20)}, StatusOK, ""},
		{"on the bound", &Figure{Table: wall.Table, Row: wall.Row, Col: wall.Col, Value: 20},
			Range{Key: wall.Key(), Max: ptr(20)}, StatusOK, ""},
		{"above", &Figure{Table: wall.Table, Row: wall.Row, Col: wall.Col, Value: 31.24},
			Range{Key: wall.Key(), Max: ptr(20)}, StatusHigh,
			"replay asrpt forest/1000000: wall s = 31.2, range ≤ 20: above"},
		{"ratio in range", &Figure{Table: ratio.Table, Row: ratio.Row, Col: ratio.Col, Value: 0.12},
			Range{Key: ratio.Key(), Min: ptr(0.05), Max: ptr(0.5)}, StatusOK, ""},
		{"ratio below", &Figure{Table: ratio.Table, Row: ratio.Row, Col: ratio.Col, Value: 0.031},
			Range{Key: ratio.Key(), Min: ptr(0.05)}, StatusLow,
			"policies mean 100000/las: ratio to fifo = 0.0310, range ≥ 0.05: below"},
		{"ratio above both bounds", &Figure{Table: ratio.Table, Row: ratio.Row, Col: ratio.Col, Value: 2},
			Range{Key: ratio.Key(), Min: ptr(0.05), Max: ptr(0.5)}, StatusHigh,
			"policies mean 100000/las: ratio to fifo = 2, range 0.05 – 0.5: above"},
		{"failed run", &Figure{Table: wall.Table, Row: wall.Row, Col: wall.Col, Value: 40, Failed: "killed after 40 s"},
			Range{Key: wall.Key(), Max: ptr(20)}, StatusFailed,
			"replay asrpt forest/1000000: wall s: run failed (killed after 40 s), range ≤ 20"},
		{"not measured", nil, Range{Key: wall.Key(), Max: ptr(20)}, StatusMissing,
			"replay asrpt forest/1000000: wall s: not measured, range ≤ 20"},
		{"go benchmark in ns", &Figure{Table: "go", Row: "placement HeavyEdge64on1000x8/empty", Col: "ns/op", Value: 1.5e6},
			Range{Key: "go/placement HeavyEdge64on1000x8/empty: ns/op", Max: ptr(1e6)}, StatusHigh,
			"go/placement HeavyEdge64on1000x8/empty: ns/op = 1.50 ms, range ≤ 1 ms: above"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var figs []Figure
			if tt.fig != nil {
				figs = append(figs, *tt.fig, Figure{Table: "other", Row: "x", Col: "y", Value: 1})
			}
			got := CheckRanges(figs, []Range{tt.rng})
			if len(got) != 1 {
				t.Fatalf("%d checks, want 1 (a figure without a range is not checked)", len(got))
			}
			if got[0].Status != tt.status {
				t.Errorf("status %q, want %q", got[0].Status, tt.status)
			}
			if got[0].Pass() != (tt.status == StatusOK) {
				t.Errorf("Pass() = %v for %q", got[0].Pass(), tt.status)
			}
			if msg := got[0].Message(); msg != tt.message {
				t.Errorf("message %q, want %q", msg, tt.message)
			}
		})
	}
}

func TestLoadRanges(t *testing.T) {
	tests := []struct {
		name, text, wantErr string
	}{
		{"good", "[[range]]\nkey = \"a/b: c\"\nmin = 1\nmax = 2\nwhy = \"target\"\n", ""},
		{"no bound", "[[range]]\nkey = \"a/b: c\"\nwhy = \"target\"\n", "neither min nor max"},
		{"no why", "[[range]]\nkey = \"a/b: c\"\nmax = 2\n", "no why"},
		{"no key", "[[range]]\nmax = 2\nwhy = \"x\"\n", "no key"},
		{"min above max", "[[range]]\nkey = \"k\"\nmin = 3\nmax = 2\nwhy = \"x\"\n", "min 3 above max 2"},
		{"twice", "[[range]]\nkey = \"k\"\nmax = 2\nwhy = \"x\"\n[[range]]\nkey = \"k\"\nmax = 3\nwhy = \"y\"\n", "listed twice"},
		{"unknown field", "[[range]]\nkey = \"k\"\nmaximum = 2\nwhy = \"x\"\n", "unknown key"},
		{"infinite", "[[range]]\nkey = \"k\"\nmax = inf\nwhy = \"x\"\n", "not a finite number"},
		{"syntax", "[[range]\n", "ranges"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ranges.toml")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadRanges(path)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestRangesFile: the committed ranges load, and every registered policy
// has a range on its events/s ratio to fifo, so a new policy cannot join
// without one.
func TestRangesFile(t *testing.T) {
	rs, err := LoadRanges("ranges.toml")
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(rs))
	for _, r := range rs {
		have[r.Key] = true
	}
	for _, p := range policy.Names {
		if p == "fifo" {
			continue
		}
		key := Figure{Table: "policies mean 100000", Row: p, Col: "ratio to fifo"}.Key()
		if !have[key] {
			t.Errorf("ranges.toml: no range for %q", key)
		}
	}
}
