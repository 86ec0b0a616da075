package main

import (
	"fmt"
	"strings"
)

// Figure is one measured number. Its place in the tables (Table, Row,
// Col) is also its name: Key joins them, and the ranges file refers to
// figures by Key.
type Figure struct {
	// Table names the table the figure is shown in ("replay asrpt
	// forest", "policies mean 100000", "go", "growth").
	Table string `json:"table"`
	// Row and Col place it in the table: a trace size, a policy or a Go
	// benchmark, and what is measured ("wall s", "events/s", "ns/op").
	Row string `json:"row"`
	Col string `json:"col"`
	// Value is the figure in the unit Col names.
	Value float64 `json:"value"`
	// Failed, when not empty, says why the run that should have measured
	// the figure failed (killed at its time limit, a non-zero exit);
	// Value is then what was seen before (the time until the kill), a
	// lower bound at best, never a measurement.
	Failed string `json:"failed,omitempty"`
}

// Key is the figure's name: "Table/Row: Col", for example
// "replay asrpt forest/1000000: wall s".
func (f Figure) Key() string { return f.Table + "/" + f.Row + ": " + f.Col }

// TableInfo titles one table of the results.
type TableInfo struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// RowName heads the column of row names ("jobs", "policy").
	RowName string `json:"row_name"`
	// Note, when not empty, is printed under the table.
	Note string `json:"note,omitempty"`
}

// Machine says where and when the figures were measured.
type Machine struct {
	Date      string `json:"date"`       // start of the run, UTC, RFC 3339
	Commit    string `json:"commit"`     // git describe --always --dirty
	GoVersion string `json:"go_version"` // runtime.Version() of the runner
	CPU       string `json:"cpu"`        // model name from /proc/cpuinfo
	Cores     int    `json:"cores"`      // runtime.NumCPU()
	MemGiB    int    `json:"mem_gib"`    // MemTotal from /proc/meminfo, GiB (rounded)
	// LoadStart and LoadEnd are /proc/loadavg's 1, 5 and 15 minute load
	// averages at the start and at the end of the run: a load above the
	// cores means other work shared the machine.
	LoadStart string `json:"load_start"`
	LoadEnd   string `json:"load_end"`
}

// Results is everything one run of the bench produces: what results.json
// holds and what results.md and the README's block are rendered from
// (Markdown), so that the tables depend on this record alone.
type Results struct {
	Machine Machine `json:"machine"`
	// Partial, when not empty, says how the run differs from the full
	// `make bench` (sizes changed, runs skipped); its checks are then
	// those of the figures it measured.
	Partial string      `json:"partial,omitempty"`
	Tables  []TableInfo `json:"tables"`
	Figures []Figure    `json:"figures"`
	Checks  []Check     `json:"checks"`
}

// figureSet collects figures in the order they are measured, with the
// tables they belong to; a table is listed once, when first titled.
type figureSet struct {
	tables  []TableInfo
	figures []Figure
}

// table titles a table (the first call for an id wins) so that Markdown
// can print it.
func (s *figureSet) table(t TableInfo) {
	for _, have := range s.tables {
		if have.ID == t.ID {
			return
		}
	}
	s.tables = append(s.tables, t)
}

// add records a figure. A value that is not a finite number (a ratio to
// a zero) is recorded as failed, since JSON cannot hold it.
func (s *figureSet) add(f Figure) {
	if !finite(f.Value) {
		f.Value = 0
		if f.Failed == "" {
			f.Failed = "not a finite number"
		}
	}
	s.figures = append(s.figures, f)
}

// value returns the figure named key and whether it was measured (a
// failed figure is not).
func (s *figureSet) value(key string) (float64, bool) {
	for _, f := range s.figures {
		if f.Key() == key {
			return f.Value, f.Failed == ""
		}
	}
	return 0, false
}

// checkKeys reports duplicate figure keys, which would make a range
// ambiguous.
func checkKeys(figs []Figure) error {
	seen := make(map[string]bool, len(figs))
	var dup []string
	for _, f := range figs {
		if seen[f.Key()] {
			dup = append(dup, f.Key())
		}
		seen[f.Key()] = true
	}
	if len(dup) > 0 {
		return fmt.Errorf("figures measured twice: %s", strings.Join(dup, "; "))
	}
	return nil
}
