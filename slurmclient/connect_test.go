package slurmclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConnectErrors: the first contact with slurmrestd names what is at
// fault: the token file, the token, or the URL.
func TestConnectErrors(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "slurm.jwt")
	if err := os.WriteFile(token, []byte("SLURM_JWT=a.b.c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer refuse.Close()
	for _, tc := range []struct {
		name, url, token, want string
	}{
		{"nothing listening", closed, token, "cannot reach slurmrestd at " + closed},
		{"missing token file", refuse.URL, filepath.Join(dir, "none.jwt"), "cannot read the token file " + filepath.Join(dir, "none.jwt")},
		{"token refused", refuse.URL, token, "refused the token in " + token},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := New(ctx, Config{URL: tc.url, TokenFile: tc.token, Timeout: 2 * time.Second, RetryBackoff: time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "probing") {
				t.Errorf("error names a probe: %v", err)
			}
		})
	}
}
