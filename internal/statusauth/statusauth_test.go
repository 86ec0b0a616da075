package statusauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/internal/ownedpath"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status.token")
	tok, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(path, tok); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v, %v: want mode 0600", st, err)
	}
	got, err := Read(path)
	if err != nil || string(got) != string(tok) {
		t.Fatalf("Read: %x, %v", got, err)
	}
	os.Chmod(path, 0o644)
	if _, err := Read(path); !errors.Is(err, ownedpath.ErrUntrusted) || !strings.Contains(err.Error(), "chmod 0600") {
		t.Errorf("a token others can read: %v", err)
	}
	link := filepath.Join(filepath.Dir(path), "link.token")
	os.Symlink(path, link)
	if _, err := Read(link); !errors.Is(err, ownedpath.ErrUntrusted) {
		t.Errorf("a token through a symbolic link: %v", err)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if _, err := Read(path); err == nil {
		t.Error("a file that holds no token was read")
	}
}

// TestExchange: the client's answer is used only when the server proved
// the same token; the server answers only a client that proved it; a body
// changed on the way is refused.
func TestExchange(t *testing.T) {
	tok, _ := NewToken()
	other, _ := NewToken()
	body := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	tamper := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			_, _ = w.Write([]byte(`{"ok":false}`))
		})
	}
	cases := []struct {
		name    string
		server  http.Handler
		client  []byte
		code    int
		wantErr error
	}{
		{"same token", Require(tok, body), tok, 200, nil},
		{"no proof (a squatter)", body, tok, 0, ErrUnproven},
		{"client without the token", Require(tok, body), other, 401, ErrUnproven},
		{"body changed", tamper(Require(tok, body)), tok, 0, ErrUnproven},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.server)
			defer srv.Close()
			code, b, err := Get(context.Background(), srv.Client(), srv.URL+"/status", c.client, 1<<20)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) || b != nil {
					t.Errorf("err %v body %q, want %v", err, b, c.wantErr)
				}
				if c.code != 0 && code != c.code {
					t.Errorf("status %d, want %d", code, c.code)
				}
				return
			}
			if err != nil || code != 200 || string(b) != `{"ok":true}` {
				t.Errorf("%d %q %v", code, b, err)
			}
		})
	}
	// Without the headers at all the server says nothing of the body.
	rec := httptest.NewRecorder()
	Require(tok, body).ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
	if rec.Code != 401 || strings.Contains(rec.Body.String(), `"ok"`) {
		t.Errorf("no headers: %d %q", rec.Code, rec.Body.String())
	}
}
