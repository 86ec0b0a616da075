package ownedpath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/regularfile"
)

func TestCheckDir(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := mk("good", 0o750)
	link := filepath.Join(base, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	cases := []struct {
		name, dir string
		want      error  // nil: accepted
		msg       string // in the error
	}{
		{"0750", good, nil, ""},
		{"a link to a good directory", link, nil, ""},
		{"world-writable", mk("world", 0o777), ErrUntrusted, "install -d -m 0750 -o "},
		{"group-writable", mk("group", 0o770), ErrUntrusted, "chmod go-w"},
		{"sticky /tmp-like", mk("sticky", 0o1777), ErrUntrusted, "writable by other users"},
		{"missing", filepath.Join(base, "none"), fs.ErrNotExist, "install -d"},
		{"a file", file, ErrUntrusted, "not a directory"},
	}
	if os.Getuid() == 0 {
		other := mk("other", 0o750)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name, dir string
			want      error
			msg       string
		}{"owned by another user", other, ErrUntrusted, "neither root nor"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckDir(c.dir)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.dir) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v: want %v naming %s and %q", err, c.want, c.dir, c.msg)
			}
		})
	}
}

// TestFiles: CheckFile and OpenFile refuse a symbolic link (never
// following it: the target is not changed), a file writable by others, a
// second hard link, a FIFO (without blocking) and another user's file.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("precious"), 0o600)
	p := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(p("good"), []byte("x"), 0o600)
	os.Symlink(target, p("symlink"))
	os.WriteFile(p("world"), nil, 0o600)
	os.Chmod(p("world"), 0o666)
	os.WriteFile(p("linked"), nil, 0o600)
	os.Link(p("linked"), p("linked2"))
	if err := syscall.Mkfifo(p("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		want error
		msg  string
	}{
		{"good", nil, ""},
		{"symlink", ErrUntrusted, "symbolic link"},
		{"world", ErrUntrusted, "chmod go-w"},
		{"linked", ErrUntrusted, "hard links"},
		{"fifo", regularfile.ErrNotRegular, ""},
		{"missing", fs.ErrNotExist, ""},
	}
	if os.Getuid() == 0 {
		os.WriteFile(p("other"), nil, 0o600)
		os.Chown(p("other"), 65534, 65534)
		cases = append(cases, struct {
			name string
			want error
			msg  string
		}{"other", ErrUntrusted, "neither root nor"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if c.want == nil {
					if err != nil {
						t.Errorf("%s refused: %v", what, err)
					}
					return
				}
				if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
					t.Errorf("%s: %v, want %v with %q", what, err, c.want, c.msg)
				}
			}
			check("CheckFile", CheckFile(p(c.name)))
			done := make(chan error, 1)
			go func() {
				f, err := OpenFile(p(c.name), os.O_RDWR|os.O_TRUNC, 0o600)
				if err == nil {
					f.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				check("OpenFile", err)
			case <-time.After(5 * time.Second):
				t.Fatal("OpenFile blocked")
			}
		})
	}
	if st, _ := os.Stat(p("world")); st == nil || st.Mode().Perm() != 0o666 {
		t.Errorf("the refused file was changed: %v", st)
	}
	os.WriteFile(p("good"), []byte("x"), 0o600)
	if f, err := OpenFile(p("good"), os.O_RDWR|os.O_TRUNC, 0o600); err != nil {
		t.Fatal(err)
	} else if st, _ := f.Stat(); st.Size() != 0 {
		t.Errorf("O_TRUNC did not truncate an accepted file")
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("the symbolic link's target was changed: %q", b)
	}
}
