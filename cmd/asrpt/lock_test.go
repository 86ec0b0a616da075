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
