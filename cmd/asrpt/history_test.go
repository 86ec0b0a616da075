package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/trace"
)

// windowClient answers AccountingJobs from a fixed list of (id, end) pairs
// and records the windows asked for.
type windowClient struct {
	slurmclient.Client
	ends    map[string]time.Time
	windows [][2]time.Time
}

func (w *windowClient) AccountingJobs(_ context.Context, from, to time.Time) ([]job.Job, error) {
	w.windows = append(w.windows, [2]time.Time{from, to})
	var out []job.Job
	for id, e := range w.ends {
		if !e.Before(from) && e.Before(to) {
			out = append(out, job.Job{ID: id, GPUs: 1, RunTime: 1})
		}
	}
	return out, nil
}

func TestImportHistoryWindows(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	c := &windowClient{ends: map[string]time.Time{
		"1": t0, "2": t0.Add(24 * time.Hour), "3": t0.Add(36 * time.Hour), "4": t0.Add(72 * time.Hour),
	}}
	jobs, err := importHistory(context.Background(), c, t0, t0.Add(60*time.Hour), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.windows) != 3 || !c.windows[2][1].Equal(t0.Add(60*time.Hour)) {
		t.Errorf("windows %v: want 3, the last ending at the end", c.windows)
	}
	if len(jobs) != 3 {
		t.Errorf("got %d jobs, want the 3 that ended in the range", len(jobs))
	}
}

func TestParseSince(t *testing.T) {
	to := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{"30d", to.Add(-30 * 24 * time.Hour), false},
		{"12h", to.Add(-12 * time.Hour), false},
		{"2026-11-01T00:00:00Z", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), false},
		{"-3d", time.Time{}, true},
		{"soon", time.Time{}, true},
		{"NaNd", time.Time{}, true},
		{"Infd", time.Time{}, true},
		{"1e300d", time.Time{}, true},
		{"3651d", time.Time{}, true},
		{"3650d", to.Add(-3650 * 24 * time.Hour), false},
	}
	for _, tc := range tests {
		got, err := parseSince(tc.in, to)
		if (err != nil) != tc.err || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v", tc.in, got, err)
		}
	}
}

// TestHistoryCommand runs the subcommand against a fake slurmrestd serving
// a recorded accounting answer and reads the CSV back with package trace.
func TestHistoryCommand(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "slurmclient", "testdata", "24.11", "accounting.json"))
	if err != nil {
		t.Skip(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimSuffix(r.URL.Path, "/") {
		case "/slurm/v0.0.42/ping":
			fmt.Fprint(w, `{"pings":[{"responding":true}],"meta":{"slurm":{"release":"24.11.5"}}}`)
		case "/slurm/v0.0.42/nodes":
			w.WriteHeader(304)
		case "/slurmdb/v0.0.42/jobs":
			w.Write(body)
		default:
			w.WriteHeader(404)
		}
	}))
	defer srv.Close()
	tok := filepath.Join(t.TempDir(), "jwt")
	os.WriteFile(tok, []byte("a.eyJzdW4iOiJyb290In0.c"), 0o600)
	// The connection from the flags, or from the sidecar's configuration.
	conf := filepath.Join(t.TempDir(), "asrpt.toml")
	os.WriteFile(conf, []byte(fmt.Sprintf("[slurm]\nurl = %q\ntoken_file = %q\napi = \"v0.0.42\"\n", srv.URL, tok)), 0o600)
	window := []string{"--since", "2020-01-01T00:00:00Z", "--until", "2030-01-01T00:00:00Z", "--window", "8760h"}
	var outs [2]string
	for i, conn := range [][]string{{"-url", srv.URL, "-token-file", tok, "-api", "v0.0.42"}, {"--config", conf}} {
		var out, errb bytes.Buffer
		if err := runHistory(context.Background(), append(conn, window...), &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", conn, err, errb.String())
		}
		outs[i] = out.String()
	}
	if outs[0] != outs[1] {
		t.Errorf("--config gave another history than the flags")
	}
	var errb bytes.Buffer
	err = runHistory(context.Background(), append([]string{"--config", filepath.Join(t.TempDir(), "none.toml")}, window...), io.Discard, &errb)
	if err == nil || !strings.Contains(err.Error(), "--url (or ASRPT_SLURM_URL) is not set") {
		t.Errorf("no URL and no config: %v", err)
	}
	out := bytes.NewBufferString(outs[0])
	jobs, err := trace.Read(out, "history.csv", trace.Native)
	if err != nil && !errors.Is(err, trace.ErrEmpty) {
		t.Fatalf("reading the output back: %v\n%s", err, out.String())
	}
	if len(jobs) == 0 {
		t.Fatal("no GPU jobs written")
	}
	for _, j := range jobs {
		if j.GPUs <= 0 || j.RunTime <= 0 || j.User == "" {
			t.Errorf("job %+v", j)
		}
	}
}

// TestExportRows: history writes only rows its own replay reads: a submit
// time of −9.2e18 or 2^63−1 GPUs is refused, named on stderr and counted;
// --all still writes jobs without GPUs or run time.
func TestExportRows(t *testing.T) {
	ok := job.Job{ID: "1", Submit: 1.8e9, User: "u", GPUs: 4, RunTime: 60, State: "COMPLETED"}
	with := func(id string, f func(*job.Job)) job.Job {
		j := ok
		j.ID = id
		f(&j)
		return j
	}
	in := []job.Job{
		ok,
		with("2", func(j *job.Job) { j.Submit = -9.2e18 }),
		with("3", func(j *job.Job) { j.GPUs = 1<<63 - 1 }),
		with("4", func(j *job.Job) { j.GPUs = 0 }),
		with("5", func(j *job.Job) { j.RunTime = 1e12 }),
		with("6", func(j *job.Job) { j.TimeLimit = math.Inf(1) }),
	}
	for _, c := range []struct {
		all     bool
		kept    string
		refused int
	}{
		{false, "1", 4},
		{true, "1,4", 4},
	} {
		var stderr bytes.Buffer
		kept, refused := exportRows(slices.Clone(in), c.all, &stderr)
		var ids []string
		for _, j := range kept {
			ids = append(ids, j.ID)
		}
		if strings.Join(ids, ",") != c.kept || refused != c.refused {
			t.Errorf("all=%v: kept %v, refused %d; want %s and %d", c.all, ids, refused, c.kept, c.refused)
		}
		for _, want := range []string{`job "2": submit`, `job "3": gpus`, `job "5": run_time`, `job "6": time_limit`} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("all=%v: stderr lacks %q:\n%s", c.all, want, stderr.String())
			}
		}
		var csv bytes.Buffer
		if err := trace.WriteCSV(&csv, kept); err != nil {
			t.Fatal(err)
		}
		if !c.all {
			if _, err := trace.Read(&csv, "h.csv", trace.Native); err != nil {
				t.Errorf("the replay's reader refuses what history wrote: %v", err)
			}
		}
	}
}
