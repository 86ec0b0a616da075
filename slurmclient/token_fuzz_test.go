package slurmclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// FuzzTokenFile writes arbitrary content to a token file of mode 0600 and
// reads it as the client does. A token is accepted only as one non-empty
// word of the file, with its "sun" claim as jwtSubject reads it; a refusal
// is ErrAuth or ErrInvalid, and no error shows the token.
func FuzzTokenFile(f *testing.F) {
	good, err := os.ReadFile(testToken(f, "asrpt"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte("SLURM_JWT=" + string(good)))
	f.Add([]byte("a.b.c d.e.f\n"))
	f.Add([]byte("x.eyJzdW4iOiJyb290In0.y"))    // {"sun":"root"}
	f.Add([]byte("x.eyJzdW4iOjEyfQ.y"))         // {"sun":12}
	f.Add([]byte("x.eyJzdW4iOiJhXG5iIn0=.y\n")) // {"sun":"a\nb"}
	f.Add([]byte(strings.Repeat("a", MaxTokenFile+1)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, content []byte) {
		fuzzbound.Within(t, time.Second, func() {
			p := filepath.Join(t.TempDir(), "jwt")
			if err := os.WriteFile(p, content, 0o600); err != nil {
				t.Fatal(err)
			}
			ts := &tokenSource{path: p}
			tok, sun, err := ts.get()
			if cerr := CheckTokenFile(p); (cerr == nil) != (err == nil) {
				t.Fatalf("CheckTokenFile %v, get %v", cerr, err)
			}
			if err != nil {
				if tok != "" || sun != "" || !(errors.Is(err, ErrAuth) || errors.Is(err, ErrInvalid)) {
					t.Fatalf("refused with %q, %q, %v", tok, sun, err)
				}
				if w := strings.TrimSpace(string(content)); len(w) >= 8 && strings.Contains(err.Error(), w) {
					t.Fatalf("the error shows the token: %v", err)
				}
				return
			}
			if len(content) > MaxTokenFile || tok == "" || strings.ContainsAny(tok, " \t\r\n") || !strings.Contains(string(content), tok) {
				t.Fatalf("accepted token %q from %d bytes", tok, len(content))
			}
			if sun != jwtSubject(tok) || len(sun) > len(tok) {
				t.Fatalf("sun %q, jwtSubject %q", sun, jwtSubject(tok))
			}
			// Read again unchanged: the cached token.
			if tok2, sun2, err := ts.get(); err != nil || tok2 != tok || sun2 != sun {
				t.Fatalf("second read %q, %q, %v", tok2, sun2, err)
			}
		})
	})
}

// FuzzJWTSubject: the "sun" claim comes from the middle part only and is
// no longer than the token.
func FuzzJWTSubject(f *testing.F) {
	f.Add("x.eyJzdW4iOiJyb290In0.y")
	f.Add("x.eyJzdW4iOiJyb290In0")
	f.Add("..")
	f.Add("x.e30.y")
	f.Fuzz(func(t *testing.T, tok string) {
		fuzzbound.Within(t, time.Second, func() {
			sun := jwtSubject(tok)
			if sun == "" {
				return
			}
			if strings.Count(tok, ".") != 2 || len(sun) > len(tok) {
				t.Fatalf("sun %q from %q", sun, tok)
			}
			parts := strings.Split(tok, ".")
			if jwtSubject("a."+parts[1]+".b") != sun {
				t.Fatalf("sun %q from %q depends on the header or signature", sun, tok)
			}
		})
	})
}
