package slurmclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// releases maps each lab release to the API version its fixtures use.
var releases = []struct{ rel, api string }{
	{"22.05", "v0.0.38"},
	{"24.11", "v0.0.42"},
	{"26.05", "v0.0.44"},
}

// fixtureNames are the responses TestRecord (record_integration_test.go)
// records from every lab into testdata/<release>/<name>.json, each with a
// <name>.request.txt giving the request it answers.
var fixtureNames = []string{"ping", "jobs", "jobs-shapes", "nodes", "job-running", "accounting", "accounting-empty"}

// fixture returns the response body called name recorded from the project's
// lab of release rel (testdata/<rel>/<name>.json). A missing recording fails
// the test: the recordings are committed, so the replay tests never depend
// on a running Slurm or on files outside the repository.
func fixture(t testing.TB, rel, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", rel, name+".json"))
	if err != nil {
		t.Fatalf("recorded response: %v (record it with `go test -tags integration -run TestRecord -record ./slurmclient/`)", err)
	}
	return b
}

// route is one canned answer of a fake slurmrestd.
type route struct {
	status int
	body   []byte
}

// fakeRest is an httptest slurmrestd: GETs are answered from routes by path
// (trailing slash ignored); every request is logged.
type fakeRest struct {
	mu     sync.Mutex
	routes map[string]route
	log    []string
	bodies []string
	hdr    []http.Header
	srv    *httptest.Server
	onPost func(path string, body []byte) route
}

func newFake(t testing.TB) *fakeRest {
	f := &fakeRest{routes: map[string]route{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRest) set(method, path string, status int, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[method+" "+strings.TrimSuffix(path, "/")] = route{status, body}
}

func (f *fakeRest) serve(w http.ResponseWriter, r *http.Request) {
	b := make([]byte, 0, 256)
	if r.Body != nil {
		buf := make([]byte, 4096)
		for {
			n, err := r.Body.Read(buf)
			b = append(b, buf[:n]...)
			if err != nil {
				break
			}
		}
	}
	key := r.Method + " " + strings.TrimSuffix(r.URL.Path, "/")
	f.mu.Lock()
	f.log = append(f.log, key+"?"+r.URL.RawQuery)
	f.bodies = append(f.bodies, string(b))
	f.hdr = append(f.hdr, r.Header.Clone())
	rt, ok := f.routes[key]
	post := f.onPost
	f.mu.Unlock()
	if r.Method == "POST" && post != nil {
		rt, ok = post(r.URL.Path, b), true
	}
	if !ok {
		w.WriteHeader(404)
		w.Write([]byte(`{"errors":[],"warnings":[]}`))
		return
	}
	w.WriteHeader(rt.status)
	w.Write(rt.body)
}

// posts returns the bodies of the POSTs received so far, in order.
func (f *fakeRest) posts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, l := range f.log {
		if strings.HasPrefix(l, "POST") {
			out = append(out, f.bodies[i])
		}
	}
	return out
}

// testToken writes a token file for user and returns its path.
func testToken(t testing.TB, user string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jwt")
	claims, _ := json.Marshal(map[string]any{"sun": user, "exp": 4102444800})
	tok := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + strings.TrimRight(b64(claims), "=") + ".c2ln"
	if err := os.WriteFile(p, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// client builds an adapter for api against the fake, without probing.
func (f *fakeRest) client(t testing.TB, api string) Client {
	t.Helper()
	tr, err := newTransport(Config{URL: f.srv.URL, TokenFile: testToken(t, "root"), Retries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := adapter(api, tr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

type (
	httpHandlerFunc = http.HandlerFunc
	responseWriter  = http.ResponseWriter
	request         = http.Request
)
