package main

import (
	"context"
	"fmt"
	"io"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/predictor"
)

func init() {
	register("train", "train the run-time forest on a history and write a model file", runTrain)
}

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	history := fs.String("trace", "", "accounting history `file` (a trace in --format)")
	fs.StringVar(history, "history", "", "the same as --trace")
	format := fs.String("format", "native", "history format: native, sacct or helios")
	out := fs.String("out", "", "model `file` to write")
	fs.StringVar(out, "o", "", "the same as --out")
	ff := addForestFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: --out model file is required", errUsage)
	}
	cfg, err := ff.config()
	if err != nil {
		return err
	}
	jobs, err := untilDone(ctx, "read history", func() ([]job.Job, error) { return readHistory(*history, *format) })
	if err != nil {
		return err
	}
	m, err := untilDone(ctx, "train", func() (*predictor.Model, error) { return predictor.Train(jobs, cfg) })
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	if err := m.SaveFile(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trained %d trees (%d nodes) on %d finished jobs; wrote %s\n", len(m.Forest.Trees), m.Forest.Nodes(), m.TrainRows, *out)
	return nil
}
