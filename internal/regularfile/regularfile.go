// Package regularfile opens files that must be regular files (configuration,
// token and included files): a FIFO would block the open until a writer
// comes, and a device such as /dev/zero never ends.
package regularfile

import (
	"errors"
	"fmt"
	"os"
)

// ErrNotRegular is returned (wrapped) for a path that is not a regular file
// (a FIFO, a device, a directory).
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file, and returns it with
// its stat. It stats path before opening it, so a FIFO is refused instead
// of blocking, and again after, in case the path was replaced in between.
// A failed stat is left to the open, whose error ("open PATH: …") is the
// one reported.
func Open(path string) (*os.File, os.FileInfo, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, st.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}
