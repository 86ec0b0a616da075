package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/sidecar"
)

// TestSecondInstanceRefused: with a sidecar holding the state file's lock,
// a second sidecar and asrpt giveback refuse to start, naming the holder.
func TestSecondInstanceRefused(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	conf := filepath.Join(dir, "asrpt.toml")
	body := "[slurm]\nurl = \"unix://" + filepath.Join(dir, "no.sock") + "\"\nconf_dir = \"" + dir + "\"\n[sidecar]\nstate_file = \"" + state + "\"\n[metrics]\nlisten = \"\"\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := sidecar.LockState(state)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, args := range [][]string{{"sidecar", "--config", conf}, {"giveback", "--config", conf}} {
		var out, errb bytes.Buffer
		rc := run(args, &out, &errb)
		if rc != 1 || !strings.Contains(errb.String(), "state file in use by a running sidecar") || !strings.Contains(errb.String(), "pid ") {
			t.Errorf("%v: rc %d, stderr %q", args, rc, errb.String())
		}
	}
}

// TestUntrustedStateDirRefused: a state directory every user can write
// (issue 25: contrib told admins to mkdir -p it, which accepts one a
// local user created first) stops the sidecar and asrpt giveback before
// they read it, and --check reports it, each naming the directory and the
// install -d command that fixes it (asrpt plan --fresh refuses it in
// sidecar.New: sidecar's TestUntrustedStateFiles).
func TestUntrustedStateDirRefused(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(stateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "asrpt.toml")
	body := "[slurm]\nurl = \"unix://" + filepath.Join(dir, "no.sock") + "\"\nconf_dir = \"" + dir + "\"\n[sidecar]\nstate_file = \"" +
		filepath.Join(stateDir, "state.json") + "\"\n[metrics]\nlisten = \"\"\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sidecar", "--config", conf}, {"giveback", "--config", conf}, {"sidecar", "--check", "--config", conf}} {
		var out, errb bytes.Buffer
		rc := run(args, &out, &errb)
		msg := out.String() + errb.String()
		if rc != 1 || !strings.Contains(msg, stateDir) || !strings.Contains(msg, "writable by other users") || !strings.Contains(msg, "install -d -m 0750") {
			t.Errorf("%v: rc %d, output %q", args, rc, msg)
		}
	}
}
