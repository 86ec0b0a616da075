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

// sharedNames maps a fixture name to a response recorded in the shared
// notes (../shared/slurm/examples-<rel>/), read while testdata/<rel>/ lacks
// the project's own recording.
var sharedNames = map[string]map[string]string{
	"22.05": {
		"ping": "00-ping-as-alice", "jobs": "01-list-jobs", "nodes": "06-list-nodes-drain-and-alloc",
		"job-running": "33-get-job-running", "accounting": "60-slurmdb-jobs-accounting-run",
	},
	"24.11": {
		"ping": "01-v42-ping", "jobs": "06-v42-jobs", "nodes": "104-v42-node-drained",
		"job-running": "75-v42-job-6-running", "accounting": "82-v42-slurmdb-jobs-timewindow",
	},
	"26.05": {
		"ping": "02-v44-ping", "jobs": "07-v44-jobs", "nodes": "115-v44-node-drained",
		"job-running": "107-v44-job-14-running", "accounting": "118-v44-slurmdb-jobs-timewindow",
	},
}

// fixture returns the recorded response body called name for release rel:
// testdata/<rel>/<name>.json (recorded from the project's labs by
// record_integration_test.go), else the shared notes' recording; the test
// is skipped when neither exists.
func fixture(t testing.TB, rel, name string) []byte {
	t.Helper()
	b := fixtureOrNil(rel, name)
	if b == nil {
		t.Skipf("no recording %s/%s", rel, name)
	}
	return b
}

// fixtureOrNil is fixture without the skip: nil when there is no recording.
func fixtureOrNil(rel, name string) []byte {
	if b, err := os.ReadFile(filepath.Join("testdata", rel, name+".json")); err == nil {
		return b
	}
	if n, ok := sharedNames[rel][name]; ok {
		p := filepath.Join("..", "..", "shared", "slurm", "examples-"+rel, n+".response.json")
		if b, err := os.ReadFile(p); err == nil {
			return b
		}
	}
	return nil
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
