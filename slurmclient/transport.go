package slurmclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asrpt/asrpt/internal/regularfile"
)

// Config says how to reach slurmrestd.
type Config struct {
	// URL is slurmrestd's address: http://host:port, https://host:port, or
	// unix:///path/to/slurmrestd.sock (rest_auth/local: no token is sent and
	// slurmrestd acts as its own Unix user).
	URL string
	// TokenFile holds the JWT (scontrol token output "SLURM_JWT=…" or the
	// bare token). It is re-read whenever its size or modification time
	// changes, so a rotating token needs no restart. Empty for unix://.
	TokenFile string
	// User is sent as X-SLURM-USER-NAME; when empty it is taken from the
	// token's "sun" claim. 22.05 requires it.
	User string
	// CAFile is a PEM bundle to verify an https:// server with; empty uses
	// the system roots.
	CAFile string
	// API forces an adapter ("v0.0.38", "v0.0.42", "v0.0.44") instead of
	// probing; empty probes, newest first.
	API string
	// Timeout bounds each HTTP request (default 30 s).
	Timeout time.Duration
	// MaxConcurrent bounds requests in flight (default 4): each one is a
	// synchronous slurmctld RPC.
	MaxConcurrent int
	// Retries is how many times an idempotent read is retried after a
	// transport error or a 502/503/504 (default 2), with exponential
	// backoff from RetryBackoff (default 200 ms).
	Retries      int
	RetryBackoff time.Duration
	// MaxBody bounds a response body in bytes (default 256 MiB); a larger
	// one is ErrBadResponse.
	MaxBody int64
	// Location is the time zone slurmdbd interprets sacct-style times in
	// (v0.0.38 accounting queries); default time.Local.
	Location *time.Location
	// HTTPClient replaces the client built from the fields above (tests).
	HTTPClient *http.Client
}

// transport performs requests against one slurmrestd.
type transport struct {
	base    *url.URL
	hc      *http.Client
	tok     *tokenSource
	user    string
	sem     chan struct{}
	retries int
	backoff time.Duration
	maxBody int64
	loc     *time.Location
}

