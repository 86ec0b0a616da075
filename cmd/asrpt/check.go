package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/slurmconf"
)

// checkConfig prints every problem of the configuration (parse error err,
// then the files it names and the Slurm configuration) and fails if any;
// then the warnings, among them what slurm.conf's priority settings mean
// for the write mode (priorityWarnings).
func checkConfig(cfg sidecar.Config, err error, path string, stdout io.Writer) error {
	var ps sidecar.Problems
	if err != nil && !errors.As(err, &ps) {
		return err
	}
	n := len(ps)
	for _, p := range ps {
		fmt.Fprintln(stdout, p.Error())
	}
	warnings := cfg.Warnings()
	confOK := true
	for _, p := range cfg.CheckFiles(path) {
		fmt.Fprintln(stdout, p.Error())
		n++
		confOK = confOK && p.Key != "slurm.conf_dir"
	}
	if !confOK {
		// slurm.conf is missing: already reported.
	} else if sc, lerr := slurmconf.Load(cfg.Slurm.ConfDir, slurmconf.Options{}); lerr != nil {
		fmt.Fprintf(stdout, "%s: slurm.conf_dir: %v\n", path, lerr)
		n++
	} else if prio, perr := sc.Slurm.Priority(); perr != nil {
		fmt.Fprintf(stdout, "%s: slurm.conf_dir: %v\n", path, perr)
		n++
	} else {
		if n == 0 {
			fmt.Fprintf(stdout, "%s: ok (%d nodes, %d GPUs in %s)\n", path, len(sc.Cluster.Nodes), sc.Cluster.TotalGPUs(), cfg.Slurm.ConfDir)
		}
		warnings = append(warnings, priorityWarnings(cfg, prio)...)
	}
	for _, w := range warnings {
		fmt.Fprintf(stdout, "%s: warning: %s\n", path, w)
	}
	if n > 0 {
		return fmt.Errorf("%s: %s", path, plural(n, "problem"))
	}
	return nil
}

// Bounds of site_factor_max against the site's weights (factor mode).
// multifactor's priority is Σ weight·factor + site factor − nice with
// every factor in [0, 1], so a site factor of range R weighs like one more
// factor of weight R.
const (
	// siteFactorTooSmall: R below WeightSum/siteFactorTooSmall is less
	// than a tenth of what the site's factors can add up to: the order
	// only breaks near-ties.
	siteFactorTooSmall = 10
	// siteFactorTooLarge: R above siteFactorTooLarge·WeightFairshare
	// makes the whole fair-share range worth less than a tenth of the
	// order's (with no fair share weight, the same against WeightSum).
	siteFactorTooLarge = 10
)

// priorityWarnings says what slurm.conf's priority settings p mean for the
// write mode of cfg: in factor mode, a PriorityType that ignores site
// factors; multifactor weights all 0 (the factor is then the whole
// priority); a site_factor_max too small to change the order or so large
// that fair share no longer counts (siteFactorTooSmall,
// siteFactorTooLarge); in priority mode, the fair share it switches off.
func priorityWarnings(cfg sidecar.Config, p multifactor.Params) []string {
	const multifactor = "priority/multifactor"
	r, sum := uint64(cfg.SiteFactorMax), p.WeightSum()
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	if cfg.WriteMode == sidecar.WritePriority {
		if p.Type == multifactor && p.WeightFairshare > 0 {
			add("sidecar.write_mode = \"priority\" takes the managed jobs out of priority/multifactor: fair share "+
				"(PriorityWeightFairshare=%d) and the other factors do not count for them; write_mode = \"factor\" keeps them", p.WeightFairshare)
		}
		return out
	}
	switch {
	case p.Type != multifactor:
		add("sidecar.write_mode = \"factor\": PriorityType=%s ignores site factors, so the order never reaches Slurm: "+
			"set PriorityType=%s (and its PriorityWeight*), or write_mode = \"priority\"", p.Type, multifactor)
	case sum == 0:
		add("sidecar.write_mode = \"factor\": every PriorityWeight* is 0, so the site factor is the whole priority of the " +
			"managed jobs: the order alone decides, as in priority mode (set PriorityWeightFairshare etc. for fair share to count)")
	case r < sum/siteFactorTooSmall:
		add("sidecar.site_factor_max = %d is below a tenth of the PriorityWeight* sum (%d): the whole order is worth less "+
			"than a tenth of what the site's factors can add, so it only breaks near-ties; raise it to %d or more",
			r, sum, sum/siteFactorTooSmall)
	case p.WeightFairshare > 0 && r > siteFactorTooLarge*uint64(p.WeightFairshare):
		add("sidecar.site_factor_max = %d is more than %d times PriorityWeightFairshare (%d): fair share moves a managed job "+
			"by less than a tenth of the order's range and no longer matters much; lower it to %d or less",
			r, siteFactorTooLarge, p.WeightFairshare, siteFactorTooLarge*uint64(p.WeightFairshare))
	case p.WeightFairshare == 0 && r > siteFactorTooLarge*sum:
		add("sidecar.site_factor_max = %d is more than %d times the PriorityWeight* sum (%d): the site's factors no longer "+
			"matter much among managed jobs; lower it to %d or less", r, siteFactorTooLarge, sum, siteFactorTooLarge*sum)
	}
	return out
}

