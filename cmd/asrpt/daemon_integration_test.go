//go:build integration

package main

// The asrpt sidecar binary as systemd runs it, against a real Slurm lab:
// readiness notified, SIGHUP reloads (and refuses a bad file, keeping the
// running configuration), a second instance and asrpt giveback refused
// while it runs, SIGTERM stops it cleanly.
//
//	SLURMLAB_LABS=22.05 go test -tags integration -count=1 -run TestDaemon -v ./cmd/asrpt/

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asrpt/asrpt/test/slurmlab"
)

// syncBuf is a bytes.Buffer safe for a process writing and a test reading.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemonLab is the lab these tests use: the first of SLURMLAB_LABS, else
// 22.05.
func daemonLab(t *testing.T) *slurmlab.Lab {
	v := "22.05"
	if s := strings.Fields(os.Getenv("SLURMLAB_LABS")); len(s) > 0 {
		v = s[0]
	}
	return slurmlab.Require(t, v)
}

func TestDaemon(t *testing.T) {
	lab := daemonLab(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "asrpt")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tok, err := lab.Token()
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "slurm.jwt")
	if err := os.WriteFile(tokenFile, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "asrpt.toml")
	// A free port for /metrics and /status.
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := pl.Addr().String()
	pl.Close()
	// Not a dry run (a dry run takes no state lock), but its scope is a
	// partition without jobs: it writes nothing to the lab. Factor mode,
	// falling back to priorities where the REST API has no site factor.
	write := func(sidecarKeys string) {
		body := fmt.Sprintf("[slurm]\nurl = %q\ntoken_file = %q\nconf_dir = %q\n[sidecar]\ninterval = \"1s\"\nstate_file = %q\npriority_fallback = true\n%s[scope]\npartitions = [\"asrpt-none\"]\n[predictor]\nname = \"mean\"\nhistory = \"1h\"\n[metrics]\nlisten = %q\n[log]\nformat = \"json\"\n",
			lab.URL, tokenFile, lab.ConfDir, filepath.Join(dir, "state.json"), sidecarKeys, listen)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")

	// A fresh plan before the daemon runs reads Slurm and leaves nothing
	// in the state directory (no state, no lock, no token file).
	if out, err := exec.Command(bin, "plan", "--fresh", "--config", conf).CombinedOutput(); err != nil {
		t.Fatalf("asrpt plan --fresh: %v\n%s", err, out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "state.json*")); len(left) > 0 {
		t.Errorf("asrpt plan --fresh left %v behind", left)
	}

	sock := filepath.Join(dir, "notify")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	notes := make(chan string, 32)
	go func() {
		buf := make([]byte, 512)
		for {
			n, err := ln.Read(buf)
			if err != nil {
				close(notes)
				return
			}
			notes <- string(buf[:n])
		}
	}()
	waitNote := func(prefix string) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case n := <-notes:
				if strings.HasPrefix(n, prefix) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q notification within a minute", prefix)
			}
		}
	}

	var logs syncBuf
	cmd := exec.Command(bin, "sidecar", "--config", conf)
	cmd.Env = append(os.Environ(), "NOTIFY_SOCKET="+sock)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()
	waitNote("READY=1")
	waitLog := func(msg string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(logs.String(), msg) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in the log:\n%s", msg, logs.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	mode := "writing site factors to Slurm"
	if lab.Version == "22.05" {
		waitLog("the REST API cannot write site factors; writing priorities instead")
		mode = "writing priorities to Slurm"
	}

	// A second instance and a giveback are refused while it runs.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// asrpt status shows the daemon's own view once a cycle has run.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.CommandContext(ctx, bin, "status", "--config", conf).CombinedOutput()
		if err == nil && strings.Contains(string(out), "last cycle:     ok") && strings.Contains(string(out), "slurmrestd:     up") &&
			strings.Contains(string(out), mode) &&
			strings.Contains(string(out), "token:          "+tokenFile+", user ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("asrpt status: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// asrpt plan shows the daemon's own plan (a cycle has run).
	if out, err := exec.CommandContext(ctx, bin, "plan", "--config", conf).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "the running sidecar's plan") {
		t.Errorf("asrpt plan beside the daemon: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"sidecar", "--config", conf}, {"giveback", "--config", conf}} {
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "state file in use by a running sidecar") {
			t.Errorf("%v beside the running sidecar: %v\n%s", args, err, out)
		}
	}

	// A good reload takes effect; a bad one is refused and it runs on.
	write("write_limit = 7\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitNote("RELOADING=1")
	waitLog(`"applied":["sidecar.write_limit"]`)
	if err := os.WriteFile(conf, []byte("[sidecar]\ninterval = \"-1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog("configuration reload refused")
	select {
	case err := <-done:
		t.Fatalf("the sidecar exited after a bad reload: %v\n%s", err, logs.String())
	case <-time.After(2 * time.Second):
	}

	// SIGTERM: a clean stop.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no exit within a minute of SIGTERM\n%s", logs.String())
	}
	waitNote("STOPPING=1")
	waitLog("sidecar stopped")
}

// TestCheckOnline: asrpt sidecar --check --online against a lab reports
// the release and the token, and names the setting at fault for a wrong
// URL, a garbage token and a state directory that cannot be written.
func TestCheckOnline(t *testing.T) {
	lab := daemonLab(t)
	dir := t.TempDir()
	tok, err := lab.Token()
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.jwt")
	bad := filepath.Join(dir, "bad.jwt")
	user := filepath.Join(dir, "user.jwt") // a user without AdminLevel
	utok, err := lab.MintToken("alice", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(utok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(good, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("SLURM_JWT=garbage.token.here"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	// Factor mode (the default) on a REST API without site factors: the
	// sidecar would refuse to start, unless priority_fallback.
	factor, factorOK := "write mode: factor (Slurm "+lab.Release, true
	fallback := factor
	if lab.Version == "22.05" {
		factor, factorOK = "sidecar.write_mode: Slurm "+lab.Release+" (REST API v0.0.38) cannot write site factors", false
		fallback = "with sidecar.priority_fallback = true the sidecar writes priorities instead"
	}
	for _, tc := range []struct {
		name, url, token, state string
		ok                      bool
		want                    []string
		keys                    string
	}{
		{"good", lab.URL, good, filepath.Join(dir, "state.json"), true, []string{"slurmrestd: Slurm " + lab.Release, "token: user ", "writable", "may update other users' jobs", fallback}, "priority_fallback = true\n"},
		{"factor mode without fallback", lab.URL, good, filepath.Join(dir, "state.json"), factorOK, []string{factor}, ""},
		{"priority mode", lab.URL, good, filepath.Join(dir, "state.json"), true, []string{"write mode: priority"}, "write_mode = \"priority\"\n"},
		{"no admin level", lab.URL, user, filepath.Join(dir, "state.json"), false, []string{"slurm.token_file: alice has AdminLevel=None and may not change other users' jobs"}, ""},
		{"nothing listening", closed, good, filepath.Join(dir, "state.json"), false, []string{"slurm.url: ", "cannot reach slurmrestd at " + closed}, ""},
		{"garbage token", lab.URL, bad, filepath.Join(dir, "state.json"), false, []string{"slurm.token_file: ", "refused the token in " + bad}, ""},
		{"state directory not writable", lab.URL, good, "/proc/asrpt-state.json", false, []string{"sidecar.state_file: the state directory /proc is not writable"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(dir, "asrpt.toml")
			body := fmt.Sprintf("[slurm]\nurl = %q\ntoken_file = %q\nconf_dir = %q\ntimeout = \"5s\"\n[sidecar]\nstate_file = %q\n%s", tc.url, tc.token, lab.ConfDir, tc.state, tc.keys)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			rc := run([]string{"sidecar", "--config", conf, "--check", "--online"}, &out, &errb)
			if (rc == 0) != tc.ok {
				t.Errorf("rc %d\n%s%s", rc, out.String(), errb.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
