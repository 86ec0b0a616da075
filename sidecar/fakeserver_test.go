package sidecar

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/slurmclient"
)

// fakeSlurmrestd serves the responses recorded from the 22.05 lab
// (slurmclient/testdata/22.05) and, while mode is set, answers the job
// list with a fault instead.
func fakeSlurmrestd(t *testing.T) (*httptest.Server, *atomic.Value) {
	t.Helper()
	dir := filepath.Join("..", "slurmclient", "testdata", "22.05")
	files := map[string]string{
		"/slurm/v0.0.38/ping":   "ping.json",
		"/slurm/v0.0.38/jobs":   "jobs.json",
		"/slurm/v0.0.38/nodes":  "nodes.json",
		"/slurmdb/v0.0.38/jobs": "accounting-empty.json",
	}
	bodies := map[string][]byte{}
	for path, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("recorded response: %v", err)
		}
		bodies[path] = b
	}
	var mode atomic.Value
	mode.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/slurm/v0.0.38/jobs" {
			switch mode.Load().(string) {
			case "500":
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"meta":{},"errors":[{"error_number":1011,"error":"Unable to contact slurm controller (connect failure)","description":"injected","source":"slurm_load_jobs"}],"warnings":[]}`)
				return
			case "malformed":
				_, _ = io.WriteString(w, `{"meta":{"plugin":{"type":"openapi/v0.0.38"}},"jobs":[{"job_id":12,"job_state":`)
				return
			case "empty": // a restarting slurmctld
				_, _ = io.WriteString(w, `{"meta":{"plugin":{"type":"openapi/v0.0.38"}},"errors":[],"warnings":[],"jobs":[]}`)
				return
			}
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &mode
}

// fakeServerSidecar returns a sidecar (priority mode, 200 ms cycles, a
// state file) on the REST client talking to srv, through a probe, and
// its log.
func fakeServerSidecar(t *testing.T, srv *httptest.Server) (*Sidecar, *probe, *syncBuffer) {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "jwt")
	if err := os.WriteFile(tok, []byte("header.payload.signature"), 0o600); err != nil {
		t.Fatal(err)
	}
	cl, err := slurmclient.New(context.Background(), slurmclient.Config{URL: srv.URL, TokenFile: tok, User: "slurmrest", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Interval = 200 * time.Millisecond
	cfg.StateFile = filepath.Join(t.TempDir(), "state.json")
	cfg.UsePredictor("mean")      // ranked by its median, as a file naming mean gets
	cfg.WriteMode = WritePriority // the fake serves v0.0.38
	p := newProbe(cl)
	logs := &syncBuffer{}
	s, err := New(cfg, Options{Cluster: cluster.Uniform(4, 4), Slurm: p, Log: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	return s, p, logs
}

// TestFakeServerEmptyJobList: slurmrestd answers 200 with no jobs between
// two normal job lists: the tracked jobs keep their sequence numbers and
// virtual progress, nothing is written to them meanwhile, the state file
// never loses them, and a giveback from it afterwards lists every job
// asrpt wrote to (or was about to).
func TestFakeServerEmptyJobList(t *testing.T) {
	srv, mode := fakeSlurmrestd(t)
	s, p, _ := fakeServerSidecar(t, srv)
	ctx := context.Background()
	now := time.Now()
	cycle := func(i int) CycleReport {
		t.Helper()
		rep, err := s.RunOnce(ctx, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		return rep
	}
	cycle(0)
	type kept struct {
		seq    int
		ph     decision.Phase
		remain float64
	}
	snapshot := func() map[string]kept {
		out := map[string]kept{}
		for id, e := range s.state.Entries {
			k := kept{seq: e.Seq, ph: e.Phase}
			if e.Task != nil {
				k.remain = e.Task.VirtualRemaining()
			}
			out[id] = k
		}
		return out
	}
	before := snapshot()
	if len(before) == 0 {
		t.Fatal("no job tracked from the recorded job list")
	}
	written := func() []string {
		st, err := readState(s.cfg.StateFile)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, j := range st.Jobs {
			if _, ok := toHandBack(j.Priority, j.SiteFactor, j.Nodes, j.WroteNodes, j.OwnNodes, j.MayFactor, j.MayPriority); ok {
				ids = append(ids, j.Job.ID)
			}
		}
		return ids
	}
	want := written()
	if len(want) == 0 {
		t.Fatal("the state records no write")
	}
	mode.Store("empty")
	writes := p.attempts()
	cycle(1)
	if p.attempts() != writes {
		t.Error("writes on an empty job list")
	}
	if got := written(); !slices.Equal(got, want) {
		t.Errorf("state after the empty list records writes to %v, want %v", got, want)
	}
	mode.Store("")
	if rep := cycle(2); rep.Arrived != 0 {
		t.Errorf("%d arrivals after the empty list", rep.Arrived)
	}
	after := snapshot()
	for id, b := range before {
		a, ok := after[id]
		if !ok || a.seq != b.seq || a.ph != b.ph || a.remain > b.remain {
			t.Errorf("job %s: %+v after the empty list, %+v before", id, a, b)
		}
	}
	if got := written(); !slices.Equal(got, want) {
		t.Errorf("a giveback after the empty list would return %v, want %v", got, want)
	}
}

// TestRunFakeServerFaults runs the sidecar (Run, 200 ms cycles) against a
// fake slurmrestd that answers the job list with a 500 carrying errors[],
// then with a malformed body: each fault is logged once, counted by reason,
// and the first cycle after it ends succeeds.
func TestRunFakeServerFaults(t *testing.T) {
	for _, c := range []struct{ mode, reason string }{{"500", "server"}, {"malformed", "bad_response"}} {
		t.Run(c.mode, func(t *testing.T) {
			srv, mode := fakeSlurmrestd(t)
			s, p, logs := fakeServerSidecar(t, srv)
			ctx := context.Background()
			rctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- s.Run(rctx) }()
			wait := func(what string, ok func() bool) {
				t.Helper()
				for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
					select {
					case err := <-done:
						t.Fatalf("Run returned during the test: %v", err)
					default:
					}
					if time.Now().After(deadline) {
						t.Fatalf("no %s; log:\n%s", what, logs.String())
					}
				}
			}
			okCycles := func() float64 { return testutil.ToFloat64(s.m.cycles.WithLabelValues("ok")) }
			wait("first cycle", func() bool { return okCycles() >= 1 })
			mode.Store(c.mode)
			wait("three failed cycles", func() bool { return testutil.ToFloat64(s.m.cycles.WithLabelValues("error")) >= 3 })
			if got := testutil.ToFloat64(s.m.errors.WithLabelValues("jobs", c.reason)); got < 3 {
				t.Errorf("read errors with reason %s: %v, want ≥ 3", c.reason, got)
			}
			end := time.Now()
			mode.Store("")
			n := 0
			wait("successful cycle after the fault", func() bool {
				for i, r := range p.readsSince(end) {
					if r.err == nil {
						n = i + 1
						return true
					}
				}
				return false
			})
			if n > 2 {
				t.Errorf("recovered on the %d-th cycle after the fault, want ≤ 2", n)
			}
			wait("recovery logged", func() bool { return strings.Contains(logs.String(), "cycles recovered") })
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run returned %v", err)
			}
			out := logs.String()
			if k := strings.Count(out, "cycle failed; retrying with backoff"); k != 1 {
				t.Errorf("failure logged %d times, want once:\n%s", k, out)
			}
			if k := strings.Count(out, "cycles recovered"); k != 1 {
				t.Errorf("recovery logged %d times, want once", k)
			}
		})
	}
}

// attempts counts the writes tried so far, successful or not.
func (p *probe) attempts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, k := range p.writes {
		n += k
	}
	for _, k := range p.failed {
		n += k
	}
	return n
}
