package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/trace"
)

func init() {
	register("history", "import finished jobs from slurmdbd through slurmrestd as a trace", runHistory)
}

// historyWindow is the default length of one accounting query; a big site
// then never answers one huge response.
const historyWindow = 24 * time.Hour

func runHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("history", stderr)
	since := fs.String("since", "30d", "how far back to import: a duration (90m, 12h, 30d) or an RFC 3339 time")
	until := fs.String("until", "", "end of the import, RFC 3339 (default: now)")
	window := fs.Duration("window", historyWindow, "length of one accounting query")
	format := fs.String("format", "native", "output: native (CSV) or jsonl (native JSON Lines)")
	all := fs.Bool("all", false, "also write jobs without GPUs or without run time (the replay refuses them)")
	url := fs.String("url", os.Getenv("ASRPT_SLURM_URL"), "slurmrestd URL: http(s)://host:port or unix:///path (env ASRPT_SLURM_URL)")
	tokenFile := fs.String("token-file", os.Getenv("ASRPT_SLURM_TOKEN_FILE"), "file holding the JWT (env ASRPT_SLURM_TOKEN_FILE)")
	user := fs.String("user", os.Getenv("ASRPT_SLURM_USER"), "X-SLURM-USER-NAME (env ASRPT_SLURM_USER; default: the token's user)")
	caFile := fs.String("ca-file", os.Getenv("ASRPT_SLURM_CA_FILE"), "PEM CA bundle for https (env ASRPT_SLURM_CA_FILE)")
	api := fs.String("api", os.Getenv("ASRPT_SLURM_API"), "force a REST API version (v0.0.38, v0.0.42, v0.0.44); default probes")
	timeout := fs.Duration("timeout", 2*time.Minute, "timeout of one request")
	config := fs.String("config", "", "sidecar configuration whose [slurm] table gives what the flags above do not (default "+defaultConfigPath+" when neither --url nor ASRPT_SLURM_URL is set)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *url == "" || *config != "" {
		path := *config
		if path == "" {
			path = defaultConfigPath
		}
		cfg, err := sidecar.LoadConfig(path)
		if err != nil {
			if *url == "" {
				return fmt.Errorf("%w: --url (or ASRPT_SLURM_URL) is not set and the sidecar configuration cannot give it: %v", errUsage, err)
			}
			return err
		}
		fill := func(dst *string, v string) {
			if *dst == "" {
				*dst = v
			}
		}
		fill(url, cfg.Slurm.URL)
		fill(tokenFile, cfg.Slurm.TokenFile)
		fill(user, cfg.Slurm.User)
		fill(caFile, cfg.Slurm.CAFile)
		fill(api, cfg.Slurm.API)
	}
	if *format != "native" && *format != "jsonl" {
		return fmt.Errorf("%w: --format %q (want native or jsonl)", errUsage, *format)
	}
	if *window <= 0 {
		return fmt.Errorf("%w: --window must be positive", errUsage)
	}
	now := time.Now()
	to := now
	if *until != "" {
		t, err := time.Parse(time.RFC3339, *until)
		if err != nil {
			return fmt.Errorf("%w: --until: %v", errUsage, err)
		}
		to = t
	}
	from, err := parseSince(*since, to)
	if err != nil {
		return fmt.Errorf("%w: --since: %v", errUsage, err)
	}
	c, err := slurmclient.New(ctx, slurmclient.Config{
		URL: *url, TokenFile: *tokenFile, User: *user, CAFile: *caFile, API: *api, Timeout: *timeout,
	})
	if err != nil {
		return err
	}
	jobs, err := importHistory(ctx, c, from, to, *window)
	if err != nil {
		return err
	}
	n := len(jobs)
	kept, refused := exportRows(jobs, *all, stderr)
	fmt.Fprintf(stderr, "asrpt history: %d jobs ended %s – %s via %s, %d written, %d refused (values the replay would not read)\n",
		n, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), c.APIVersion(), len(kept), refused)
	if *format == "jsonl" {
		return trace.WriteJSONL(stdout, kept)
	}
	return trace.WriteCSV(stdout, kept)
}

// maxRefusalsShown bounds the refused rows history names on stderr.
const maxRefusalsShown = 5

// exportRows keeps, in place, the jobs to write: those with GPUs and a run
// time (all: also those without), whose every field passes the trace
// reader's own checks (trace.CheckJob: a submit time of −9.2e18 or 2^63−1
// GPUs is refused, so that the replay reads whatever history writes). It
// names the first maxRefusalsShown refused rows on stderr and returns how
// many it refused.
func exportRows(jobs []job.Job, all bool, stderr io.Writer) ([]job.Job, int) {
	kept, refused := jobs[:0], 0
	for _, j := range jobs {
		if !all && (j.GPUs <= 0 || j.RunTime <= 0) {
			continue
		}
		c := j
		if all { // written on purpose: only the other fields are checked
			if c.GPUs == 0 {
				c.GPUs = 1
			}
			if c.RunTime == 0 {
				c.RunTime = 1
			}
		}
		if err := trace.CheckJob(&c); err != nil {
			if refused++; refused <= maxRefusalsShown {
				fmt.Fprintf(stderr, "asrpt history: not written: %v\n", err)
			}
			continue
		}
		kept = append(kept, j)
	}
	return kept, refused
}

// importHistory reads [from, to) in windows of at most window, oldest first.
// AccountingJobs keeps only jobs that ended inside its window, so windows do
// not duplicate a job; duplicates by id are dropped anyway.
func importHistory(ctx context.Context, c slurmclient.Client, from, to time.Time, window time.Duration) ([]job.Job, error) {
	var out []job.Job
	seen := map[string]bool{}
	for lo := from; lo.Before(to); lo = lo.Add(window) {
		hi := lo.Add(window)
		if hi.After(to) {
			hi = to
		}
		js, err := c.AccountingJobs(ctx, lo, hi)
		if err != nil {
			return nil, fmt.Errorf("accounting %s – %s: %w", lo.UTC().Format(time.RFC3339), hi.UTC().Format(time.RFC3339), err)
		}
		for _, j := range js {
			if !seen[j.ID] {
				seen[j.ID] = true
				out = append(out, j)
			}
		}
	}
	return out, nil
}

// parseSince accepts a duration before to ("30d", "12h", "90m") or an RFC
// 3339 time.
// maxSinceDays bounds a --since given in days: ten years (longer windows
// are given as an RFC 3339 time).
const maxSinceDays = 3650

func parseSince(s string, to time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || !(n > 0) || n > maxSinceDays { // !(n > 0) is true for NaN
			return time.Time{}, fmt.Errorf("%q is not a number of days in (0, %d]", s, maxSinceDays)
		}
		return to.Add(-time.Duration(n * float64(24*time.Hour))), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("%q is neither a positive duration nor an RFC 3339 time", s)
	}
	return to.Add(-d), nil
}
