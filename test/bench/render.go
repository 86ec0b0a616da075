package main

import (
	"fmt"
	"slices"
	"strings"
)

// Markdown renders the results as the markdown that results.md holds and
// that the README shows between its bench markers: the machine, the
// figures with a recorded range and their verdicts, then every table of
// figures. It depends on r alone, so results.md can be checked against
// results.json.
func Markdown(r *Results) string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Measured by `make bench` (`test/bench`) on %s at commit `%s`: %s, %s × %d cores, %d GiB; "+
		"load average %s at the start, %s at the end.\n", m.Date, m.Commit, m.GoVersion, m.CPU, m.Cores, m.MemGiB,
		m.LoadStart, m.LoadEnd)
	if r.Partial != "" {
		fmt.Fprintf(&b, "\n**Partial run**: %s.\n", r.Partial)
	}
	writeChecks(&b, r.Checks)
	status := make(map[string]Check, len(r.Checks))
	for _, c := range r.Checks {
		status[c.Key] = c
	}
	for _, t := range r.Tables {
		writeTable(&b, t, r.Figures, status)
	}
	return b.String()
}

// writeChecks writes the table of the figures with a range and the
// summary line.
func writeChecks(b *strings.Builder, checks []Check) {
	fmt.Fprintf(b, "\n%s.\n", Summary(checks))
	if len(checks) == 0 {
		return
	}
	b.WriteString("\n")
	b.WriteString("| figure | measured | range | |\n|---|---:|---:|---|\n")
	for _, c := range checks {
		measured, mark := formatValue(c.Value, c.Key), "✓"
		switch c.Status {
		case StatusMissing:
			measured, mark = "—", "not measured"
		case StatusFailed:
			measured, mark = failedCell(c.Value, c.Key, c.Failed), "✗ failed"
		case StatusLow, StatusHigh:
			mark = "✗ " + c.Status
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", c.Key, measured, rangeText(c.Min, c.Max, c.Key), mark)
	}
}

// Summary is the one-line verdict of a run: how many figures were checked
// and how many left their range.
func Summary(checks []Check) string {
	var out, missing int
	for _, c := range checks {
		switch {
		case c.Status == StatusMissing:
			missing++
		case !c.Pass():
			out++
		}
	}
	s := fmt.Sprintf("%d figures checked against their recorded ranges: %d in range, %d out of range or failed",
		len(checks)-missing, len(checks)-missing-out, out)
	if missing > 0 {
		s += fmt.Sprintf(", %d not measured", missing)
	}
	return s
}

// writeTable writes one table: a row per Row and a column per Col, in the
// order the figures were measured. A failed figure shows why; a figure
// out of its range is marked ✗.
func writeTable(b *strings.Builder, t TableInfo, figs []Figure, status map[string]Check) {
	var rows, cols []string
	cells := make(map[[2]string]string)
	for _, f := range figs {
		if f.Table != t.ID {
			continue
		}
		if !slices.Contains(rows, f.Row) {
			rows = append(rows, f.Row)
		}
		if !slices.Contains(cols, f.Col) {
			cols = append(cols, f.Col)
		}
		cell := formatValue(f.Value, f.Key())
		if f.Failed != "" {
			cell = failedCell(f.Value, f.Key(), f.Failed)
		} else if c, ok := status[f.Key()]; ok && !c.Pass() {
			cell += " ✗"
		}
		cells[[2]string{f.Row, f.Col}] = cell
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n\n| %s | %s |\n|---|", t.Title, t.RowName, strings.Join(cols, " | "))
	b.WriteString(strings.Repeat("---:|", len(cols)) + "\n")
	for _, r := range rows {
		b.WriteString("| " + r + " |")
		for _, c := range cols {
			v, ok := cells[[2]string{r, c}]
			if !ok {
				v = ""
			}
			b.WriteString(" " + v + " |")
		}
		b.WriteString("\n")
	}
	if t.Note != "" {
		fmt.Fprintf(b, "\n%s\n", t.Note)
	}
}

// failedCell shows a figure whose run failed: why and, when something was
// seen before the failure (the time until a kill, the peak RSS until
// then), that as a lower bound.
func failedCell(v float64, key, why string) string {
	if v > 0 {
		return "✗ ≥ " + formatValue(v, key) + " (" + why + ")"
	}
	return "✗ " + why
}
