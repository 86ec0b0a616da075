package main

import (
	"net/http"
	"sync/atomic"

	"github.com/asrpt/asrpt/internal/statusauth"
)

// frontHandler serves the sidecar's handler once it runs, and before that
// /healthz as 503 with the reason and /metrics empty, so that probes and
// scrapes get an answer from the first second.
type frontHandler struct {
	inner    atomic.Value // http.Handler
	notReady string       // set before serving, then only read
}

func (f *frontHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, ok := f.inner.Load().(http.Handler); ok {
		h.ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case "/healthz", "/status":
		http.Error(w, "not ready: "+f.notReady, http.StatusServiceUnavailable)
	case "/metrics":
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	default:
		http.NotFound(w, r)
	}
}

// protected serves /status and /plan through statusauth.Require with
// tok (the token in the state directory: only a client that can read it
// gets an answer, and it can tell the answer is the daemon's); /metrics
// and /healthz, and every other path, stay open.
func protected(tok []byte, h http.Handler) http.Handler {
	auth := statusauth.Require(tok, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/status", "/plan":
			auth.ServeHTTP(w, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}
