package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"

	"github.com/asrpt/asrpt/internal/golden"
	"github.com/asrpt/asrpt/internal/statusauth"
	"github.com/asrpt/asrpt/sidecar"
)

var updateStatus = flag.Bool("update-status", false, "rewrite testdata/status.golden")

func sampleStatus(now time.Time) *sidecar.Status {
	return &sidecar.Status{Version: "v1.0.0", Started: now.Add(-2 * time.Hour), Policy: "asrpt", IntervalS: 30, WriteMode: "factor",
		LastCycle:    &sidecar.CycleStatus{Time: now.Add(-10 * time.Second), OK: true, DurationS: 0.25, Jobs: map[string]int{"pending": 12, "running": 30}, Writes: map[string]int{"site_factor": 3}, Failed: map[string]int{}},
		LastSuccess:  now.Add(-10 * time.Second),
		SlurmrestdUp: true,
		Stages:       map[string]int{"queued": 9, "dispatched": 2, "running": 25, "left_alone": 2},
		LeftAlone:    []sidecar.LeftAloneJob{{JobID: "4242", Code: reason.AdminPriority, Reason: "priority set by an admin"}, {JobID: "4250", Code: reason.Held, Reason: "held"}},
		Incidents:    []sidecar.IncidentStatus{{Key: "accounting", Since: now.Add(-5 * time.Minute), Occurrences: 10, LastError: "slurmdbd: timeout"}},
		Token:        &sidecar.TokenStatus{File: "/etc/asrpt/slurm.jwt", User: "asrpt", Expires: now.Add(20 * time.Hour)},
	}
}

func TestWriteStatusGolden(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	if err := writeStatus(&buf, sampleStatus(now), now); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "status.golden"), buf.Bytes(), *updateStatus)
}

// daemonAt serves h as the daemon does (protected by a token written
// beside stateFile for its address) and returns its address; squat serves
// h without the token, as another process holding the port would.
func daemonAt(t *testing.T, stateFile string, h http.Handler, squat bool) (*httptest.Server, string) {
	t.Helper()
	tok, err := statusauth.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if squat {
		tok[0]++ // a token the state directory does not hold
	} else {
		h = protected(tok, h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	if squat {
		tok[0]--
	}
	if err := statusauth.Write(sidecar.StatusTokenPath(stateFile, addr), tok); err != nil {
		t.Fatal(err)
	}
	return srv, addr
}

// daemonConf writes a configuration for a sidecar on listen with its
// state file in dir.
func daemonConf(t *testing.T, dir, listen string) string {
	t.Helper()
	conf := filepath.Join(dir, "asrpt.toml")
	body := "[slurm]\nurl = \"unix:///nonexistent.sock\"\nconf_dir = \"/nonexistent\"\n[sidecar]\nstate_file = \"" +
		filepath.Join(dir, "state.json") + "\"\n[metrics]\nlisten = \"" + listen + "\"\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// TestStatusCommand: asrpt status asks the daemon on metrics.listen with
// the token in its state directory, prints its JSON as it is with --json,
// and says so when nothing answers.
func TestStatusCommand(t *testing.T) {
	now := time.Now()
	dir := t.TempDir()
	srv, addr := daemonAt(t, filepath.Join(dir, "state.json"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(sampleStatus(now))
	}), false)
	conf := daemonConf(t, dir, addr)
	var out, errb bytes.Buffer
	if rc := run([]string{"status", "--config", conf}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "4242         admin_priority   priority set by an admin") {
		t.Fatalf("status: rc %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := run([]string{"status", "--config", conf, "--json"}, &out, &errb); rc != 0 {
		t.Fatalf("status --json: rc %d: %s", rc, errb.String())
	}
	var st sidecar.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Stages["queued"] != 9 {
		t.Errorf("status --json: %v %+v", err, st)
	}
	srv.Close()
	errb.Reset()
	if rc := run([]string{"status", "--config", conf}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "is it running?") {
		t.Errorf("nothing listening: rc %d: %s", rc, errb.String())
	}
	daemonConf(t, dir, "")
	errb.Reset()
	if rc := run([]string{"status", "--config", conf}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "metrics.listen is empty") {
		t.Errorf("no metrics.listen: rc %d: %s", rc, errb.String())
	}
}

// TestStatusSquatter: a process that took the status port before the
// sidecar (issue 25: it served asrpt status forged text) cannot prove the
// state directory's token: asrpt status refuses its answer, asrpt plan
// says so and computes a plan itself. A request without the token gets
// nothing from the daemon's /status and /plan; /metrics and /healthz
// stay open.
func TestStatusSquatter(t *testing.T) {
	dir := t.TempDir()
	forged := sampleStatus(time.Now())
	forged.Version = "forged"
	_, addr := daemonAt(t, filepath.Join(dir, "state.json"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(statusauth.HeaderProof, strings.Repeat("0", 64))
		_ = json.NewEncoder(w).Encode(forged)
	}), true)
	conf := daemonConf(t, dir, addr)
	var out, errb bytes.Buffer
	if rc := run([]string{"status", "--config", conf}, &out, &errb); rc != 1 || strings.Contains(out.String(), "forged") ||
		!strings.Contains(errb.String(), "does not prove") {
		t.Errorf("status from a squatter: rc %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := run([]string{"plan", "--config", conf}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "does not prove") ||
		!strings.Contains(errb.String(), "computing a plan now") {
		t.Errorf("plan from a squatter: rc %d\n%s%s", rc, out.String(), errb.String())
	}

	tok, _ := statusauth.NewToken()
	h := protected(tok, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("secret\n")) }))
	for path, want := range map[string]int{"/status": 401, "/plan": 401, "/metrics": 200, "/healthz": 200} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want || want == 401 && strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("%s without the token: %d %q, want %d", path, rec.Code, rec.Body.String(), want)
		}
	}
}

