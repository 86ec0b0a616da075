package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The full run's sizes: what `make bench` measures and ranges.toml's
// figures are recorded for.
var (
	fullSizes      = []int{10000, 100000, 1000000, 10000000}
	fullLASSizes   = []int{1000000}
	fullPolicyJobs = 100000
)

// The quick run's sizes (-quick): enough to try the runner in a minute.
var (
	quickSizes      = []int{2000, 20000}
	quickLASSizes   = []int{20000}
	quickPolicyJobs = 10000
)

// options are the bench's settings, from its flags and the BENCH_*
// environment variables (a flag wins over the variable).
type options struct {
	Quick bool
	// Sizes are the trace sizes (jobs) asrpt is replayed on with the
	// forest; LASSizes those las is (none: skipped); PolicyJobs the size
	// every policy is replayed on with the mean predictor (0: skipped),
	// PolicyRuns times each, keeping the fastest.
	Sizes      []int
	LASSizes   []int
	PolicyJobs int
	PolicyRuns int
	// ScaleRuns is how often each replay of Sizes and LASSizes up to
	// maxRepeatJobs jobs runs, keeping the fastest: the machines are
	// shared, and the fastest of a few runs is the nearest to a quiet
	// machine's figure. Larger traces run once.
	ScaleRuns int
	// Dir keeps the binaries, traces and reports there (empty: a
	// temporary directory, removed at the end).
	Dir string
	// Ranges is the ranges file; Results the directory results.json and
	// results.md are written to (empty, or a quick run: not written);
	// Readme the README whose bench block is replaced (empty: none).
	Ranges  string
	Results string
	Readme  string
	// Render measures nothing: results.md and the README's block are
	// rendered again from Results/results.json.
	Render bool
	// TimeoutFactor × the range's max wall time kills a replay that has
	// a range (at least 30 s); Timeout kills one that has none.
	TimeoutFactor float64
	Timeout       time.Duration
}

// parseOptions reads the flags in args, with defaults from getenv.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	var sizes, lasSizes, policyJobs, policyRuns, scaleRuns string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: go run ./test/bench [flags]  (from the repository root)\n\n"+
			"Measures the replay, the placement and the predictor, checks every figure against its recorded\n"+
			"range (ranges.toml), prints the tables and exits 1 when a figure leaves its range.\n\n")
		fs.PrintDefaults()
	}
	fs.BoolVar(&o.Quick, "quick", false, "small sizes and fewer iterations, to try the runner; writes no results")
	fs.StringVar(&sizes, "sizes", getenv("BENCH_SIZES"), "comma-separated trace `sizes` (jobs) asrpt is replayed on (default "+ints(fullSizes)+"; quick "+ints(quickSizes)+"; env BENCH_SIZES)")
	fs.StringVar(&lasSizes, "las-sizes", getenv("BENCH_LAS_SIZES"), "trace `sizes` las is replayed on, or none (default "+ints(fullLASSizes)+"; quick "+ints(quickLASSizes)+"; env BENCH_LAS_SIZES)")
	fs.StringVar(&policyJobs, "policy-jobs", getenv("BENCH_POLICY_JOBS"), "trace size every policy is replayed on, 0 for none (default "+strconv.Itoa(fullPolicyJobs)+"; quick "+strconv.Itoa(quickPolicyJobs)+"; env BENCH_POLICY_JOBS)")
	fs.StringVar(&scaleRuns, "scale-runs", getenv("BENCH_SCALE_RUNS"), "runs of each replay of -sizes and -las-sizes up to 1,000,000 jobs, the fastest kept (default 3; quick 1; env BENCH_SCALE_RUNS)")
	fs.StringVar(&policyRuns, "policy-runs", getenv("BENCH_POLICY_RUNS"), "replays of each policy, the fastest kept (default 3; quick 1; env BENCH_POLICY_RUNS)")
	fs.StringVar(&o.Dir, "dir", getenv("BENCH_DIR"), "keep binaries, traces and reports in `dir` (default: a temporary directory, removed; env BENCH_DIR)")
	fs.StringVar(&o.Ranges, "ranges", "test/bench/ranges.toml", "the recorded ranges `file`")
	fs.StringVar(&o.Results, "results", "test/bench", "write results.json and results.md into `dir` (empty: none; never in a quick run)")
	fs.StringVar(&o.Readme, "readme", "", "replace the block between the bench markers of this `file` with the results' tables")
	fs.BoolVar(&o.Render, "render", false, "measure nothing: render results.md (and -readme's block) again from results.json")
	fs.Float64Var(&o.TimeoutFactor, "timeout-factor", 3, "kill a replay after this many times its range's max wall time (at least 30 s)")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "kill a replay without a wall-time range after this long")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	var err error
	pick := func(full, quick []int) []int {
		if o.Quick {
			return quick
		}
		return full
	}
	if o.Sizes, err = parseSizes("sizes", sizes, pick(fullSizes, quickSizes)); err != nil {
		return o, err
	}
	if o.LASSizes, err = parseSizes("las-sizes", lasSizes, pick(fullLASSizes, quickLASSizes)); err != nil {
		return o, err
	}
	if o.PolicyJobs, err = parseCount("policy-jobs", policyJobs, pick([]int{fullPolicyJobs}, []int{quickPolicyJobs})[0], 0); err != nil {
		return o, err
	}
	if o.PolicyRuns, err = parseCount("policy-runs", policyRuns, pick([]int{3}, []int{1})[0], 1); err != nil {
		return o, err
	}
	if o.ScaleRuns, err = parseCount("scale-runs", scaleRuns, pick([]int{3}, []int{1})[0], 1); err != nil {
		return o, err
	}
	if !(o.TimeoutFactor > 0) || o.Timeout <= 0 {
		return o, fmt.Errorf("-timeout-factor and -timeout must be positive")
	}
	return o, nil
}

