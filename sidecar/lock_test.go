package sidecar

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLockState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	l, err := LockState(state)
	if err != nil {
		t.Fatal(err)
	}
	// A second lock, from this process through another descriptor, is
	// refused with the holder's pid (flock locks belong to the open file).
	_, err = LockState(state)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), state) {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockState(state)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	defer l2.Release()
	// Another process sees it locked too.
	if _, err := exec.LookPath("flock"); err == nil {
		out, err := exec.Command("flock", "-n", state+".lock", "true").CombinedOutput()
		if err == nil {
			t.Errorf("flock(1) took the lock a sidecar holds: %s", out)
		}
	}
}

// TestLockStateCannotOpen: a lock file that cannot be opened (a directory
// in its place) is an error of its own, not ErrLocked.
func TestLockStateCannotOpen(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.Mkdir(state+".lock", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := LockState(state); err == nil || errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), state+".lock") {
		t.Errorf("lock with a directory in the way: %v", err)
	}
}
