package main

import (
	"bytes"
	"net"
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

// TestSquattedPortRefused: a status port another process already holds
// (issue 25: a local user bound 127.0.0.1:9870 first) stops the sidecar
// with an error naming the address, instead of running without it.
func TestSquattedPortRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "slurm.conf"), []byte("ClusterName=t\nGresTypes=gpu\nNodeName=n[1-2] Gres=gpu:4 CPUs=8\nPartitionName=gpu Nodes=n[1-2]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gres.conf"), []byte("NodeName=n[1-2] Name=gpu File=/dev/nvidia[0-3]\n"), 0o644)
	conf := filepath.Join(dir, "asrpt.toml")
	body := "[slurm]\nurl = \"unix://" + filepath.Join(dir, "no.sock") + "\"\nconf_dir = \"" + dir + "\"\n[sidecar]\nstate_file = \"" +
		filepath.Join(dir, "state.json") + "\"\n[metrics]\nlisten = \"" + ln.Addr().String() + "\"\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"sidecar", "--config", conf}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "metrics.listen "+ln.Addr().String()) ||
		!strings.Contains(errb.String(), "another process holds it") {
		t.Errorf("rc %d: %s", rc, errb.String())
	}
}
