package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/internal/ownedpath"
)

// TestLockNoFollow: a lock file planted as a symbolic link to another
// file (issue 25: the sidecar, as root, truncated the target and wrote
// its pid there) is refused, and the target is left as it was.
func TestLockNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(target, []byte("root:x:0:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state.json")
	if err := os.Symlink(target, lockPath(state)); err != nil {
		t.Fatal(err)
	}
	_, err := LockState(state)
	if !errors.Is(err, ownedpath.ErrUntrusted) || !strings.Contains(err.Error(), lockPath(state)) {
		t.Errorf("lock through a symbolic link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "root:x:0:0\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// TestLockResolvedPath: two paths to one state file through a symbolic
// link to its directory take one lock; a state file that is itself a
// symbolic link (another lock file beside it) is refused.
func TestLockResolvedPath(t *testing.T) {
	real := t.TempDir()
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Fatal(err)
	}
	l, err := LockState(filepath.Join(real, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := LockState(filepath.Join(alias, "state.json")); !errors.Is(err, ErrLocked) {
		t.Errorf("the same state file through a linked directory: %v, want ErrLocked", err)
	}
	if err := os.WriteFile(filepath.Join(real, "state.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.Symlink(filepath.Join(real, "state.json"), filepath.Join(other, "state.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := LockState(filepath.Join(other, "state.json")); !errors.Is(err, ownedpath.ErrUntrusted) {
		t.Errorf("a state file that is a symbolic link: %v, want ErrUntrusted", err)
	}
}

// TestUntrustedStateFiles: a state directory or file another user could
// write is refused by the lock, by the sidecar's start (New, also in a
// dry run, as asrpt plan --fresh runs it) and by asrpt giveback's
// GivebackFile before it sends anything to Slurm (issue 25: a planted,
// world-writable state.json made giveback hold, release and clear the
// node lists of the jobs it listed). The errors name the path and the fix.
func TestUntrustedStateFiles(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir, state string)
		msg   string
	}{
		{"world-writable directory", func(t *testing.T, dir, _ string) { chmod(t, dir, 0o777) }, "install -d -m 0750 -o "},
		{"world-writable state file", func(t *testing.T, _, state string) { plant(t, state); chmod(t, state, 0o666) }, "chmod go-w"},
		{"state file as a symbolic link", func(t *testing.T, _, state string) {
			src := filepath.Join(t.TempDir(), "planted.json")
			plant(t, src)
			if err := os.Symlink(src, state); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"state file with a second name", func(t *testing.T, dir, state string) {
			plant(t, state)
			if err := os.Link(state, filepath.Join(dir, "other.json")); err != nil {
				t.Fatal(err)
			}
		}, "hard links"},
	}
	if os.Getuid() == 0 {
		cases = append(cases, struct {
			name  string
			setup func(t *testing.T, dir, state string)
			msg   string
		}{"directory of another user", func(t *testing.T, dir, _ string) {
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "neither root nor"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 2, 4, true, nil)
			dir := filepath.Dir(h.cfg.StateFile)
			c.setup(t, dir, h.cfg.StateFile)
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ownedpath.ErrUntrusted) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), c.msg) {
					t.Errorf("%s: %v, want ErrUntrusted naming %s and %q", what, err, dir, c.msg)
				}
			}
			_, err := LockState(h.cfg.StateFile)
			check("LockState", err)
			check("CheckStateFiles", CheckStateFiles(h.cfg.StateFile))
			for _, dry := range []bool{false, true} {
				cfg := h.cfg
				cfg.DryRun = dry
				_, err := New(cfg, Options{Cluster: cluster.Uniform(2, 4), Slurm: h.fake, Predictor: h.pred, Log: zerolog.Nop()})
				check(fmt.Sprintf("New (dry run %v)", dry), err)
			}
			before := h.fake.Calls("UpdateJob") + h.fake.Calls("Jobs")
			_, err = GivebackFile(context.Background(), h.fake, h.cfg.StateFile, h.cfg.Scope, false, zerolog.Nop())
			check("GivebackFile", err)
			if n := h.fake.Calls("UpdateJob") + h.fake.Calls("Jobs"); n != before {
				t.Errorf("giveback made %d calls to Slurm from an untrusted state file", n-before)
			}
		})
	}
}

// plant writes a state file listing job 1 with asrpt's priority.
func plant(t *testing.T, path string) {
	t.Helper()
	body := fmt.Sprintf(`{"version":%d,"policy":"asrpt","clock":0,"next_seq":1,"next_dispatch_seq":0,"saved_at":%d,`+
		`"jobs":[{"job":{"id":"1"},"seq":0,"est_s":1,"known":true,"phase":"queued","remaining_s":1,"released":false,"order":0,"priority":%d}]}`,
		decision.StateVersion, time.Now().Unix(), decision.LowBand.Lo+1)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
