package slurmclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckTokenFile: what the client refuses to read as a token file,
// each with an error naming the file and what is wrong.
func TestCheckTokenFile(t *testing.T) {
	dir := t.TempDir()
	good := testToken(t, "asrpt")
	write := func(name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tok, _ := os.ReadFile(good)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string // in the error; "" for no error
	}{
		{"good", good, ""},
		{"device", "/dev/zero", "not a regular file"},
		{"fifo", fifo, "not a regular file"},
		{"directory", dir, "not a regular file"},
		{"world readable", write("world", tok, 0o644), "readable or writable by every user"},
		{"world writable", write("ww", tok, 0o602), "readable or writable by every user"},
		{"group readable", write("group", tok, 0o640), ""},
		{"too large", write("big", []byte(strings.Repeat("a", MaxTokenFile+1)), 0o600), "MaxTokenFile"},
		{"two tokens", write("two", []byte("a.b.c d.e.f\n"), 0o600), "not a single token"},
		{"empty", write("empty", nil, 0o600), "not a single token"},
		{"control byte", write("ctl", []byte("a.b\x01.c\n"), 0o600), "not a single token"},
		{"non-ASCII", write("utf", []byte("a.bé.c\n"), 0o600), "not a single token"},
		{"missing", filepath.Join(dir, "none"), "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTokenFile(tc.path)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "eyJ"):
				t.Errorf("error shows the token: %v", err)
			}
		})
	}
	if os.Getuid() == 0 {
		p := write("other", tok, 0o600)
		if err := os.Chown(p, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		if err := CheckTokenFile(p); err == nil || !strings.Contains(err.Error(), "owned by uid 4242") || !errors.Is(err, ErrInvalid) {
			t.Errorf("token file of another user: %v", err)
		}
	}
}

func TestReadTokenClaims(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, payload, user string
		exp                 int64
	}{
		{"both", `{"exp":1893456000,"iat":1,"sun":"asrpt"}`, "asrpt", 1893456000},
		{"no exp", `{"sun":"asrpt"}`, "asrpt", 0},
		{"exp as float", `{"exp":1893456000.0}`, "", 1893456000},
		{"garbage exp", `{"exp":"soon","sun":"x"}`, "", 0},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		tok := b64([]byte(`{"alg":"HS256"}`)) + "." + b64([]byte(tc.payload)) + ".sig"
		if err := os.WriteFile(path, []byte("SLURM_JWT="+tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ReadTokenClaims(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var want time.Time
		if tc.exp > 0 {
			want = time.Unix(tc.exp, 0)
		}
		if c.User != tc.user || !c.Expires.Equal(want) {
			t.Errorf("%s: %+v, want user %q expiry %v", tc.name, c, tc.user, want)
		}
	}
	if _, err := ReadTokenClaims(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: no error")
	}
}
