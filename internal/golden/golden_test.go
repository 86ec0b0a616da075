package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Errorf(format string, a ...any) { r.failed = format }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	Check(t, path, []byte("a\nb\n"), true)
	if b, _ := os.ReadFile(path); string(b) != "a\nb\n" {
		t.Fatalf("update wrote %q", b)
	}
	Check(t, path, []byte("a\nb\n"), false)
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nc\n"), false)
	if r.failed == "" {
		t.Error("a difference did not fail")
	}
	if d := Diff("a\nb\n", "a\nc\n"); !strings.Contains(d, "2:\n- b\n+ c") {
		t.Errorf("Diff %q", d)
	}
}
