package slurmclient

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTokenReread(t *testing.T) {
	f := newFake(t)
	f.set("GET", "/slurm/v0.0.42/jobs", 200, []byte(`{"jobs":[]}`))
	p := testToken(t, "alice")
	tr, err := newTransport(Config{URL: f.srv.URL, TokenFile: p, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := adapter("v0.0.42", tr)
	if _, err := c.Jobs(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	first := f.hdr[0].Get("X-SLURM-USER-TOKEN")
	if f.hdr[0].Get("X-SLURM-USER-NAME") != "alice" {
		t.Errorf("user header %q, want the token's sun alice", f.hdr[0].Get("X-SLURM-USER-NAME"))
	}
	b, _ := os.ReadFile(testToken(t, "bob"))
	if err := os.WriteFile(p, append([]byte("SLURM_JWT="), b...), 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Minute)
	os.Chtimes(p, future, future)
	if _, err := c.Jobs(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := f.hdr[1].Get("X-SLURM-USER-TOKEN"); got == first || strings.HasPrefix(got, "SLURM_JWT=") {
		t.Errorf("token not re-read after the file changed: %q", got)
	}
	if f.hdr[1].Get("X-SLURM-USER-NAME") != "bob" {
		t.Errorf("user after rotation %q, want bob", f.hdr[1].Get("X-SLURM-USER-NAME"))
	}
}

func TestUnixSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "rest.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skip(err)
	}
	var hdr http.Header
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr = r.Header.Clone()
		if strings.HasSuffix(r.URL.Path, "/nodes") {
			w.WriteHeader(304)
			return
		}
		w.Write(fixture(t, "24.11", "ping"))
	}))
	srv.Listener = l
	srv.Start()
	defer srv.Close()
	c, err := New(ctxT(t), Config{URL: "unix://" + sock, API: "v0.0.42"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if hdr.Get("X-SLURM-USER-TOKEN") != "" {
		t.Error("a token was sent over the local-auth socket")
	}
}

func TestRetriesOnlyForReads(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(503)
	}))
	defer srv.Close()
	tr, err := newTransport(Config{URL: srv.URL, TokenFile: testToken(t, "root"), Retries: 3, RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := tr.do(ctxT(t), "GET", "/x", nil, nil); err != nil || res.status != 503 {
		t.Fatalf("after 503s: %v, status %d; want the last 503", err, res.status)
	}
	if got := n.Load(); got != 4 {
		t.Errorf("GET tried %d times, want 1+3", got)
	}
	n.Store(0)
	res, err := tr.do(ctxT(t), "POST", "/x", nil, []byte(`{}`))
	if err != nil || res.status != 503 || n.Load() != 1 {
		t.Errorf("POST: %v, status %d, %d tries; want one try", err, res.status, n.Load())
	}
}

func TestConcurrencyLimit(t *testing.T) {
	var cur, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := cur.Add(1)
		for {
			p := peak.Load()
			if c <= p || peak.CompareAndSwap(p, c) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		cur.Add(-1)
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	tr, err := newTransport(Config{URL: srv.URL, TokenFile: testToken(t, "root"), MaxConcurrent: 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { tr.do(ctxT(t), "GET", "/x", nil, nil) })
	}
	wg.Wait()
	if p := peak.Load(); p > 2 || p == 0 {
		t.Errorf("peak concurrency %d, limit 2", p)
	}
}

func TestQueryEncoding(t *testing.T) {
	f := newFake(t)
	f.set("GET", "/slurmdb/v0.0.38/jobs", 200, []byte(`{"jobs":[]}`))
	c := f.client(t, "v0.0.38")
	from := time.Date(2026, 11, 29, 20, 8, 8, 0, time.Local)
	if _, err := c.AccountingJobs(ctxT(t), from, from.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.log[0], "start_time=2026-11-29T20%3A08%3A08") {
		t.Errorf("query %q: ':' must be percent-encoded", f.log[0])
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{URL: "ftp://x"},
		{URL: "http://127.0.0.1:1"},
		{URL: "http://127.0.0.1:1", TokenFile: "/nonexistent"},
		{URL: "https://127.0.0.1:1", TokenFile: testToken(t, "a"), CAFile: "/nonexistent"},
	} {
		if _, err := newTransport(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
