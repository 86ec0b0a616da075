package slurmclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRedirectToAnotherOrigin: slurmrestd answering 307 to another host
// (issue 25: `asrpt history --url http://127.0.0.1:PORT` against such a
// server sent X-SLURM-USER-TOKEN there) is refused before anything reaches
// the other host, with an error naming both URLs, and not retried; a
// redirect within the same origin is followed, the token going along.
func TestRedirectToAnotherOrigin(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		w.Write([]byte(`{"jobs":[]}`))
	}))
	defer other.Close()
	var hits atomic.Int32
	var sameToken atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("/away/slurm/v0.0.42/jobs", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, other.URL+"/slurm/v0.0.42/jobs", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/here/slurm/v0.0.42/jobs", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/moved/slurm/v0.0.42/jobs", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/moved/slurm/v0.0.42/jobs", func(w http.ResponseWriter, r *http.Request) {
		sameToken.Store(r.Header.Get("X-SLURM-USER-TOKEN"))
		w.Write([]byte(`{"jobs":[]}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tok := testToken(t, "alice")
	cases := []struct {
		name, base string
		wantErr    bool
	}{
		{"another origin", srv.URL + "/away", true},
		{"same origin", srv.URL + "/here", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := newTransport(Config{URL: c.base, TokenFile: tok})
			if err != nil {
				t.Fatal(err)
			}
			cl, _ := adapter("v0.0.42", tr)
			_, err = cl.Jobs(ctxT(t))
			if !c.wantErr {
				if err != nil {
					t.Fatalf("same-origin redirect: %v", err)
				}
				if s, _ := sameToken.Load().(string); s == "" {
					t.Error("the token did not follow a same-origin redirect")
				}
				return
			}
			if !errors.Is(err, ErrBadResponse) || !strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), other.URL) {
				t.Errorf("error %v: want ErrBadResponse naming %s and %s", err, srv.URL, other.URL)
			}
			if n := otherHits.Load(); n != 0 {
				t.Errorf("the other origin got %d requests", n)
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("the refused redirect was retried: %d requests", n)
			}
		})
	}
}

// TestOrigin: the origin compares scheme, host and port, the default port
// made explicit; https to http on one host is another origin.
func TestOrigin(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"http://ctl:6820/x", "http://ctl:6820/y", true},
		{"http://ctl/x", "http://CTL:80/y", true},
		{"https://ctl/x", "https://ctl:443/y", true},
		{"https://ctl:6820/x", "http://ctl:6820/x", false},
		{"http://ctl:6820/x", "http://ctl:6821/x", false},
		{"http://ctl:6820/x", "http://evil:6820/x", false},
	}
	for _, c := range cases {
		a, b := mustURL(t, c.a), mustURL(t, c.b)
		if got := origin(a) == origin(b); got != c.same {
			t.Errorf("%s vs %s: same origin %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
