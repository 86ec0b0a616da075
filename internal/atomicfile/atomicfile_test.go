package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/asrpt/asrpt/internal/regularfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error { io.WriteString(w, "half"); return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("failed write changed the file: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary file left behind: %v", entries)
	}
	if err := Write(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("content %q mode %v, want new and 0644", b, st.Mode().Perm())
	}
	if err := Write(filepath.Join(dir, "missing", "f"), func(io.Writer) error { return nil }); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// TestSetAllOrNothing: a set whose third file fails leaves none of the
// three, and the paths as they were; a set that succeeds puts all in place.
func TestSetAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b, c := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.csv"), filepath.Join(dir, "c.svg")
	if err := os.WriteFile(a, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	var s Set
	if err := s.Add(a, text("new a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(b, text("new b")); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(c, func(io.Writer) error { return errors.New("plot failed") }); err == nil || !strings.Contains(err.Error(), c) {
		t.Fatalf("error %v, want one naming %s", err, c)
	}
	if got, _ := os.ReadFile(a); string(got) != "old" {
		t.Errorf("a is %q after the failed set", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left after the failed set: %v", entries)
	}
	var ok Set
	for _, p := range []string{a, b, c} {
		if err := ok.Add(p, text("x "+p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := ok.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b, c} {
		if got, _ := os.ReadFile(p); string(got) != "x "+p {
			t.Errorf("%s = %q", p, got)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("files after the set: %v", entries)
	}
}

// TestNotRegular: a pipe (as /dev/null, a device) is never replaced by a
// write, alone or in a set; a link to a regular file is written.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }
	if err := Write(fifo, write); !errors.Is(err, regularfile.ErrNotRegular) {
		t.Errorf("Write over a pipe: %v", err)
	}
	var s Set
	ok := filepath.Join(dir, "ok")
	if err := s.Add(ok, write); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(fifo, write); !errors.Is(err, regularfile.ErrNotRegular) {
		t.Errorf("Set.Add of a pipe: %v", err)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v, %v", st, err)
	}
	if _, err := os.Stat(ok); !os.IsNotExist(err) {
		t.Errorf("the set's other file is in place after a refused Add: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
