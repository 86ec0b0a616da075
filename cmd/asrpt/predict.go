package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/predictor"
)

func init() {
	register("predict", "predict run times of the jobs in a trace with a model file", runPredict)
}

func runPredict(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("predict", stderr)
	model := fs.String("model", "", "model `file` written by asrpt train")
	jobsPath := fs.String("jobs", "", "trace `file` of the jobs to predict")
	format := fs.String("format", "native", "format of -jobs and -history: native, sacct or helios")
	history := fs.String("trace", "", "optional extra history `file` of earlier jobs")
	fs.StringVar(history, "history", "", "the same as --trace")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *model == "" {
		return fmt.Errorf("%w: --model is required", errUsage)
	}
	m, err := predictor.LoadFile(*model)
	if err != nil {
		return err
	}
	jobs, err := readHistory(*jobsPath, *format)
	if err != nil {
		return err
	}
	n := len(jobs)
	all := jobs
	if *history != "" {
		h, err := readHistory(*history, *format)
		if err != nil {
			return err
		}
		all = append(append([]job.Job{}, jobs...), h...)
	}
	if err := predictor.Validate(all); err != nil {
		return err
	}
	// Each job's features come from the jobs (of both files) that ended
	// before its submit time.
	rows := predictor.BuildRows(all)[:n]
	pred := m.PredictRows(rows)
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, "id,predicted_s")
	for i := range jobs {
		s := pred[i]
		if l := jobs[i].TimeLimit; l > 0 && s > l {
			s = l
		}
		fmt.Fprintf(w, "%s,%s\n", jobs[i].ID, strconv.FormatFloat(s, 'f', 0, 64))
	}
	return w.Flush()
}
