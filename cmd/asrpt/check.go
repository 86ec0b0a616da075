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

	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/slurmconf"
)

// checkConfig prints every problem of the configuration (parse error err,
// then the files it names and the Slurm configuration) and fails if any.
func checkConfig(cfg sidecar.Config, err error, path string, stdout io.Writer) error {
	var ps sidecar.Problems
	if err != nil && !errors.As(err, &ps) {
		return err
	}
	n := len(ps)
	for _, p := range ps {
		fmt.Fprintln(stdout, p.Error())
	}
	confOK := true
	for _, p := range cfg.CheckFiles(path) {
		fmt.Fprintln(stdout, p.Error())
		n++
		confOK = confOK && p.Key != "slurm.conf_dir"
	}
	if !confOK {
		// slurm.conf is missing: already reported.
	} else if cl, lerr := slurmconf.LoadCluster(cfg.Slurm.ConfDir); lerr != nil {
		fmt.Fprintf(stdout, "%s: slurm.conf_dir: %v\n", path, lerr)
		n++
	} else if n == 0 {
		fmt.Fprintf(stdout, "%s: ok (%d nodes, %d GPUs in %s)\n", path, len(cl.Nodes), cl.TotalGPUs(), cfg.Slurm.ConfDir)
	}
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stdout, "%s: warning: %s\n", path, w)
	}
	if n > 0 {
		return fmt.Errorf("%s: %d problems", path, n)
	}
	return nil
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
		fmt.Fprintf(stdout, "%s: slurmrestd: Slurm %s, API %s, cluster %q\n", path, v.Release, client.APIVersion(), v.Cluster)
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
				fmt.Fprintf(stdout, "%s: identity: %s, AdminLevel=%s: may update other users' jobs\n", path, who, lvl)
			default:
				problem(key, "%s has AdminLevel=%s and may not change other users' jobs: sacctmgr modify user %s set adminlevel=Operator", who, lvl, who)
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
