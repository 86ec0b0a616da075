package main

import (
	"strings"
	"testing"
)

func TestMarkdown(t *testing.T) {
	figs := []Figure{
		{Table: "replay asrpt forest", Row: "100000", Col: "wall s", Value: 3.3},
		{Table: "replay asrpt forest", Row: "100000", Col: "events/s", Value: 53621},
		{Table: "replay asrpt forest", Row: "1000000", Col: "wall s", Value: 31.24},
		{Table: "replay las forest", Row: "1000000", Col: "wall s", Value: 120, Failed: "killed after 120 s"},
	}
	ranges := []Range{
		{Key: "replay asrpt forest/100000: wall s", Max: ptr(10)},
		{Key: "replay asrpt forest/1000000: wall s", Max: ptr(20)},
		{Key: "replay las forest/1000000: wall s", Max: ptr(60)},
		{Key: "replay asrpt forest/10000000: wall s", Max: ptr(240)},
	}
	res := &Results{
		Machine: Machine{Date: "2026-01-02T03:04:05Z", Commit: "abc123", GoVersion: "go1.26", CPU: "AMD EPYC",
			Cores: 2, MemGiB: 24, LoadStart: "0.10 0.20 0.30", LoadEnd: "1.00 0.50 0.40"},
		Partial: "asrpt on 100000,1000000 jobs",
		Tables: []TableInfo{{ID: "replay asrpt forest", Title: "asrpt", RowName: "jobs", Note: "a note"},
			{ID: "replay las forest", Title: "las", RowName: "jobs"}, {ID: "empty", Title: "never shown", RowName: "x"}},
		Figures: figs,
		Checks:  CheckRanges(figs, ranges),
	}
	got := Markdown(res)
	for _, want := range []string{
		"on 2026-01-02T03:04:05Z at commit `abc123`: go1.26, AMD EPYC × 2 cores, 24 GiB; load average 0.10 0.20 0.30 at the start, 1.00 0.50 0.40 at the end.\n",
		"\n**Partial run**: asrpt on 100000,1000000 jobs.\n",
		"\n3 figures checked against their recorded ranges: 1 in range, 2 out of range or failed, 1 not measured.\n",
		"| replay asrpt forest/100000: wall s | 3.30 | ≤ 10 | ✓ |\n",
		"| replay asrpt forest/1000000: wall s | 31.2 | ≤ 20 | ✗ high |\n",
		"| replay las forest/1000000: wall s | ✗ ≥ 120 (killed after 120 s) | ≤ 60 | ✗ failed |\n",
		"| replay asrpt forest/10000000: wall s | — | ≤ 240 | not measured |\n",
		"\nasrpt:\n\n| jobs | wall s | events/s |\n|---|---:|---:|\n| 100000 | 3.30 | 53,600 |\n| 1000000 | 31.2 ✗ |  |\n\na note\n",
		"\nlas:\n\n| jobs | wall s |\n|---|---:|\n| 1000000 | ✗ ≥ 120 (killed after 120 s) |\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "never shown") {
		t.Error("a table without figures is printed")
	}
}