// TestFrontHandler: before the sidecar runs, /healthz and /status answer
// 503 with the reason and /metrics an empty page; then the sidecar's own.
func TestFrontHandler(t *testing.T) {
	f := &frontHandler{notReady: "connecting to slurmrestd at http://ctl:6820"}
	for path, want := range map[string]int{"/healthz": 503, "/status": 503, "/metrics": 200, "/x": 404} {
		rec := httptest.NewRecorder()
		f.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want || want == 503 && !strings.Contains(rec.Body.String(), "connecting to slurmrestd") {
			t.Errorf("%s: %d %q, want %d", path, rec.Code, rec.Body.String(), want)
		}
	}
	f.inner.Store(http.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })))
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("after start: %d %q", rec.Code, rec.Body.String())
	}
}

// TestPlanAsksTheDaemon: asrpt plan shows the running sidecar's plan when
// one answers on metrics.listen, and says so on stderr.
func TestPlanAsksTheDaemon(t *testing.T) {
	plan := sidecar.ServedPlan{Time: time.Now(), Rows: []decision.PlanRow{{JobID: "77", User: "u", Name: "n", Shape: "plain", GPUs: 2,
		Predicted: 60, Known: true, Stage: "released", Rank: 1, PriorityNow: 5, PriorityNew: 5}}}
	dir := t.TempDir()
	_, addr := daemonAt(t, filepath.Join(dir, "state.json"), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(plan)
	}), false)
	conf := daemonConf(t, dir, addr)
	var out, errb bytes.Buffer
	if rc := run([]string{"plan", "--config", conf}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "77") ||
		!strings.Contains(errb.String(), "the running sidecar's plan") {
		t.Fatalf("rc %d\n%s%s", rc, out.String(), errb.String())
	}
	// --fresh computes one itself: here it cannot (no cluster model).
	errb.Reset()
	if rc := run([]string{"plan", "--config", conf, "--fresh"}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "cluster model") {
		t.Errorf("--fresh: rc %d: %s", rc, errb.String())
	}
}
