package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/asrpt/asrpt/internal/atomicfile"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/trace"
)

func init() {
	register("gen", "generate a synthetic workload as a native trace (see trace/GENERATOR.md)", runGen)
}

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	d := trace.DefaultGenConfig()
	fs := newFlagSet("gen", stderr)
	jobs := fs.Int("jobs", d.Jobs, "number of jobs")
	seed := fs.Int64("seed", d.Seed, "random seed; the same flags give the same trace")
	nodes := fs.Int("nodes", d.ClusterGPUs/d.GPUsPerNode, "cluster nodes; no job asks for more than nodes × gpus-per-node GPUs")
	gpn := fs.Int("gpus-per-node", d.GPUsPerNode, "GPUs per node; larger jobs ask for whole nodes")
	load := fs.Float64("load", d.Load, "offered load: GPU-seconds submitted per GPU-second of the cluster (near 1: jobs queue)")
	profiled := fs.Float64("profiled", d.ProfiledShare, "share of multi-GPU job families with a placement catalogue profile (0..1)")
	arrays := fs.Float64("array-share", d.ArrayShare, "share of submissions that are job arrays of 2..64 tasks (0..1; trace/GENERATOR.md)")
	arraySpread := fs.Float64("array-task-spread", d.ArrayTaskSpread, "spread of an array's task run times as a share of their family's (0..1)")
	commands := fs.Int("commands", d.Commands, "argument sets per job family: each job carries the command (script and set) it ran (0: none; trace/GENERATOR.md)")
	commandSpread := fs.Float64("command-spread", d.CommandSpread, "share of a family's log run-time variance its argument sets explain (0..1; read with --commands)")
	users := fs.Int("users", d.Users, "number of users (0: 1.2·√jobs)")
	start := fs.String("start", time.Unix(int64(d.Start), 0).UTC().Format(time.RFC3339), "start of the submission period: RFC 3339 or Unix seconds")
	format := fs.String("format", "csv", "output format: csv or jsonl (native trace, trace/FORMAT.md)")
	out := fs.String("out", "", "write to this file (atomically: all or nothing) instead of stdout")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "csv" && *format != "jsonl" {
		return fmt.Errorf("%w: --format %q (want csv or jsonl)", errUsage, *format)
	}
	st, err := genParseStart(*start)
	if err != nil {
		return fmt.Errorf("%w: --start: %v", errUsage, err)
	}
	if *nodes < 1 || *gpn < 1 || *nodes > trace.MaxGPUs/max(*gpn, 1) {
		return fmt.Errorf("%w: --nodes %d --gpus-per-node %d: want positive values", errUsage, *nodes, *gpn)
	}
	cfg := d
	cfg.Jobs, cfg.Seed, cfg.ClusterGPUs, cfg.GPUsPerNode = *jobs, *seed, *nodes**gpn, *gpn
	cfg.Load, cfg.ProfiledShare, cfg.Users, cfg.Start = *load, *profiled, *users, st
	cfg.ArrayShare, cfg.ArrayTaskSpread = *arrays, *arraySpread
	cfg.Commands, cfg.CommandSpread = *commands, *commandSpread
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	generated, err := trace.GenerateContext(ctx, cfg)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		w = ctxWriter{ctx, w} // SIGINT stops the writing too (nothing is left of --out)
		if *format == "jsonl" {
			return trace.WriteJSONL(w, generated)
		}
		return trace.WriteCSV(w, generated)
	}
	if *out == "" {
		bw := bufio.NewWriterSize(stdout, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := atomicfile.Write(*out, write); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "asrpt gen: %d jobs, %s\n", len(generated), genSpan(generated))
	return nil
}

// ctxWriter writes to w until ctx is done, then fails with ctx's error.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// genParseStart reads RFC 3339 or Unix seconds.
func genParseStart(s string) (float64, error) {
	if x, err := strconv.ParseInt(s, 10, 64); err == nil {
		return float64(x), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither RFC 3339 nor Unix seconds", s)
	}
	return float64(t.Unix()), nil
}

func genSpan(jobs []job.Job) string {
	first := time.Unix(int64(jobs[0].Submit), 0).UTC()
	last := time.Unix(int64(jobs[len(jobs)-1].Submit), 0).UTC()
	return fmt.Sprintf("submitted %s – %s", first.Format(time.RFC3339), last.Format(time.RFC3339))
}
