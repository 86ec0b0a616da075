package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/asrpt/asrpt/internal/safetext"
	"github.com/asrpt/asrpt/sidecar"
	"github.com/asrpt/asrpt/slurmclient"
)

func init() {
	register("giveback", "hand every job asrpt manages back to Slurm's priority plugin: site factors back to 0, priorities recomputed (run with the sidecar stopped)", runGiveback)
}

func runGiveback(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("giveback", stderr)
	path := fs.String("config", defaultConfigPath, "configuration file (TOML)")
	inBand := fs.Bool("in-band", false, "also hand back pending jobs in scope whose priority lies in asrpt's bands, and set every pending job in scope's site factor back to 0 (lost state file)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := sidecar.LoadConfig(*path)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	// Beside a running sidecar a giveback would be undone by its next
	// cycle: refused (the sidecar hands back itself on stop with
	// giveback_on_shutdown).
	// The state file is checked before it is trusted (LockState: owner,
	// mode, links).
	lock, err := sidecar.LockState(cfg.StateFile)
	if errors.Is(err, sidecar.ErrLocked) {
		return fmt.Errorf("giveback: stop the sidecar first (or set sidecar.giveback_on_shutdown and stop it): %w", err)
	} else if err != nil {
		return fmt.Errorf("giveback: %w", err)
	}
	defer lock.Release()
	client, err := slurmclient.New(ctx, clientConfig(cfg))
	if err != nil {
		return err
	}
	rep, err := sidecar.GivebackFile(ctx, client, cfg.StateFile, cfg.Scope, *inBand, log)
	fmt.Fprintf(stdout, "handed back %d jobs, skipped %d, failed %d\n", len(rep.Returned), rep.Skipped, len(rep.Failed))
	if len(rep.NodesKept) > 0 {
		fmt.Fprintf(stdout, "jobs keeping the node list asrpt set (clearing it failed; scontrol update jobid=N reqnodelist= clears one): %s\n",
			safetext.Escape(strings.Join(rep.NodesKept, ",")))
	}
	return err
}
