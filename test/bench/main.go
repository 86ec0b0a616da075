// Command bench is `make bench`: it measures the replay (asrpt on
// generated traces up to 10M jobs, las, every policy against fifo), the
// placement, the virtual single machine and the forest predictor, checks
// every figure against its recorded range (ranges.toml) and exits 1 when
// one leaves it, naming the figure, its value and its range.
//
// The tables go to stdout and, in a full or partial run (not -quick), to
// results.json and results.md, which are committed; -readme splices them
// into the README between its bench markers, so the README's figures are
// always the last run's. Run it from the repository root:
//
//	go run ./test/bench -readme README.md      # the full run, as make bench
//	go run ./test/bench -quick                 # small sizes, to try it
//	go run ./test/bench -render -readme README.md
//
// Exit status: 0 when every checked figure is in its range, 1 when one is
// not (or a run failed), 2 on a usage or setup error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/asrpt/asrpt/internal/atomicfile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	opts, err := parseOptions(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	if opts.Render {
		if err := render(opts); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 2
		}
		return 0
	}
	res, runErrs, err := measure(ctx, opts, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	md := Markdown(res)
	fmt.Fprint(stdout, md)
	if opts.Results != "" && !opts.Quick {
		if err := writeResults(opts.Results, res, md); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 2
		}
		fmt.Fprintf(stderr, "bench: wrote %s and %s\n", filepath.Join(opts.Results, "results.json"),
			filepath.Join(opts.Results, "results.md"))
		if opts.Readme != "" {
			if err := SpliceFile(opts.Readme, md); err != nil {
				fmt.Fprintln(stderr, "bench:", err)
				return 2
			}
			fmt.Fprintf(stderr, "bench: replaced the bench block of %s\n", opts.Readme)
		}
	}
	return verdict(res, opts.partial() != "", runErrs, stderr)
}

// verdict prints the summary line and every figure out of its range, and
// returns the exit status: 1 when a figure left its range, its run failed
// or, in a full run, a figure with a range was not measured.
func verdict(res *Results, partial bool, runErrs []error, stderr io.Writer) int {
	var bad []string
	for _, c := range res.Checks {
		if !c.Pass() && !(partial && c.Status == StatusMissing) {
			bad = append(bad, c.Message())
		}
	}
	for _, err := range runErrs {
		bad = append(bad, "run failed: "+err.Error())
	}
	fmt.Fprintf(stderr, "bench: %s.\n", Summary(res.Checks))
	if len(bad) == 0 {
		return 0
	}
	fmt.Fprintf(stderr, "bench: FAIL: %d:\n  %s\n", len(bad), strings.Join(bad, "\n  "))
	return 1
}

// measure runs everything the options ask for, in order: the Go
// benchmarks, every policy on one trace, asrpt over the sizes, las over
// its sizes; then checks the figures. runErrs are the runs that failed
// (their figures missing); err is a setup error that stopped the run.
func measure(ctx context.Context, opts options, stderr io.Writer) (res *Results, runErrs []error, err error) {
	rs, err := LoadRanges(opts.Ranges)
	if err != nil {
		return nil, nil, err
	}
	root, err := repoRoot()
	if err != nil {
		return nil, nil, err
	}
	machine := describeMachine(time.Now())
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "asrpt-bench-"); err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, nil, err
	}
	start := time.Now()
	b := &bench{opts: opts, dir: dir, ranges: make(map[string]Range, len(rs)),
		log: func(format string, a ...any) {
			fmt.Fprintf(stderr, "bench: [%5.0f s] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, a...))
		}}
	for _, r := range rs {
		b.ranges[r.Key] = r
	}
	if err := runGoBenches(ctx, root, dir, goBenches(opts.Quick), &b.figs, b.log); err != nil {
		runErrs = append(runErrs, err)
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if b.bin, err = buildAsrpt(ctx, root, dir); err != nil {
		return nil, nil, err
	}
	steps := []func() error{
		func() error {
			if opts.PolicyJobs == 0 {
				return nil
			}
			return b.policies(ctx, opts.PolicyJobs, opts.PolicyRuns)
		},
		func() error {
			err := b.replaySizes(ctx, "asrpt", "forest", opts.Sizes)
			b.growth("asrpt", "forest", opts.Sizes)
			return err
		},
		func() error { return b.replaySizes(ctx, "las", "forest", opts.LASSizes) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			runErrs = append(runErrs, err)
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
	}
	if err := checkKeys(b.figs.figures); err != nil {
		return nil, nil, err
	}
	machine.LoadEnd = loadAverage()
	return &Results{Machine: machine, Partial: opts.partial(), Tables: b.figs.tables, Figures: b.figs.figures,
		Checks: CheckRanges(b.figs.figures, rs)}, runErrs, nil
}

// repoRoot checks that the bench runs from the repository's root (where
// go.mod names the module) and returns it.
func repoRoot() (string, error) {
	b, err := os.ReadFile("go.mod")
	if err != nil || !strings.Contains(string(b), "module github.com/asrpt/asrpt\n") {
		return "", errors.New("run from the repository root (go run ./test/bench)")
	}
	return os.Getwd()
}

// writeResults writes results.json and results.md into dir, both or
// neither (atomicfile.Set).
func writeResults(dir string, res *Results, md string) error {
	var set atomicfile.Set
	if err := set.Add(filepath.Join(dir, "results.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}); err != nil {
		return err
	}
	if err := set.Add(filepath.Join(dir, "results.md"), func(w io.Writer) error {
		_, err := io.WriteString(w, md)
		return err
	}); err != nil {
		return err
	}
	return set.Commit()
}

// readResults reads results.json from dir.
func readResults(dir string) (*Results, error) {
	path := filepath.Join(dir, "results.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Results
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &res, nil
}

// render writes results.md again from results.json and, with -readme,
// splices it into the README: for a change of the tables' layout, or a
// README whose block was edited by hand.
func render(opts options) error {
	if opts.Results == "" {
		return errors.New("-render needs -results")
	}
	res, err := readResults(opts.Results)
	if err != nil {
		return err
	}
	md := Markdown(res)
	if err := atomicfile.Write(filepath.Join(opts.Results, "results.md"), func(w io.Writer) error {
		_, err := io.WriteString(w, md)
		return err
	}); err != nil {
		return err
	}
	if opts.Readme != "" {
		return SpliceFile(opts.Readme, md)
	}
	return nil
}
