package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestREADMEDefaultRun: the README's tables of the default run are what
// `asrpt replay` prints today, but for the events/s column (the machine's
// speed): the first block is the output up to the per-policy fairness
// tables, the second those tables of fifo and asrpt.
func TestREADMEDefaultRun(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the built-in workload through every policy (a few seconds)")
	}
	readme := readREADME(t)
	start := strings.Index(readme, "`go run ./cmd/asrpt replay` (32 nodes")
	if start < 0 {
		t.Fatal("README: no default-run section")
	}
	var blocks []string
	rest := readme[start:]
	for range 2 {
		i := strings.Index(rest, "```\n")
		if i < 0 {
			t.Fatal("README: the default-run section has fewer than two blocks")
		}
		rest = rest[i+4:]
		j := strings.Index(rest, "```")
		blocks = append(blocks, rest[:j])
		rest = rest[j+3:]
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"replay", "--progress", "never"}, &out, &errb); rc != 0 {
		t.Fatalf("replay: rc %d: %s", rc, errb.String())
	}
	head, details, ok := strings.Cut(out.String(), "\nfairness of ")
	if !ok {
		t.Fatalf("replay prints no per-policy fairness tables:\n%s", out.String())
	}
	for i, c := range []struct{ readme, now string }{
		{blocks[0], head},
		{blocks[1], policyDetails("fairness of "+details, "fifo", "asrpt")},
	} {
		if want, got := dropLastColumn(c.readme), dropLastColumn(c.now); want != got {
			t.Errorf("README's default run, block %d, differs from what asrpt replay prints:\nREADME:\n%s\nnow:\n%s", i+1, want, got)
		}
	}
}

// policyDetails keeps, of the per-policy fairness tables, those of the
// policies named.
func policyDetails(s string, policies ...string) string {
	var b strings.Builder
	keep := false
	for _, l := range strings.SplitAfter(s, "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(l, "fairness of "), ":"); ok && strings.HasPrefix(l, "fairness of ") {
			keep = slices.Contains(policies, name)
		}
		if keep {
			b.WriteString(l)
		}
	}
	return b.String()
}

// dropLastColumn removes the last field of the table rows (events/s) and
// trims the lines.
func dropLastColumn(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Fields(l)
		if len(f) > 10 { // a table row or its header
			f = f[:len(f)-1]
		}
		lines = append(lines, strings.Join(f, " "))
	}
	return strings.Join(lines, "\n")
}

// TestREADMEWhy: the README's --why example is what asrpt replay prints
// today.
func TestREADMEWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the built-in workload through two policies")
	}
	readme := readREADME(t)
	const cmd = "`go run ./cmd/asrpt replay --policies fifo,asrpt --why 4939`"
	_, rest, ok := strings.Cut(readme, cmd)
	if !ok {
		t.Fatal("README: no --why example")
	}
	_, rest, _ = strings.Cut(rest, "```\n")
	block, _, _ := strings.Cut(rest, "```")
	var out, errb bytes.Buffer
	if rc := run([]string{"replay", "--progress", "never", "--policies", "fifo,asrpt", "--why", "4939"}, &out, &errb); rc != 0 {
		t.Fatalf("replay: rc %d: %s", rc, errb.String())
	}
	_, now, ok := strings.Cut(out.String(), "\nwhy job ")
	if !ok {
		t.Fatalf("replay --why prints no story:\n%s", out.String())
	}
	if want, got := strings.TrimSpace(block), strings.TrimSpace("why job "+now); want != got {
		t.Errorf("README's --why example differs from what asrpt replay prints:\nREADME:\n%s\nnow:\n%s", want, got)
	}
}

// readREADME returns the project's README.
func readREADME(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEPaired: the README's paired-comparison tables are what the
// default asrpt replay prints today.
func TestREADMEPaired(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the built-in workload through every policy (a few seconds)")
	}
	readme := readREADME(t)
	_, rest, ok := strings.Cut(readme, "### Who would wait longer: the paired comparison")
	if !ok {
		t.Fatal("README: no paired-comparison section")
	}
	_, rest, _ = strings.Cut(rest, "```\n")
	block, _, _ := strings.Cut(rest, "```")
	var out, errb bytes.Buffer
	if rc := run([]string{"replay", "--progress", "never"}, &out, &errb); rc != 0 {
		t.Fatalf("replay: rc %d: %s", rc, errb.String())
	}
	_, now, ok := strings.Cut(out.String(), "\npaired with ")
	now, _, _ = strings.Cut(now, "\nfifo against ")
	if !ok {
		t.Fatalf("replay prints no paired comparison:\n%s", out.String())
	}
	if want, got := strings.TrimSpace(block), strings.TrimSpace("paired with "+now); want != got {
		t.Errorf("README's paired comparison differs from what asrpt replay prints:\nREADME:\n%s\nnow:\n%s", want, got)
	}
}