func newTransport(cfg Config) (*transport, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("slurmclient: %w: empty URL", ErrInvalid)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("slurmclient: URL %q: %w", cfg.URL, err)
	}
	t := &transport{
		user: cfg.User, retries: cfg.Retries, backoff: cfg.RetryBackoff,
		maxBody: cfg.MaxBody, loc: cfg.Location,
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 4
	}
	if t.retries < 0 {
		t.retries = 0
	} else if cfg.Retries == 0 {
		t.retries = 2
	}
	if t.backoff <= 0 {
		t.backoff = 200 * time.Millisecond
	}
	if t.maxBody <= 0 {
		t.maxBody = 256 << 20
	}
	if t.loc == nil {
		t.loc = time.Local
	}
	t.sem = make(chan struct{}, cfg.MaxConcurrent)
	tr := &http.Transport{MaxIdleConnsPerHost: cfg.MaxConcurrent, IdleConnTimeout: 90 * time.Second}
	switch u.Scheme {
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		t.base = &url.URL{Scheme: "http", Host: "slurmrestd"}
	case "https":
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, fmt.Errorf("slurmclient: CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("slurmclient: CA file %s: %w: no PEM certificate", cfg.CAFile, ErrInvalid)
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		t.base = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}
	case "http":
		t.base = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: strings.TrimSuffix(u.Path, "/")}
	default:
		return nil, fmt.Errorf("slurmclient: URL %q: %w: scheme must be http, https or unix", cfg.URL, ErrInvalid)
	}
	if cfg.HTTPClient != nil {
		hc := *cfg.HTTPClient // the caller's client is not changed
		t.hc = &hc
	} else {
		t.hc = &http.Client{Transport: tr, Timeout: cfg.Timeout}
	}
	if t.hc.CheckRedirect == nil {
		t.hc.CheckRedirect = sameOrigin
	}
	if u.Scheme != "unix" {
		if cfg.TokenFile == "" {
			return nil, fmt.Errorf("slurmclient: %w: a token file is needed for %s", ErrInvalid, u.Scheme)
		}
		t.tok = &tokenSource{path: cfg.TokenFile}
		if _, _, err := t.tok.get(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// maxRedirects bounds the same-origin redirects followed for one request.
const maxRedirects = 10

// sameOrigin is the client's redirect policy: a redirect is followed only
// to the origin (scheme, host and port) of the request that came first, so
// the token headers never reach another host, and a redirect cannot turn
// https:// into clear-text http:// (the final URL has the first one's
// scheme and host, so Config.Warnings' clear-text check of slurm.url holds
// for it too). A refused redirect is an error wrapping ErrBadResponse that
// names both URLs; it is not retried.
func sameOrigin(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if origin(req.URL) != origin(first) {
		return fmt.Errorf("%w: slurmrestd at %s redirected to %s, another origin: not followed, so the token is not sent there "+
			"(set slurm.url to the address that answers)", ErrBadResponse, first.Redacted(), req.URL.Redacted())
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: %d redirects from %s", ErrBadResponse, len(via), first.Redacted())
	}
	return nil
}

// origin returns u's scheme://host:port, the port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// response is one HTTP answer, body already read (bounded).
type response struct {
	status int
	body   []byte
}

// do sends one request. query may be nil; body, when non-nil, is sent as
// JSON. GETs are retried on transport errors and 502/503/504.
func (t *transport) do(ctx context.Context, method, path string, query url.Values, body []byte) (response, error) {
	u := *t.base
	u.Path += path
	if len(query) > 0 {
		// url.Values.Encode percent-encodes ',' and ':' as slurmrestd needs.
		u.RawQuery = query.Encode()
	}
	attempts := 1
	if method == http.MethodGet {
		attempts += t.retries
	}
	var last error
	for i := 0; i < attempts; i++ {
		if i > 0 {
			d := t.backoff << (i - 1)
			select {
			case <-ctx.Done():
				return response{}, ctx.Err()
			case <-time.After(d):
			}
		}
		r, err := t.once(ctx, method, u.String(), body)
		if err == nil && i+1 < attempts && (r.status == 502 || r.status == 503 || r.status == 504) {
			continue
		}
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrAuth) || errors.Is(err, ErrBadResponse) {
			return response{}, err
		}
		last = err
	}
	return response{}, last
}

func (t *transport) once(ctx context.Context, method, target string, body []byte) (response, error) {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return response{}, ctx.Err()
	}
	defer func() { <-t.sem }()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.tok != nil {
		tok, sun, err := t.tok.get()
		if err != nil {
			return response{}, err
		}
		user := t.user
		if user == "" {
			user = sun
		}
		// 22.05 needs both X-SLURM headers; 23.02+ also take Bearer.
		req.Header.Set("X-SLURM-USER-TOKEN", tok)
		if user != "" {
			req.Header.Set("X-SLURM-USER-NAME", user)
		}
	}
	res, err := t.hc.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, t.maxBody+1))
	if err != nil {
		return response{}, fmt.Errorf("%s %s: reading body: %w", method, req.URL.Path, err)
	}
	if int64(len(b)) > t.maxBody {
		return response{}, fmt.Errorf("%s %s: %w: body larger than %d bytes", method, req.URL.Path, ErrBadResponse, t.maxBody)
	}
	return response{status: res.StatusCode, body: b}, nil
}

// tokenSource reads a JWT from a file, again whenever the file changes. The
// token is never logged or put in an error.
type tokenSource struct {
	path string

	mu    sync.Mutex
	size  int64
	mtime time.Time
	tok   string
	sun   string
}

// MaxTokenFile is the largest token file read, bytes (Slurm's tokens are
// a few hundred bytes).
const MaxTokenFile = 64 << 10

// CheckTokenFile checks the token file at path as the client reads it: a
// regular file of at most MaxTokenFile bytes, neither readable nor
// writable by every user, owned by root or by this process's user, holding
// one token. The errors name the file and what to change.
func CheckTokenFile(path string) error {
	_, _, err := (&tokenSource{path: path}).get()
	return err
}

// readTokenFile checks the file at path as CheckTokenFile says (all but
// its content) and returns its stat.
func readTokenFile(path string) (os.FileInfo, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("slurmclient: token file %s: %w: %s", path, ErrInvalid, fmt.Sprintf(format, a...))
	}
	f, st, err := regularfile.Open(path)
	switch {
	case errors.Is(err, regularfile.ErrNotRegular):
		return nil, fmt.Errorf("slurmclient: token file: %w: %v", ErrInvalid, err)
	case err != nil:
		return nil, fmt.Errorf("slurmclient: token file: %w", err)
	}
	f.Close()
	switch {
	case st.Size() > MaxTokenFile:
		return nil, bad("%d bytes, more than %d (MaxTokenFile)", st.Size(), MaxTokenFile)
	case st.Mode().Perm()&0o006 != 0:
		return nil, bad("readable or writable by every user (mode %04o): chmod o-rw %s", st.Mode().Perm(), path)
	}
	if uid, ok := fileOwner(st); ok && uid != 0 && uid != os.Getuid() {
		return nil, bad("owned by uid %d, neither root nor this user (uid %d)", uid, os.Getuid())
	}
	return st, nil
}

