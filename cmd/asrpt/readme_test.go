package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEDefaultRun: the README's table of the default run is what
// `asrpt replay` prints today, but for the events/s column (the machine's
// speed).
func TestREADMEDefaultRun(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the built-in workload through every policy (a few seconds)")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "`go run ./cmd/asrpt replay` (32 nodes")
	if start < 0 {
		t.Fatal("README: no default-run section")
	}
	block := readme[start:]
	block = block[strings.Index(block, "```\n")+4:]
	block = block[:strings.Index(block, "```")]
	var out, errb bytes.Buffer
	if rc := run([]string{"replay", "--progress", "never"}, &out, &errb); rc != 0 {
		t.Fatalf("replay: rc %d: %s", rc, errb.String())
	}
	want, got := dropLastColumn(block), dropLastColumn(out.String())
	if want != got {
		t.Errorf("README's default run differs from what asrpt replay prints:\nREADME:\n%s\nnow:\n%s", want, got)
	}
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
