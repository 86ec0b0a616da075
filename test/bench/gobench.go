package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// goBench is one run of a package's Go benchmarks.
type goBench struct {
	// Pkg is the package directory, relative to the repository root
	// ("placement").
	Pkg string
	// Bench is the -test.bench pattern, one regular expression per level
	// of sub-benchmark, split by '/'.
	Bench string
	// Benchtime is -test.benchtime: "2000x" runs 2000 iterations.
	Benchtime string
	// Count is -test.count (0: 1): each benchmark runs Count times and the
	// fastest run (least ns/op) is kept, for figures the machine's load
	// moves most.
	Count int
}

// goBenches returns the Go benchmarks of the full run or, with quick,
// the same at fewer iterations and forest training on 50k rows instead of
// 500k.
func goBenches(quick bool) []goBench {
	if quick {
		return []goBench{
			{"placement", "^Benchmark(HeavyEdge64on1000x8|PlacePlain)$", "200x", 0},
			{"policy", "^BenchmarkVirtualMachine$", "1x", 0},
			{"predictor", "^BenchmarkTrain$/^rows=50000$", "1x", 0},
			{"predictor", "^BenchmarkPredict$/^batch$", "1x", 0},
			{"predictor", "^BenchmarkForestPredict$", "2000x", 0},
		}
	}
	return []goBench{
		{"placement", "^Benchmark(HeavyEdge64on1000x8|PlacePlain)$", "2000x", 0},
		{"policy", "^BenchmarkVirtualMachine$", "5x", 0},
		{"policy", "^BenchmarkEndTree$", "200000x", 0},
		{"policy", "^BenchmarkLAS$/^las$", "20000x", 0},
		{"job", "^BenchmarkTableAppend$", "1000000x", 0},
		{"predictor", "^BenchmarkTrain$/^rows=500000$", "1x", 0},
		{"predictor", "^BenchmarkPredict$/^(batch|batch-both)$", "3x", 3},
		{"predictor", "^BenchmarkPredict$/^single$", "20000x", 3},
		{"predictor", "^BenchmarkForestPredict$", "20000x", 0},
	}
}

// goBenchTable titles the table of the Go benchmarks.
var goBenchTable = TableInfo{ID: "go", RowName: "package benchmark",
	Title: "Go benchmarks (`go test -bench`, with `-benchmem`; a forest's training, batch and one-row prediction " +
		"and the online predictor in `predictor`, placement, the virtual single machine, the running set's end tree " +
		"and a 2D-LAS pass in `policy`, the compact job table in `job`; the forest's prediction the fastest of 3 runs)"}

// runGoBenches compiles each package's test binary once (CGO_ENABLED=0,
// into dir) and runs its benchmarks from the package's directory, adding
// one figure per metric of each result line. GOMAXPROCS is the runner's.
func runGoBenches(ctx context.Context, root, dir string, benches []goBench, figs *figureSet, log func(string, ...any)) error {
	figs.table(goBenchTable)
	procs := runtime.GOMAXPROCS(0)
	built := map[string]string{}
	for _, gb := range benches {
		bin, ok := built[gb.Pkg]
		if !ok {
			bin = filepath.Join(dir, gb.Pkg+".test")
			log("go test -c ./%s", gb.Pkg)
			cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./"+gb.Pkg)
			cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("go test -c ./%s: %w\n%s", gb.Pkg, err, out)
			}
			built[gb.Pkg] = bin
		}
		count := max(gb.Count, 1)
		log("%s -test.bench '%s' -test.benchtime %s -test.count %d", gb.Pkg, gb.Bench, gb.Benchtime, count)
		start := time.Now()
		cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", gb.Bench,
			"-test.benchtime", gb.Benchtime, "-test.count", fmt.Sprint(count), "-test.benchmem",
			"-test.cpu", fmt.Sprint(procs), "-test.timeout", "10m")
		cmd.Dir = filepath.Join(root, gb.Pkg)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s benchmarks %s: %w\n%s", gb.Pkg, gb.Bench, err, tail(out.Bytes(), 40))
		}
		results, err := ParseBench(&out, procs)
		if err != nil {
			return fmt.Errorf("%s benchmarks %s: %w", gb.Pkg, gb.Bench, err)
		}
		if len(results) == 0 {
			return fmt.Errorf("%s benchmarks %s: no benchmark matched\n%s", gb.Pkg, gb.Bench, tail(out.Bytes(), 40))
		}
		for _, r := range fastest(results) {
			for _, m := range r.Metrics {
				figs.add(Figure{Table: goBenchTable.ID, Row: gb.Pkg + " " + r.Name, Col: m.Unit, Value: m.Value})
			}
		}
		log("  %d results in %.1f s", len(results), time.Since(start).Seconds())
	}
	return nil
}

// fastest keeps, of the results of one name, the one of least ns/op (the
// first when none says), in the order the names first appear.
func fastest(results []BenchResult) []BenchResult {
	at := map[string]int{}
	var out []BenchResult
	for _, r := range results {
		i, seen := at[r.Name]
		switch {
		case !seen:
			at[r.Name] = len(out)
			out = append(out, r)
		case nsPerOp(r) < nsPerOp(out[i]):
			out[i] = r
		}
	}
	return out
}

// nsPerOp returns r's ns/op, +Inf when it has none.
func nsPerOp(r BenchResult) float64 {
	for _, m := range r.Metrics {
		if m.Unit == "ns/op" {
			return m.Value
		}
	}
	return math.Inf(1)
}

// tail returns the last n lines of out.
func tail(out []byte, n int) []byte {
	out = bytes.TrimRight(out, "\n")
	for i := len(out) - 1; i >= 0; i-- {
		if out[i] == '\n' {
			if n--; n == 0 {
				return out[i+1:]
			}
		}
	}
	return out
}
