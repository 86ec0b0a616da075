package sidecar

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/asrpt/asrpt/internal/ownedpath"
)

// ErrLocked is returned (wrapped) by LockState when another process holds
// the state file's lock: a sidecar already runs on it.
var ErrLocked = errors.New("state file in use by a running sidecar")

// StateLock is a held lock on a state file.
type StateLock struct{ f *os.File }

// lockPath is the lock file beside the state file.
func lockPath(stateFile string) string { return stateFile + ".lock" }

// StatusTokenPath is the file beside stateFile where the sidecar serving
// /status and /plan on listen keeps the token that asrpt status and asrpt
// plan prove themselves with (internal/statusauth): one per address, so a
// dry run on another address beside the daemon has its own.
func StatusTokenPath(stateFile, listen string) string {
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, listen)
	return stateFile + ".status-" + name + ".token"
}

// CheckStateFiles checks the state file's directory and the files the
// sidecar keeps there before they are trusted (ownedpath): the directory
// owned by this process's user or root and writable by no one else, and
// the state file and its lock, where they exist, neither symbolic links
// nor hard links, owned likewise and writable by no one else. A planted
// or world-writable state file would make asrpt giveback send holds,
// releases and node-list clears to the jobs it lists. The errors wrap
// ownedpath.ErrUntrusted and name the path and the fix.
func CheckStateFiles(stateFile string) error {
	if err := ownedpath.CheckDir(filepath.Dir(stateFile)); err != nil {
		return fmt.Errorf("sidecar.state_file: %w", err)
	}
	for _, p := range []string{stateFile, lockPath(stateFile)} {
		if err := ownedpath.CheckFile(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sidecar.state_file: %w", err)
		}
	}
	return nil
}

// openState opens the state file for reading after CheckStateFiles'
// checks of its directory, without following a symbolic link and checked
// as ownedpath.OpenFile says.
func openState(path string) (*os.File, error) {
	if err := ownedpath.CheckDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("sidecar.state_file: %w", err)
	}
	f, err := ownedpath.OpenFile(path, os.O_RDONLY, 0)
	if err != nil && errors.Is(err, ownedpath.ErrUntrusted) {
		return nil, fmt.Errorf("sidecar.state_file: %w", err)
	}
	return f, err
}

// resolvedState returns stateFile with its directory's symbolic links
// resolved, so that two paths to one state file take one lock.
func resolvedState(stateFile string) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(stateFile))
	if err != nil {
		return "", fmt.Errorf("state lock: %w", err)
	}
	return filepath.Join(dir, filepath.Base(stateFile)), nil
}

// LockState takes an exclusive lock on stateFile (through stateFile+".lock",
// created 0600 and holding the holder's pid), so that two sidecars never
// run on one state file, and asrpt giveback never runs beside a sidecar.
// The state files are checked first (CheckStateFiles); the lock file is
// opened without following a symbolic link, in the directory with its
// links resolved, so that every path to one state file takes one lock.
// The lock is released by Release, or by the kernel when the process
// ends, however it ends. It fails with ErrLocked, naming the holder's pid,
// when another process holds it.
func LockState(stateFile string) (*StateLock, error) {
	if err := CheckStateFiles(stateFile); err != nil {
		return nil, err
	}
	resolved, err := resolvedState(stateFile)
	if err != nil {
		return nil, err
	}
	path := lockPath(resolved)
	f, err := ownedpath.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "another process"
		b := make([]byte, 32)
		if n, _ := f.ReadAt(b, 0); n > 0 {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b[:n]))); perr == nil && pid > 0 {
				holder = fmt.Sprintf("pid %d", pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (%s)", stateFile, ErrLocked, holder)
		}
		return nil, fmt.Errorf("state lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &StateLock{f: f}, nil
}

// Release gives the lock up (the lock file stays, empty of meaning).
func (l *StateLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