// get returns the token and its "sun" (user name) claim.
func (s *tokenSource) get() (string, string, error) {
	st, err := readTokenFile(s.path)
	if err != nil {
		return "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != "" && st.Size() == s.size && st.ModTime().Equal(s.mtime) {
		return s.tok, s.sun, nil
	}
	f, err := os.Open(s.path)
	if err != nil {
		return "", "", fmt.Errorf("slurmclient: token file: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTokenFile+1))
	f.Close()
	if err != nil {
		return "", "", fmt.Errorf("slurmclient: token file: %w", err)
	}
	if len(b) > MaxTokenFile {
		return "", "", fmt.Errorf("slurmclient: token file %s: %w: more than %d bytes (MaxTokenFile)", s.path, ErrInvalid, MaxTokenFile)
	}
	tok := strings.TrimSpace(string(b))
	tok = strings.TrimPrefix(tok, "SLURM_JWT=")
	if tok == "" || strings.IndexFunc(tok, notTokenByte) >= 0 {
		return "", "", fmt.Errorf("slurmclient: token file %s: %w: not a single token", s.path, ErrAuth)
	}
	s.tok, s.sun, s.size, s.mtime = tok, jwtSubject(tok), st.Size(), st.ModTime()
	return s.tok, s.sun, nil
}

// notTokenByte reports a rune that cannot be in a token sent as an HTTP
// header value (anything but printable ASCII).
func notTokenByte(r rune) bool { return r < 0x21 || r > 0x7e }

// jwtSubject returns Slurm's "sun" claim of a JWT, or "" (no verification:
// slurmrestd verifies; a claim that could not be sent as a header is "").
func jwtSubject(tok string) string { return jwtClaims(tok).User }

// TokenClaims are the claims of a Slurm JWT asrpt reads (unverified:
// slurmrestd verifies the token).
type TokenClaims struct {
	// User is the "sun" claim (the Slurm user), "" when absent.
	User string
	// Expires is the "exp" claim, a Unix time in seconds (one of 0 or
	// less, 1970 or before, has expired); zero when the token has none or
	// is not a JWT, or when the claim is no time (badExp).
	Expires time.Time
	// badExp says why an "exp" claim present is no time (not a number, or
	// beyond ±maxExpClaim seconds); "" otherwise. ReadTokenClaims refuses
	// such a token.
	badExp string
}

// maxExpClaim bounds the "exp" claim taken for a time, seconds from 1970
// either way (1e11 s: about the year 5138). 2^63 or 1e308 are no time.
const maxExpClaim = 1e11

// jwtClaims parses the payload of a JWT; a token that is not one gives
// zero claims.
func jwtClaims(tok string) TokenClaims {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return TokenClaims{}
	}
	b, err := base64URLDecode(parts[1])
	if err != nil {
		return TokenClaims{}
	}
	var c struct {
		Sun string          `json:"sun"`
		Exp json.RawMessage `json:"exp"`
	}
	if json.Unmarshal(b, &c) != nil {
		return TokenClaims{}
	}
	var out TokenClaims
	if strings.IndexFunc(c.Sun, notTokenByte) < 0 {
		out.User = c.Sun
	}
	if raw := string(c.Exp); raw != "" && raw != "null" {
		exp, err := strconv.ParseFloat(raw, 64)
		switch {
		case err != nil || math.IsNaN(exp):
			out.badExp = fmt.Sprintf("exp claim %.40s is not a number", raw)
		case math.Abs(exp) >= maxExpClaim:
			out.badExp = fmt.Sprintf("exp claim %.40s is beyond any date (more than %g s from 1970)", raw, maxExpClaim)
		default:
			out.Expires = time.Unix(int64(math.Floor(exp)), 0)
		}
	}
	return out
}

// ReadTokenClaims reads the token file at path (checked as CheckTokenFile
// says) and returns its claims; a token whose "exp" claim is no time
// (2^63, 1e308, a string) is ErrInvalid naming the claim, and one whose
// claim is 0 or less has Expires in 1970 or before: expired.
func ReadTokenClaims(path string) (TokenClaims, error) {
	tok, _, err := (&tokenSource{path: path}).get()
	if err != nil {
		return TokenClaims{}, err
	}
	c := jwtClaims(tok)
	if c.badExp != "" {
		return c, fmt.Errorf("token file %s: %w: %s", path, ErrInvalid, c.badExp)
	}
	return c, nil
}
