package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/asrpt/asrpt/slurmconf"
	"github.com/asrpt/asrpt/topo"
)

func init() {
	register("conf", "check or show the cluster model read from Slurm's configuration files", runConf)
}

// errConfProblems marks a configuration with errors; the problems were
// already printed.
var errConfProblems = errors.New("configuration has errors")

func confUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: asrpt conf check [--dir /etc/slurm] [--bandwidth FILE] [--topo FILE]...")
	fmt.Fprintln(w, "       asrpt conf show  [--dir /etc/slurm] [--json] [--bandwidth FILE] [--topo FILE]...")
	fmt.Fprintln(w, "\ncheck prints every problem (file:line) and a summary, and exits 1 if there are errors.")
	fmt.Fprintln(w, "show prints the cluster model (nodes, partitions, switches, bandwidths).")
}

func runConf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		confUsage(stderr)
		return fmt.Errorf("%w: want a subcommand: check or show", errUsage)
	}
	switch args[0] {
	case "check":
		return confCheck(ctx, args[1:], stdout, stderr)
	case "show":
		return confShow(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		confUsage(stderr)
		return flag.ErrHelp
	}
	confUsage(stderr)
	return fmt.Errorf("%w: unknown subcommand %q (want check or show)", errUsage, args[0])
}

// confFlags are the flags check and show share.
type confFlags struct {
	dir       string
	bandwidth string
	topoFiles []string
}

func (c *confFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "dir", "/etc/slurm", "directory with slurm.conf, gres.conf and topology.conf")
	fs.StringVar(&c.bandwidth, "bandwidth", "", "asrpt bandwidth TOML file (see slurmconf.BandwidthConf); default bandwidths when empty")
	fs.Func("topo", "JSON topology file written by `asrpt topo --out` (repeatable); its link matrix overrides gres.conf Links= for its node", func(s string) error {
		c.topoFiles = append(c.topoFiles, s)
		return nil
	})
}

// load reads the configuration; it fails only when an --topo file cannot
// be read (problems in the Slurm files are in the returned Config).
func (c *confFlags) load() (*slurmconf.Config, error) {
	opt := slurmconf.Options{BandwidthFile: c.bandwidth}
	for _, f := range c.topoFiles {
		t, err := readTopoFile(f)
		if err != nil {
			return nil, err
		}
		opt.Links = append(opt.Links, slurmconf.NodeLinks{Node: t.Node, Links: t.Links, Source: f})
	}
	cfg, _ := slurmconf.Load(c.dir, opt)
	return cfg, nil
}

func readTopoFile(path string) (*topo.Topology, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--topo: %w", err)
	}
	defer f.Close()
	t, err := topo.ReadJSON(f, path)
	if err != nil {
		return nil, fmt.Errorf("--topo: %w", err)
	}
	return t, nil
}

func confCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("conf check", stderr)
	var cf confFlags
	cf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := untilDone(ctx, "conf", cf.load)
	if err != nil {
		return err
	}
	for _, p := range cfg.Problems {
		fmt.Fprintln(stdout, p.Error())
	}
	nerr := len(cfg.Problems.Errors())
	nwarn := len(cfg.Problems) - nerr
	fmt.Fprintln(stdout, summary(cfg))
	fmt.Fprintf(stdout, "%d errors, %d warnings\n", nerr, nwarn)
	if nerr > 0 {
		return fmt.Errorf("%s: %d errors: %w", cf.dir, nerr, errConfProblems)
	}
	return nil
}

func confShow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("conf show", stderr)
	var cf confFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the model as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := untilDone(ctx, "conf", cf.load)
	if err != nil {
		return err
	}
	for _, p := range cfg.Problems {
		fmt.Fprintln(stderr, p.Error())
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(cfg.Model()); err != nil {
			return fmt.Errorf("write model: %w", err)
		}
	} else {
		showText(stdout, cfg)
	}
	if n := len(cfg.Problems.Errors()); n > 0 {
		return fmt.Errorf("%s: %d errors (see above): %w", cf.dir, n, errConfProblems)
	}
	return nil
}

// summary is one line describing the model.
func summary(cfg *slurmconf.Config) string {
	cl := cfg.Cluster
	types := map[string]int{}
	for _, n := range cl.Nodes {
		t := n.GPUType
		if t == "" {
			t = "untyped"
		}
		if n.GPUs > 0 {
			types[t] += n.GPUs
		}
	}
	var parts []string
	for t, n := range types {
		parts = append(parts, fmt.Sprintf("%s×%d", t, n))
	}
	sort.Strings(parts)
	maxLevel := -1
	for _, s := range cl.Switches {
		maxLevel = max(maxLevel, s.Level)
	}
	s := fmt.Sprintf("%s: %d nodes, %d GPUs", cfg.Dir, len(cl.Nodes), cl.TotalGPUs())
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	s += fmt.Sprintf(", %d partitions, %d switches", len(cfg.Partitions), len(cl.Switches))
	if maxLevel >= 0 {
		s += fmt.Sprintf(" in %d levels", maxLevel+1)
	}
	return s
}

// showText prints the model compactly: nodes grouped by identical GPU
// count, type, switch and link matrix presence.
func showText(w io.Writer, cfg *slurmconf.Config) {
	m := cfg.Model()
	fmt.Fprintln(w, summary(cfg))
	if m.ClusterName != "" {
		fmt.Fprintf(w, "cluster %s: scheduler %s, priority %s, select %s, topology %s\n",
			m.ClusterName, orNone(m.SchedulerType), orNone(m.PriorityType), orNone(m.SelectType), orNone(m.TopologyPlugin))
	}
	type key struct {
		gpus    int
		typ, sw string
		links   bool
		intra   float64
	}
	var order []key
	groups := map[key][]string{}
	for _, n := range m.Nodes {
		k := key{n.GPUs, n.GPUType, n.Switch, n.Links != nil, n.IntraBW}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n.Name)
	}
	fmt.Fprintln(w, "\nnodes:")
	for _, k := range order {
		fmt.Fprintf(w, "  %-24s %2d GPUs %-8s", slurmconf.CompressHostlist(groups[k]), k.gpus, orNone(k.typ))
		if k.sw != "" {
			fmt.Fprintf(w, " switch %s", k.sw)
		}
		if k.links {
			fmt.Fprint(w, " nvlink-matrix")
		}
		if k.intra > 0 {
			fmt.Fprintf(w, " intra %.3g GB/s", k.intra/1e9)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\npartitions:")
	for _, p := range m.Partitions {
		def := ""
		if p.Default {
			def = " default"
		}
		fmt.Fprintf(w, "  %-12s %s (%d nodes, %d GPUs) tier %d%s\n", p.Name, p.Nodes, p.NodeCount, p.GPUs, p.PriorityTier, def)
	}
	if len(m.Switches) > 0 {
		fmt.Fprintln(w, "\nswitches:")
		for _, s := range m.Switches {
			fmt.Fprintf(w, "  %-12s level %d", s.Name, s.Level)
			if s.Parent != "" {
				fmt.Fprintf(w, " parent %s", s.Parent)
			}
			if s.Nodes != "" {
				fmt.Fprintf(w, " nodes %s", s.Nodes)
			}
			if s.LinkSpeed > 0 {
				fmt.Fprintf(w, " %.3g GB/s", s.LinkSpeed/1e9)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintf(w, "\nbandwidth: nvlink %.3g GB/s, intra-node %.3g GB/s, inter-node %.3g GB/s\n",
		m.Bandwidth.NVLink/1e9, m.Bandwidth.Intra/1e9, m.Bandwidth.Inter/1e9)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
