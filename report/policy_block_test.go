package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestPolicyBlocks: the preemption and closed-loop blocks list the
// policies that preempted or polled, each under its header, and are left
// out when none did.
func TestPolicyBlocks(t *testing.T) {
	r := &Report{Policies: []Summary{
		{Policy: "asrpt"},
		{Policy: "asrpt-preempt", Preemptions: 7, PreemptedJobs: 5, MostPreemptions: 2, LostGPUHours: 1.5},
		{Policy: "asrpt-sidecar", Loop: &LoopFigures{Cycles: 40, Writes: map[string]int{"site_factor": 30, "nodes": 3}}},
	}}
	var buf bytes.Buffer
	if err := r.writePreemption(&buf); err != nil {
		t.Fatal(err)
	}
	if err := r.writeLoop(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := [][]string{
		{"preemption:"},
		{"policy", "preemptions", "jobs preempted", "most per job", "lost GPU-h"},
		{"asrpt-preempt", "7", "5", "2", "1.5"},
		{},
		{"closed loop:"},
		{"policy", "cycles", "site factors", "priorities", "node lists"},
		{"asrpt-sidecar", "40", "30", "0", "3"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, words := range want {
		fields := strings.Join(strings.Fields(lines[i]), " ")
		for _, w := range words {
			if !strings.Contains(fields, w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
		if i == 2 || i == 6 {
			if n := len(strings.Fields(lines[i])); n != 5 {
				t.Errorf("line %d %q: %d cells, want 5", i, lines[i], n)
			}
		}
	}
	buf.Reset()
	quiet := &Report{Policies: []Summary{{Policy: "fifo"}}}
	if err := quiet.writePreemption(&buf); err != nil || buf.Len() != 0 {
		t.Errorf("no policy preempted: %q, %v; want nothing", buf.String(), err)
	}
	if err := quiet.writeLoop(&buf); err != nil || buf.Len() != 0 {
		t.Errorf("no closed loop: %q, %v; want nothing", buf.String(), err)
	}
}
