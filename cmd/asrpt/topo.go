package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/asrpt/asrpt/topo"
)

func init() {
	register("topo", "probe this node's GPUs with NVML: NVLink/PCIe topology, gres.conf lines, JSON", runTopo)
}

// probeTopology is topo.Probe; tests replace it.
var probeTopology = topo.Probe

// runSMI is topo.RunSMI; tests replace it.
var runSMI topo.SMIRunner = topo.RunSMI

func runTopo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("topo", stderr)
	node := fs.String("node", "", "Slurm node name for the output (default: the short host name)")
	typ := fs.String("type", "", "GRES type for the gres.conf lines (default: derived from the GPU model, e.g. a100)")
	asJSON := fs.Bool("json", false, "print the JSON topology instead of the report")
	out := fs.String("out", "", "also write the JSON topology to this file (read back by `asrpt conf --topo`)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	name := *node
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("host name: %w (use --node)", err)
		}
		name, _, _ = strings.Cut(h, ".")
	}
	t, err := probeTopology(name)
	if errors.Is(err, topo.ErrNotBuilt) {
		// A binary built without cgo (the static one contrib installs)
		// asks nvidia-smi instead of NVML.
		t, err = topo.ProbeSMI(ctx, runSMI, name)
		if errors.Is(err, topo.ErrNoSMI) {
			return fmt.Errorf("%w; this asrpt has no NVML either (built with CGO_ENABLED=0)", err)
		}
	}
	if err != nil {
		return err
	}
	if *out != "" {
		if err := writeTopoFile(*out, t); err != nil {
			return err
		}
	}
	if *asJSON {
		return t.WriteJSON(stdout)
	}
	if err := t.Text(stdout); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintln(stdout, "\n# gres.conf lines for this node (cons_tres prefers GPUs with more Links):")
	for _, l := range t.GresLines(*typ) {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

func writeTopoFile(path string, t *topo.Topology) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := t.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}
