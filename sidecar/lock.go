package sidecar

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is returned (wrapped) by LockState when another process holds
// the state file's lock: a sidecar already runs on it.
var ErrLocked = errors.New("state file in use by a running sidecar")

// StateLock is a held lock on a state file.
type StateLock struct{ f *os.File }

// lockPath is the lock file beside the state file.
func lockPath(stateFile string) string { return stateFile + ".lock" }

// LockState takes an exclusive lock on stateFile (through stateFile+".lock",
// created 0600 and holding the holder's pid), so that two sidecars never
// run on one state file, and asrpt giveback never runs beside a sidecar.
// The lock is released by Release, or by the kernel when the process
// ends, however it ends. It fails with ErrLocked, naming the holder's pid,
// when another process holds it.
func LockState(stateFile string) (*StateLock, error) {
	path := lockPath(stateFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
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
