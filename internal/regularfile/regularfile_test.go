package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{{file, nil}, {fifo, ErrNotRegular}, {"/dev/zero", ErrNotRegular}, {dir, ErrNotRegular}, {filepath.Join(dir, "none"), os.ErrNotExist}} {
		f, st, err := Open(c.path)
		if c.want == nil && (err != nil || st.Size() != 1) || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v", c.path, err)
		}
		if f != nil {
			f.Close()
		}
	}
}
