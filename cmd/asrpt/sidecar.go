package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/internal/journal"
	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/internal/sdnotify"
	"github.com/asrpt/asrpt/internal/statusauth"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/slurmconf"
)

func init() {
	register("sidecar", "run the scheduler sidecar beside slurmctld (--check validates the config)", runSidecar)
}

const defaultConfigPath = "/etc/asrpt/asrpt.toml"

func runSidecar(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sidecar", stderr)
	path := fs.String("config", defaultConfigPath, "configuration file (TOML)")
	check := fs.Bool("check", false, "validate the configuration, the files it names and the Slurm configuration, then exit")
	online := fs.Bool("online", false, "with --check: also contact slurmrestd with the token and try the state directory")
	dry := fs.Bool("dry-run", false, "log the plan every cycle and write nothing (overrides sidecar.dry_run)")
	slurmConf := fs.String("slurm-conf", "", "with --check: the directory of the slurm.conf to check against (default: slurm.conf_dir)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := sidecar.LoadConfig(*path)
	if *slurmConf != "" && !*check {
		return fmt.Errorf("%w: --slurm-conf goes with --check (the sidecar reads slurm.conf_dir)", errUsage)
	}
	if *check {
		if *slurmConf != "" {
			cfg.Slurm.ConfDir = *slurmConf
		}
		cerr := checkConfig(cfg, err, *path, stdout)
		if !*online && err == nil && cfg.WriteMode == sidecar.WriteFactor && !cfg.PriorityFallback {
			// slurm.conf does not say the release; only slurmrestd does.
			fmt.Fprintf(stdout, "%s: warning: sidecar.write_mode = \"factor\" needs Slurm 24.11 or later (a REST API that writes "+
				"site factors); the release is not checked offline: asrpt sidecar --check --online asks slurmrestd "+
				"(on 22.05–23.11 the sidecar refuses to start unless sidecar.priority_fallback = true)\n", *path)
		}
		if *online && err == nil {
			if n := checkOnline(ctx, cfg, *path, stdout, time.Now()); n > 0 {
				return errors.Join(cerr, fmt.Errorf("%s: %s online", *path, plural(n, "problem")))
			}
		}
		return cerr
	}
	if *online {
		return fmt.Errorf("%w: --online goes with --check", errUsage)
	}
	if err != nil {
		return err
	}
	if *dry {
		cfg.DryRun = true
	}
	log := newLogger(cfg, stderr)
	if !cfg.DryRun {
		// A dry run writes neither Slurm nor the state file: it may run
		// beside the daemon.
		lock, err := sidecar.LockState(cfg.StateFile)
		if errors.Is(err, sidecar.ErrLocked) {
			return fmt.Errorf("sidecar.state_file: %w", err)
		} else if err != nil {
			return err // names sidecar.state_file, the path and the fix
		}
		defer lock.Release()
	}
	cl, tiers, err := siteModel(cfg.Slurm.ConfDir)
	if err != nil {
		return fmt.Errorf("cluster model from %s: %w", cfg.Slurm.ConfDir, err)
	}
	// /healthz and /metrics answer from the start: 503 with the reason
	// until the sidecar runs.
	var srv *http.Server
	front := &frontHandler{notReady: "connecting to slurmrestd at " + redacted(cfg.Slurm.URL)}
	if cfg.MetricsListen != "" {
		// A port another process holds stops the start: asrpt status
		// would otherwise talk to that process.
		ln, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			return fmt.Errorf("metrics.listen %s: %w (another process holds it? ss -ltnp 'sport = :%s' names it; or set another address)",
				cfg.MetricsListen, err, port(cfg.MetricsListen))
		}
		tok, err := statusToken(cfg, log)
		if err != nil {
			ln.Close()
			return err
		}
		srv = &http.Server{Handler: protected(tok, front), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error().Err(err).Msg("metrics server stopped")
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = srv.Shutdown(sctx)
			cancel()
		}()
	}
	notify(log, sdnotify.Status("connecting to slurmrestd at "+redacted(cfg.Slurm.URL)))
	client, err := connectRetry(ctx, cfg, log)
	if err != nil {
		return err
	}
	reloads := make(chan sidecar.Reload, 1)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				notify(log, sdnotify.Reloading())
				c, err := sidecar.LoadConfig(*path)
				if *dry {
					c.DryRun = true
				}
				select {
				case reloads <- sidecar.Reload{Path: *path, Config: c, Err: err}:
				case <-ctx.Done():
					return
				}
				notify(log, sdnotify.Ready)
			}
		}
	}()
	s, err := sidecar.New(cfg, sidecar.Options{Cluster: cl, PartitionTiers: tiers, Slurm: client, Log: log, Reload: reloads,
		SlurmVersion: slurmVersion(ctx, client)})
	if err != nil {
		return err
	}
	front.inner.Store(s.Handler())
	for _, w := range cfg.Warnings() {
		log.Warn().Str("config", *path).Msg(w)
	}
	log.Info().Str("config", *path).Str("policy", cfg.Policy).Str("slurm", redacted(cfg.Slurm.URL)).Str("api", client.APIVersion()).
		Int("nodes", len(cl.Nodes)).Int("gpus", cl.TotalGPUs()).Bool("dry_run", cfg.DryRun).
		Str("metrics", cfg.MetricsListen).Msg("sidecar started")
	notify(log, sdnotify.Ready+"\n"+sdnotify.Status("running"))
	if every := sdnotify.WatchdogInterval(); every > 0 {
		go func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case now := <-tick.C:
					// Only while the cycle loop goes round: a stuck loop
					// lets systemd's watchdog restart the service.
					if s.Alive(now) {
						notify(log, sdnotify.Watchdog)
					}
				}
			}
		}()
	}
	err = s.Run(ctx)
	notify(log, sdnotify.Stopping)
	return err
}

