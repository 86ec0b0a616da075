package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"

	"github.com/asrpt/asrpt/internal/atomicfile"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/trace"
)

func init() {
	register("eval", "time-split evaluation of the run-time predictors on a history", runEval)
}

// forestFlags are the forest settings shared by train and eval.
type forestFlags struct {
	trees, depth, leaf, features int
	quantile, failWeight         float64
	seed                         uint64
	leafKind                     string
	residual                     bool
}

func addForestFlags(fs *flag.FlagSet) *forestFlags {
	d := predictor.DefaultTrainConfig()
	f := &forestFlags{}
	fs.IntVar(&f.trees, "trees", d.Forest.Trees, "number of trees")
	fs.IntVar(&f.depth, "max-depth", d.Forest.MaxDepth, "maximum tree depth")
	fs.IntVar(&f.leaf, "min-leaf", d.Forest.MinSamplesLeaf, "minimum samples per leaf")
	fs.IntVar(&f.features, "max-features", 0, "features tried per split (0: half)")
	fs.Float64Var(&f.quantile, "quantile", d.Forest.Quantile, "combine trees by this quantile (0: mean)")
	fs.Float64Var(&f.failWeight, "fail-weight", d.FailWeight, "training weight of failed/cancelled jobs (0..1)")
	fs.Uint64Var(&f.seed, "seed", d.Forest.Seed, "random seed")
	fs.BoolVar(&f.residual, "residual", d.Residual, "learn the log ratio to the family median instead of the log run time")
	fs.StringVar(&f.leafKind, "leaf", d.Forest.Leaf.String(), "leaf value: median or mean (of log run time)")
	return f
}

func (f *forestFlags) config() (predictor.TrainConfig, error) {
	c := predictor.DefaultTrainConfig()
	c.Forest.Trees, c.Forest.MaxDepth, c.Forest.MinSamplesLeaf, c.Forest.MaxFeatures = f.trees, f.depth, f.leaf, f.features
	c.Forest.Quantile, c.Forest.Seed, c.FailWeight, c.Residual = f.quantile, f.seed, f.failWeight, f.residual
	switch f.leafKind {
	case "median":
		c.Forest.Leaf = predictor.LeafMedian
	case "mean":
		c.Forest.Leaf = predictor.LeafMean
	default:
		return c, fmt.Errorf("%w: --leaf %q: want median or mean", errUsage, f.leafKind)
	}
	return c, nil
}

// readHistory reads a trace file in the named format.
func readHistory(path, format string) ([]job.Job, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: a history file is required", errUsage)
	}
	f, err := trace.ParseFormat(format)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	return trace.ReadFile(path, f)
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("eval", stderr)
	history := fs.String("trace", "", "accounting history `file` (a trace in --format)")
	fs.StringVar(history, "history", "", "the same as --trace")
	format := fs.String("format", "native", "history format: native, sacct or helios")
	split := fs.Float64("split", 0.8, "share of finished jobs, in submit order, used for training")
	jsonOut := fs.String("out", "", "also write the report as JSON to `file` (all or nothing)")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout instead of the text")
	variants := fs.Bool("variants", false, "also evaluate forest variants: mean-of-log leaves, no failures in training, 80th percentile")
	ff := addForestFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := ff.config()
	if err != nil {
		return err
	}
	jobs, err := untilDone(ctx, "read history", func() ([]job.Job, error) { return readHistory(*history, *format) })
	if err != nil {
		return err
	}
	ec := predictor.EvalConfig{Split: *split, Forests: []predictor.NamedTrainConfig{{Name: "forest", Config: cfg}}}
	if *variants {
		meanLeaf := cfg
		meanLeaf.Forest.Leaf, meanLeaf.Forest.Quantile, meanLeaf.FailWeight, meanLeaf.Residual = predictor.LeafMean, 0, 1, false
		okOnly := cfg
		okOnly.FailWeight = 0
		q80 := cfg
		q80.Forest.Quantile = 0.8
		ec.Forests = append(ec.Forests,
			predictor.NamedTrainConfig{Name: "forest-meanleaf", Config: meanLeaf},
			predictor.NamedTrainConfig{Name: "forest-okonly", Config: okOnly},
			predictor.NamedTrainConfig{Name: "forest-q80", Config: q80})
	}
	rep, err := untilDone(ctx, "eval", func() (*predictor.EvalReport, error) { return predictor.Evaluate(jobs, ec) })
	if err != nil {
		return err
	}
	for i := range rep.Predictors {
		for k := range rep.Predictors[i].Histogram {
			b := &rep.Predictors[i].Histogram[k]
			b.Hi = math.Min(b.Hi, 1e308) // JSON has no infinity
		}
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	if *asJSON {
		if _, err := stdout.Write(append(data, '\n')); err != nil {
			return err
		}
	} else if err := rep.WriteText(stdout); err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if err := atomicfile.Write(*jsonOut, func(w io.Writer) error {
			_, err := w.Write(append(data, '\n'))
			return err
		}); err != nil {
			return fmt.Errorf("json: %w", err)
		}
	}
	return nil
}
