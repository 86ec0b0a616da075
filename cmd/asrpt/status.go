package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/internal/statusauth"
	"github.com/asrpt/asrpt/sidecar"
)

func init() {
	register("status", "show the running sidecar's own view: last cycle, jobs by stage, jobs left alone and why, incidents, token expiry", runStatus)
}

// maxStatusBody bounds the /status answer read, bytes.
const maxStatusBody = 16 << 20

// daemonClient asks the daemon's endpoints; it follows no redirect.
var daemonClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// daemonGet asks the sidecar on cfg.MetricsListen for url (/status,
// /plan) with the token it keeps in the state directory
// (sidecar.StatusTokenPath), and returns the body of a 200 answer that
// proves the same token (statusauth.Get): another process holding the
// port cannot forge one. The token can be read by the sidecar's user
// (sudo -u asrpt asrpt status).
func daemonGet(ctx context.Context, cfg sidecar.Config, url string) ([]byte, error) {
	tokPath := sidecar.StatusTokenPath(cfg.StateFile, cfg.MetricsListen)
	tok, err := statusauth.Read(tokPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no sidecar answers on %s: is it running? (it writes %s at start): %w", cfg.MetricsListen, tokPath, err)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot verify the sidecar on %s: %w; run this as the sidecar's user (sudo -u asrpt …)", cfg.MetricsListen, err)
	}
	code, body, err := statusauth.Get(ctx, daemonClient, url, tok, maxStatusBody)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("no sidecar answers on %s: is it running? %w", cfg.MetricsListen, err)
		}
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", url, code, safetext.Escape(strings.TrimSpace(string(body))))
	}
	return body, nil
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("status", stderr)
	path := fs.String("config", defaultConfigPath, "configuration file (TOML): the daemon answers on its metrics.listen address")
	asJSON := fs.Bool("json", false, "print the daemon's JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := sidecar.LoadConfig(*path)
	if err != nil {
		return err
	}
	if cfg.MetricsListen == "" {
		return fmt.Errorf("%s: metrics.listen is empty: the sidecar serves its status there", *path)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	url := "http://" + cfg.MetricsListen + "/status"
	body, err := daemonGet(ctx, cfg, url)
	if err != nil {
		return fmt.Errorf("%w (metrics.listen and sidecar.state_file in %s)", err, *path)
	}
	if *asJSON {
		_, err := stdout.Write(body)
		return err
	}
	var st sidecar.Status
	if err := json.Unmarshal(body, &st); err != nil {
		return fmt.Errorf("%s: not a sidecar status: %w", url, err)
	}
	return writeStatus(stdout, &st, time.Now())
}

// writeStatus prints a status for a person, in sdiag's spirit. The
// daemon's text (reasons, errors, the token's user) is escaped
// (safetext.Escape): Slurm and its users write parts of it.
func writeStatus(w io.Writer, st *sidecar.Status, now time.Time) error {
	ew := &errWriter{w: w}
	mode := "writing to Slurm"
	switch st.WriteMode {
	case "factor":
		mode = "writing site factors to Slurm"
	case "priority":
		mode = "writing priorities to Slurm"
	}
	if st.DryRun {
		mode = "dry run (writes nothing)"
	}
	e := safetext.Escape
	ew.printf("asrpt sidecar %s, policy %s, %s, cycle every %s, up %s\n", e(st.Version), e(st.Policy), mode,
		time.Duration(st.IntervalS*float64(time.Second)), now.Sub(st.Started).Round(time.Second))
	switch c := st.LastCycle; {
	case c == nil:
		ew.printf("last cycle:     none yet\n")
	case c.OK:
		ew.printf("last cycle:     ok %s ago, took %.2f s; jobs %s; writes %s\n", now.Sub(c.Time).Round(time.Second), c.DurationS,
			counts(c.Jobs), counts(c.Writes))
		if len(c.Failed) > 0 {
			ew.printf("                failed writes %s\n", counts(c.Failed))
		}
	default:
		ew.printf("last cycle:     FAILED %s ago: %s\n", now.Sub(c.Time).Round(time.Second), e(c.Error))
	}
	if !st.LastSuccess.IsZero() {
		ew.printf("last success:   %s ago\n", now.Sub(st.LastSuccess).Round(time.Second))
	}
	up := "up"
	if !st.SlurmrestdUp {
		up = "DOWN"
	}
	ew.printf("slurmrestd:     %s\n", up)
	if t := st.Token; t != nil {
		switch {
		case t.Error != "":
			ew.printf("token:          %s: %s\n", e(t.File), e(t.Error))
		case t.Expires.IsZero():
			ew.printf("token:          %s, user %s, no expiry\n", e(t.File), e(t.User))
		default:
			ew.printf("token:          %s, user %s, expires %s (in %s)\n", e(t.File), e(t.User), t.Expires.UTC().Format(time.RFC3339),
				t.Expires.Sub(now).Round(time.Minute))
		}
	}
	ew.printf("jobs tracked:   %s\n", counts(st.Stages))
	if len(st.LeftAlone) > 0 {
		ew.printf("left alone:\n")
		for _, j := range st.LeftAlone {
			ew.printf("  %-12s %-16s %s\n", e(j.JobID), e(string(j.Code)), e(j.Reason))
		}
	}
	if len(st.Incidents) == 0 {
		ew.printf("incidents:      none\n")
	} else {
		ew.printf("incidents:\n")
		for _, in := range st.Incidents {
			ew.printf("  %-12s since %s, %d times: %s\n", e(in.Key), in.Since.UTC().Format(time.RFC3339), in.Occurrences, e(in.LastError))
		}
	}
	return ew.err
}

// counts formats a map of counts as "a=1 b=2" in key order ("-" if empty).
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s=%d", safetext.Escape(k), m[k])
	}
	return strings.Join(parts, " ")
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
