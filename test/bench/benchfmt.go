package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// BenchResult is one result line of `go test -bench`: the benchmark's
// name, its iterations and its figures, unit by unit.
type BenchResult struct {
	// Name is the benchmark's name without the "Benchmark" prefix and
	// without the "-P" suffix go test adds when GOMAXPROCS is above 1
	// ("HeavyEdge64on1000x8/empty").
	Name       string
	Iterations int64
	// Metrics are the figures in the order printed: ns/op first, then
	// those of -benchmem and b.ReportMetric (B/op, allocs/op, rows/s).
	Metrics []Metric
}

// Metric is one value-unit pair of a benchmark line.
type Metric struct {
	Value float64
	Unit  string
}

// ParseBench reads the output of `go test -bench` (or of a test binary run
// with -test.bench) and returns its result lines in order. procs is the
// GOMAXPROCS the benchmarks ran with (-test.cpu): go test appends "-procs"
// to every name when it is above 1, and only that suffix is cut, so a
// name that itself ends in "-8" survives. Other lines (goos, pkg, PASS,
// the benchmarks' own logs) are skipped. A line that starts like a result
// ("Benchmark" name, then an iteration count) but whose figures do not
// parse is an error naming the line.
func ParseBench(r io.Reader, procs int) ([]BenchResult, error) {
	var out []BenchResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		res, ok, err := parseBenchLine(sc.Text(), procs)
		if err != nil {
			return nil, fmt.Errorf("benchmark output line %d: %w", line, err)
		}
		if ok {
			out = append(out, res)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("benchmark output: %w", err)
	}
	return out, nil
}

// parseBenchLine parses one line; ok is false for a line that is not a
// result (no "Benchmark" prefix, or no iteration count after the name,
// as in a benchmark's log line or a "--- FAIL" line).
func parseBenchLine(s string, procs int) (res BenchResult, ok bool, err error) {
	fields := strings.Fields(s)
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "Benchmark") {
		return res, false, nil
	}
	n, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return res, false, nil // "BenchmarkX" alone, or a log line
	}
	name := strings.TrimPrefix(fields[0], "Benchmark")
	if procs > 1 {
		name = strings.TrimSuffix(name, "-"+strconv.Itoa(procs))
	}
	res = BenchResult{Name: name, Iterations: n}
	rest := fields[2:]
	if len(rest) == 0 || len(rest)%2 != 0 {
		return res, false, fmt.Errorf("%q: want value-unit pairs after the iteration count", s)
	}
	for i := 0; i < len(rest); i += 2 {
		v, err := strconv.ParseFloat(rest[i], 64)
		if err != nil {
			return res, false, fmt.Errorf("%q: value %q: %w", s, rest[i], err)
		}
		res.Metrics = append(res.Metrics, Metric{Value: v, Unit: rest[i+1]})
	}
	return res, true, nil
}