// statusToken writes a fresh token for /status and /plan in the state
// directory (sidecar.StatusTokenPath) and returns it. A dry run that
// cannot write it (run by a user who cannot write the directory) serves
// them to no one and says so; the daemon refuses to start.
func statusToken(cfg sidecar.Config, log zerolog.Logger) ([]byte, error) {
	tok, err := statusauth.NewToken()
	if err != nil {
		return nil, err
	}
	path := sidecar.StatusTokenPath(cfg.StateFile, cfg.MetricsListen)
	if err := statusauth.Write(path, tok); err != nil {
		if !cfg.DryRun {
			return nil, fmt.Errorf("sidecar.state_file: %w", err)
		}
		log.Warn().Err(err).Msg("cannot write the status token: asrpt status and asrpt plan cannot reach this dry run")
	}
	return tok, nil
}

// port returns the port of a host:port address.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// newLogger returns the configured zerolog logger writing to w: JSON, or
// the console writer when asked or when w is a terminal. When w is the
// journal's stream (the service under systemd), lines are JSON with a
// syslog priority prefix, so that journalctl -p filters by severity.
func newLogger(cfg sidecar.Config, w io.Writer) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(cfg.LogLevel)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	if f, ok := w.(*os.File); ok && journal.IsJournal(f) {
		return zerolog.New(journal.Writer{W: w}).Level(lvl).With().Timestamp().Logger()
	}
	console := cfg.LogFormat == "console"
	if cfg.LogFormat == "auto" {
		if f, ok := w.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				console = true
			}
		}
	}
	if console {
		w = consoleWriter(w)
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger()
}

// maxLogText bounds one message or field value of a console log line,
// runes.
const maxLogText = 4096

// consoleWriter is zerolog's console format on w with the message and
// every field value escaped (safetext): a job name or a reason from Slurm
// in a log line can neither move the cursor nor forge a line. zerolog
// quotes a string field with a control byte itself; messages, errors and
// values marshalled as JSON (string lists, maps) it writes raw, and JSON
// leaves DEL, C1 controls and bidi overrides as they are.
func consoleWriter(w io.Writer) zerolog.ConsoleWriter {
	esc := func(i any) string {
		if i == nil {
			return ""
		}
		return safetext.EscapeN(fmt.Sprintf("%s", i), maxLogText)
	}
	return zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339, FormatMessage: esc, FormatFieldValue: esc, FormatErrFieldValue: esc}
}

func clientConfig(cfg sidecar.Config) slurmclient.Config {
	return slurmclient.Config{URL: cfg.Slurm.URL, TokenFile: cfg.Slurm.TokenFile, User: cfg.Slurm.User,
		CAFile: cfg.Slurm.CAFile, API: cfg.Slurm.API, Timeout: cfg.Slurm.Timeout}
}

// connectRetry connects to slurmrestd, retrying with a backoff up to the
// cycle interval while it is unreachable (slurmrestd may start after the
// sidecar); the first failure is logged, later ones only counted.
func connectRetry(ctx context.Context, cfg sidecar.Config, log zerolog.Logger) (slurmclient.Client, error) {
	delay, failures := time.Second, 0
	for {
		c, err := slurmclient.New(ctx, clientConfig(cfg))
		if err == nil {
			if failures > 0 {
				log.Info().Int("attempts", failures+1).Msg("connected to slurmrestd")
			}
			return c, nil
		}
		if errors.Is(err, slurmclient.ErrInvalid) {
			return nil, err // a configuration problem: retrying will not help
		}
		if failures == 0 {
			msg := "cannot reach slurmrestd; retrying"
			switch {
			case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
				msg = "cannot read slurm.token_file; retrying"
			case errors.Is(err, slurmclient.ErrAuth):
				msg = "slurmrestd refuses the token in slurm.token_file; retrying (replace the token)"
			}
			log.Warn().Err(err).Str("reason", sidecar.Reason(err).String()).Str("slurm", redacted(cfg.Slurm.URL)).
				Str("token_file", cfg.Slurm.TokenFile).Msg(msg)
		}
		failures++
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connecting to slurmrestd: %w", err)
		case <-time.After(delay):
		}
		delay = min(2*delay, cfg.Interval)
	}
}

// slurmVersion names the Slurm behind c for messages: "Slurm 24.11.5, REST
// API v0.0.42" (the API alone when the ping fails).
func slurmVersion(ctx context.Context, c slurmclient.Client) string {
	v, err := c.Ping(ctx)
	if err != nil || v.Release == "" {
		return "REST API " + c.APIVersion()
	}
	return fmt.Sprintf("Slurm %s, REST API %s", v.Release, c.APIVersion())
}

// redacted returns a URL for a log line, with any password masked.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// notify sends state to systemd when it supervises the process; a failure
// is logged, never fatal.
func notify(log zerolog.Logger, state string) {
	if _, err := sdnotify.Notify(state); err != nil {
		log.Warn().Err(err).Msg("systemd notification failed")
	}
}

// siteModel loads the cluster model and each partition's PriorityTier
// (Slurm's default 1 where none is set) from the Slurm configuration in
// dir.
func siteModel(dir string) (*cluster.Cluster, map[string]int, error) {
	cfg, err := slurmconf.Load(dir, slurmconf.Options{})
	if err != nil {
		return nil, nil, err
	}
	tiers := make(map[string]int, len(cfg.Partitions))
	for _, p := range cfg.Partitions {
		tiers[p.Name] = max(p.PriorityTier, 1)
	}
	return cfg.Cluster, tiers, nil
}
