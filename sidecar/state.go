package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/ownedpath"
	"github.com/asrpt/asrpt/internal/regularfile"
)

// maxStateFile bounds the state file read, bytes (256 MiB: about half a
// million jobs).
const maxStateFile = 256 << 20

// errNoState means there is no state file yet.
var errNoState = errors.New("no state file")

// ErrCorruptState marks a state file that cannot be used
// (decision.ErrCorruptState).
var ErrCorruptState = decision.ErrCorruptState

// readState reads the state file at path, refusing one it cannot trust
// (openState; an error wrapping ownedpath.ErrUntrusted).
func readState(path string) (*decision.Saved, error) {
	f, err := openState(path)
	switch {
	case errors.Is(err, ownedpath.ErrUntrusted):
		return nil, err
	case errors.Is(err, fs.ErrNotExist):
		return nil, errNoState
	case errors.Is(err, regularfile.ErrNotRegular):
		return nil, fmt.Errorf("state: %w: %w", ErrCorruptState, err)
	case err != nil:
		return nil, fmt.Errorf("state: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if len(data) > maxStateFile {
		return nil, fmt.Errorf("state %s: %w: larger than %d bytes", path, ErrCorruptState, maxStateFile)
	}
	var st decision.Saved
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("state %s: %w: %w", path, ErrCorruptState, err)
	}
	if st.Version != decision.StateVersion {
		return nil, fmt.Errorf("state %s: %w: version %d, want %d", path, ErrCorruptState, st.Version, decision.StateVersion)
	}
	return &st, nil
}

// writeState writes st to path atomically: a temporary file in the same
// directory, synced, renamed over path, and the directory synced; it
// stamps st with the time it is written (SavedAtUnix).
func writeState(path string, st *decision.Saved) error {
	st.SavedAtUnix = time.Now().Unix()
	data, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".state-*.tmp")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// moveAside renames a bad state file to path.corrupt-<unix time> and
// returns the new name.
func moveAside(path string) (string, error) {
	to := fmt.Sprintf("%s.corrupt-%d", path, time.Now().Unix())
	return to, os.Rename(path, to)
}
