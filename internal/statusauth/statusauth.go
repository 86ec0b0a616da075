// Package statusauth lets a client of the sidecar's /status and /plan
// endpoints and the sidecar prove to each other that they share a secret
// token, kept in a file (0600) in the daemon's state directory, so that a
// local user who binds the port first cannot serve forged text, and one
// who can reach the port but not read the state directory sees nothing.
//
// The client sends a fresh nonce and an HMAC of it and the path
// (HeaderNonce, HeaderAuth); the server answers only such a request, with
// an HMAC of the nonce, the path and the body (HeaderProof), which the
// client checks before it uses the answer. The token itself never goes
// over the connection, so a squatter learns nothing from a request.
package statusauth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/asrpt/asrpt/internal/atomicfile"
	"github.com/asrpt/asrpt/internal/ownedpath"
)

// The headers of the exchange.
const (
	HeaderNonce = "X-Asrpt-Nonce"
	HeaderAuth  = "X-Asrpt-Auth"
	HeaderProof = "X-Asrpt-Proof"
)

// tokenBytes is the token's length; the file holds it in hex.
const tokenBytes = 32

// ErrUnproven is returned (wrapped) for an answer that does not carry the
// proof of the token: another process answers on the address.
var ErrUnproven = errors.New("the answer does not prove the state directory's token")

// NewToken returns a fresh random token.
func NewToken() ([]byte, error) {
	tok := make([]byte, tokenBytes)
	if _, err := rand.Read(tok); err != nil {
		return nil, fmt.Errorf("status token: %w", err)
	}
	return tok, nil
}

// Write writes tok to path atomically, mode 0600, after checking the
// directory as ownedpath.CheckDir says (a symbolic link at path is
// replaced, never followed).
func Write(path string, tok []byte) error {
	if err := ownedpath.CheckDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("status token: %w", err)
	}
	return atomicfile.WritePerm(path, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, hex.EncodeToString(tok)+"\n")
		return err
	})
}

// Read reads the token at path, checked as ownedpath says (its directory,
// and the file: no link, owner, mode) and readable by its owner only.
func Read(path string) ([]byte, error) {
	if err := ownedpath.CheckDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("status token: %w", err)
	}
	f, err := ownedpath.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("status token: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("status token %s: %w: readable by other users (mode %04o): chmod 0600 %s",
			path, ownedpath.ErrUntrusted, st.Mode().Perm(), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4*tokenBytes))
	if err != nil {
		return nil, fmt.Errorf("status token %s: %w", path, err)
	}
	tok, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(tok) != tokenBytes {
		return nil, fmt.Errorf("status token %s: not a token (the sidecar writes one at start)", path)
	}
	return tok, nil
}

func mac(tok []byte, parts ...string) string {
	h := hmac.New(sha256.New, tok)
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Require serves h only to requests that carry the token's HMAC, with the
// proof of the token on the answer; others get 401 and nothing else.
func Require(tok []byte, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce := r.Header.Get(HeaderNonce)
		want := mac(tok, "client", nonce, r.URL.Path)
		if len(nonce) < 32 || !hmac.Equal([]byte(r.Header.Get(HeaderAuth)), []byte(want)) {
			http.Error(w, "the state directory's status token is required", http.StatusUnauthorized)
			return
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.Header().Set(HeaderProof, mac(tok, "server", nonce, r.URL.Path, rec.body.String()))
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.body.Bytes())
	})
}

// recorder buffers an answer so that its proof can go in a header.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if !r.wrote {
		r.status, r.wrote = s, true
	}
}
func (r *recorder) Write(b []byte) (int, error) { r.wrote = true; return r.body.Write(b) }

// Get asks url with the token's HMAC and returns the answer's status and
// body (at most max bytes), after checking its proof: an answer without
// it, or with a wrong one, is an error wrapping ErrUnproven.
func Get(ctx context.Context, c *http.Client, url string, tok []byte, max int64) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	n := make([]byte, 16)
	if _, err := rand.Read(n); err != nil {
		return 0, nil, err
	}
	nonce := hex.EncodeToString(n)
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderAuth, mac(tok, "client", nonce, req.URL.Path))
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, max))
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", url, err)
	}
	if !hmac.Equal([]byte(resp.Header.Get(HeaderProof)), []byte(mac(tok, "server", nonce, req.URL.Path, string(body)))) {
		return resp.StatusCode, nil, fmt.Errorf("%s: %w (%s): another process may hold the address; is the sidecar running?", url, ErrUnproven, resp.Status)
	}
	return resp.StatusCode, body, nil
}
