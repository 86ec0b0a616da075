// Package atomicfile writes files all or nothing: through a temporary file
// in the same directory, synced and renamed into place, so that a failed or
// interrupted write never leaves a half-written file behind.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/asrpt/asrpt/internal/regularfile"
)

// replaceable returns an error wrapping regularfile.ErrNotRegular, naming
// path, when path exists and is not a regular file (a device such as
// /dev/null, a pipe, a directory): a temporary file renamed over it would
// replace it, so it is never written.
func replaceable(path string) error {
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("write %s: %w (%s; never replaced)", path, regularfile.ErrNotRegular, st.Mode().Type())
	}
	return nil
}

// Write creates or replaces path (mode 0644) with what write writes. The
// writer is buffered. On any error the temporary file is removed, path is
// left as it was, and the error names path. A path that exists and is
// not a regular file is refused (regularfile.ErrNotRegular). A symbolic
// link at path is replaced, never followed.
func Write(path string, write func(io.Writer) error) error {
	return WritePerm(path, 0o644, write)
}

// WritePerm is Write with the file's mode perm (0600: a secret); the
// temporary file has no more than perm from its creation on.
func WritePerm(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	if err := replaceable(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(perm); err != nil { // CreateTemp makes it 0600
		return fmt.Errorf("write %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(tmp, 1<<16)
	if err = write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Set writes several files all or nothing: Add writes each to a temporary
// file beside its path, Commit puts them all in place, Abort (or a failed
// Add) removes every temporary file and leaves every path as it was. A
// Set is not safe for concurrent use.
type Set struct {
	staged []staged
}

type staged struct{ tmp, path string }

// Add writes path's content, through write, to a temporary file beside
// path. On error nothing of the set stays behind: every file added so far
// is removed too. A path that exists and is not a regular file is
// refused (regularfile.ErrNotRegular).
func (s *Set) Add(path string, write func(io.Writer) error) error {
	if err := replaceable(path); err != nil {
		s.Abort()
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		s.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	s.staged = append(s.staged, staged{tmp: tmp.Name(), path: path})
	err = func() error {
		defer tmp.Close()
		if err := tmp.Chmod(0o644); err != nil {
			return err
		}
		bw := bufio.NewWriterSize(tmp, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return tmp.Sync()
	}()
	if err != nil {
		s.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Commit renames every added file into place, in the order added.
func (s *Set) Commit() error {
	for i, f := range s.staged {
		if err := os.Rename(f.tmp, f.path); err != nil {
			s.staged = s.staged[i:]
			s.Abort()
			return fmt.Errorf("write %s: %w", f.path, err)
		}
	}
	s.staged = nil
	return nil
}

// Abort removes every added file that is not in place yet.
func (s *Set) Abort() {
	for _, f := range s.staged {
		os.Remove(f.tmp)
	}
	s.staged = nil
}
