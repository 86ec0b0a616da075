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
		// bad: ReadTokenClaims refuses the token (ErrInvalid naming exp).
		bad bool
	}{
		{"both", `{"exp":1893456000,"iat":1,"sun":"asrpt"}`, "asrpt", 1893456000, false},
		{"no exp", `{"sun":"asrpt"}`, "asrpt", 0, false},
		{"exp null", `{"exp":null,"sun":"asrpt"}`, "asrpt", 0, false},
		{"exp as float", `{"exp":1893456000.0}`, "", 1893456000, false},
		{"garbage exp", `{"exp":"soon","sun":"x"}`, "x", 0, true},
		// Expired in 1969/1970, not "no expiry".
		{"exp -1", `{"exp":-1,"sun":"x"}`, "x", -1, false},
		{"exp 0", `{"exp":0,"sun":"x"}`, "x", 0, false},
		{"exp 2^63", `{"exp":9223372036854775808,"sun":"x"}`, "x", 0, true},
		{"exp 1e308", `{"exp":1e308,"sun":"x"}`, "x", 0, true},
		{"exp -1e308", `{"exp":-1e308,"sun":"x"}`, "x", 0, true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		tok := b64([]byte(`{"alg":"HS256"}`)) + "." + b64([]byte(tc.payload)) + ".sig"
		if err := os.WriteFile(path, []byte("SLURM_JWT="+tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ReadTokenClaims(path)
		if tc.bad {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "exp claim") {
				t.Errorf("%s: %+v, %v; want ErrInvalid naming the exp claim", tc.name, c, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var want time.Time
		if strings.Contains(tc.payload, `"exp":`) && !strings.Contains(tc.payload, "null") {
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