// siteFactorSupport says whether the sidecar can run in cfg's write mode
// on a REST API that can (supports) or cannot write site factors (version
// names it): the line to print, and whether it is a problem (factor mode
// without priority_fallback, which the sidecar refuses to start in).
func siteFactorSupport(cfg sidecar.Config, supports bool, version string) (string, bool) {
	switch {
	case cfg.WriteMode != sidecar.WriteFactor:
		return "write mode: priority (absolute priorities)", false
	case supports:
		return "write mode: factor (" + version + " writes site factors)", false
	case cfg.PriorityFallback:
		return "warning: " + version + " cannot write site factors (Slurm 22.05–23.11): with sidecar.priority_fallback = true " +
			"the sidecar writes priorities instead (asrpt_write_mode_fallback = 1)", false
	}
	return "sidecar.write_mode: " + version + " cannot write site factors (Slurm 22.05–23.11): the sidecar will refuse to start; " +
		"set sidecar.priority_fallback = true to write priorities instead, or write_mode = \"priority\"", true
}

// checkOnline contacts slurmrestd as the sidecar would and prints what it
// learns (release, API, cluster, the token's user and expiry, what it can
// read) and every problem, each naming the setting at fault; it also
// writes and removes a file in the state directory. It returns the number
// of problems.
func checkOnline(ctx context.Context, cfg sidecar.Config, path string, stdout io.Writer, now time.Time) int {
	n := 0
	problem := func(key, format string, a ...any) {
		fmt.Fprintf(stdout, "%s: %s: %s\n", path, key, fmt.Sprintf(format, a...))
		n++
	}
	if cfg.Slurm.TokenFile != "" && !strings.HasPrefix(cfg.Slurm.URL, "unix:") {
		switch c, err := slurmclient.ReadTokenClaims(cfg.Slurm.TokenFile); {
		case err != nil:
			problem("slurm.token_file", "%v", err)
		case !c.Expires.IsZero() && !c.Expires.After(now):
			problem("slurm.token_file", "the token in %s expired at %s", cfg.Slurm.TokenFile, c.Expires.UTC().Format(time.RFC3339))
		case c.Expires.IsZero():
			fmt.Fprintf(stdout, "%s: token: user %q, no expiry\n", path, c.User)
		default:
			fmt.Fprintf(stdout, "%s: token: user %q, expires %s (in %s)\n", path, c.User, c.Expires.UTC().Format(time.RFC3339), c.Expires.Sub(now).Round(time.Minute))
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch client, err := slurmclient.New(cctx, clientConfig(cfg)); {
	case err != nil:
		key := "slurm.url"
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, slurmclient.ErrAuth) {
			key = "slurm.token_file"
		}
		problem(key, "%v", err)
	default:
		v, _ := client.Ping(cctx)
		cluster := fmt.Sprintf("cluster %q", safetext.Escape(v.Cluster))
		if v.Cluster == "" {
			// v0.0.38 (22.05) does not report it: slurm.conf's name.
			cluster = "cluster not reported by the REST API"
			if sc, err := slurmconf.Load(cfg.Slurm.ConfDir, slurmconf.Options{}); err == nil && sc.Slurm.ClusterName != "" {
				cluster = fmt.Sprintf("cluster %q (slurm.conf's ClusterName; REST API %s does not report it)", safetext.Escape(sc.Slurm.ClusterName), client.APIVersion())
			}
		}
		fmt.Fprintf(stdout, "%s: slurmrestd: Slurm %s, API %s, %s\n", path, v.Release, client.APIVersion(), cluster)
		line, bad := siteFactorSupport(cfg, client.SupportsSiteFactor(), fmt.Sprintf("Slurm %s (REST API %s)", v.Release, client.APIVersion()))
		fmt.Fprintf(stdout, "%s: %s\n", path, line)
		if bad {
			n++
		}
		if nodes, err := client.Nodes(cctx); err != nil {
			problem("slurm.url", "reading the nodes: %v", err)
		} else {
			fmt.Fprintf(stdout, "%s: slurmrestd: %d nodes\n", path, len(nodes))
		}
		if jobs, err := client.Jobs(cctx); err != nil {
			problem("slurm.url", "reading the jobs: %v", err)
		} else {
			fmt.Fprintf(stdout, "%s: slurmrestd: %d pending or running jobs\n", path, len(jobs))
		}
		if al, ok := client.(slurmclient.AdminLeveler); ok {
			who := al.Identity()
			key := "slurm.user"
			if cfg.Slurm.User == "" {
				key = "slurm.token_file"
			}
			switch lvl, err := al.AdminLevel(cctx, who); {
			case who == "":
				fmt.Fprintf(stdout, "%s: identity: slurmrestd's own user (unix socket)\n", path)
			case err != nil:
				problem(key, "the administrator level of %s: %v", who, err)
			case strings.Contains(lvl, "Operator") || strings.Contains(lvl, "Administrator"):
				fmt.Fprintf(stdout, "%s: identity: %s, AdminLevel=%s: may update other users' jobs\n", path, safetext.Escape(who), safetext.Escape(lvl))
			default:
				problem(key, "%s has AdminLevel=%s and may not change other users' jobs: sacctmgr modify user %s set adminlevel=Operator",
					safetext.Escape(who), safetext.Escape(lvl), safetext.Escape(who))
			}
		}
	}
	dir := filepath.Dir(cfg.StateFile)
	if f, err := os.CreateTemp(dir, ".asrpt-check-*"); err != nil {
		problem("sidecar.state_file", "the state directory %s is not writable: %v", dir, err)
	} else {
		f.Close()
		os.Remove(f.Name())
		fmt.Fprintf(stdout, "%s: state directory %s: writable\n", path, dir)
	}
	return n
}