// parseSizes reads a comma-separated list of job counts ("none": empty;
// "": def), each at least 1, sorted ascending without duplicates.
func parseSizes(name, s string, def []int) ([]int, error) {
	switch strings.TrimSpace(s) {
	case "":
		return slices.Clone(def), nil
	case "none":
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-%s %q: want job counts of at least 1, comma-separated, or none", name, s)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseCount reads a count of at least lo ("": def).
func parseCount(name, s string, def, lo int) (int, error) {
	if strings.TrimSpace(s) == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < lo {
		return 0, fmt.Errorf("-%s %q: want a whole number of at least %d", name, s, lo)
	}
	return n, nil
}

// partial says how the run differs from the full `make bench` ("" when it
// does not), for the results' header.
func (o options) partial() string {
	var diffs []string
	if o.Quick {
		diffs = append(diffs, "quick (fewer benchmark iterations, forest training on 50k rows)")
	}
	if !slices.Equal(o.Sizes, fullSizes) {
		diffs = append(diffs, "asrpt on "+jobsOrSkipped(o.Sizes)+" (full: "+ints(fullSizes)+" jobs)")
	}
	if !slices.Equal(o.LASSizes, fullLASSizes) {
		diffs = append(diffs, "las on "+jobsOrSkipped(o.LASSizes)+" (full: "+ints(fullLASSizes)+" jobs)")
	}
	if o.PolicyJobs != fullPolicyJobs {
		n := []int{o.PolicyJobs}
		if o.PolicyJobs == 0 {
			n = nil
		}
		diffs = append(diffs, fmt.Sprintf("every policy on %s (full: %d jobs)", jobsOrSkipped(n), fullPolicyJobs))
	}
	return strings.Join(diffs, "; ")
}

// ints prints a list of sizes comma-separated.
func ints(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// jobsOrSkipped prints "N,M jobs", or "skipped" for none.
func jobsOrSkipped(ns []int) string {
	if len(ns) == 0 {
		return "none: skipped"
	}
	return ints(ns) + " jobs"
}
