// Package golden compares a test's output with a golden file under
// testdata, and rewrites the file when the test runs with its update flag
// (after a deliberate change, reviewed in the diff).
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path; with update it writes got
// there first (creating the directory). A difference fails t with the
// lines that differ.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with its update flag to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("output differs from %s (update after a deliberate change):\n%s", path, Diff(string(want), string(got)))
	}
}

// maxDiffLines bounds the differing lines Diff lists.
const maxDiffLines = 20

// Diff lists the first lines that differ between want and got, by line
// number (at most 20: enough to see what changed).
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < maxDiffLines; i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "%d:\n- %s\n+ %s\n", i+1, a, c)
			shown++
		}
	}
	return b.String()
}
