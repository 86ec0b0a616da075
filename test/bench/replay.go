package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/asrpt/asrpt/report"
)

// The cluster every replay of the bench runs on: 1,000 nodes × 8 GPUs.
const (
	benchNodes       = 1000
	benchGPUsPerNode = 8
)

// buildAsrpt builds the asrpt binary (CGO_ENABLED=0, as installed) into
// dir and returns its path.
func buildAsrpt(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "asrpt")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/asrpt")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/asrpt: %w\n%s", err, out)
	}
	return bin, nil
}

// genTrace returns the generated trace of jobs jobs in dir (seed 1, the
// bench's cluster), generating it unless a kept directory already holds
// it (asrpt gen writes all or nothing, so a file there is whole).
func genTrace(ctx context.Context, bin, dir string, jobs int) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("gen-%d.csv", jobs))
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return path, nil
	}
	cmd := exec.CommandContext(ctx, bin, "gen", "--jobs", strconv.Itoa(jobs), "--nodes", strconv.Itoa(benchNodes),
		"--gpus-per-node", strconv.Itoa(benchGPUsPerNode), "--seed", "1", "--out", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("asrpt gen --jobs %d: %w\n%s", jobs, err, out)
	}
	return path, nil
}

// replayRun is one `asrpt replay` of one policy on a generated trace.
type replayRun struct {
	Policy    string
	Predictor string
	Jobs      int
	// Timeout kills the replay; it then counts as failed.
	Timeout time.Duration
}

// replayResult is what one replay measured.
type replayResult struct {
	// Wall is the child's time from start to exit, by the clock: start-up
	// and reading the trace included.
	Wall time.Duration
	// PeakRSSMiB is the child's peak resident set (getrusage's ru_maxrss),
	// MiB; 0 when the system does not say.
	PeakRSSMiB float64
	// EventsPerS, Events and TrainS are the replay's own figures from its
	// JSON report (report.Summary: events_per_s, events, train_s).
	EventsPerS float64
	Events     int
	TrainS     float64
	// Failed, when not empty, says why the replay did not finish: its
	// figures are then not measurements.
	Failed string
}

// runReplay runs one replay of trace as a child process, one policy at a
// time (--parallel 1), and reads its figures.
func runReplay(ctx context.Context, bin, trace, dir string, r replayRun) (replayResult, error) {
	out := filepath.Join(dir, fmt.Sprintf("replay-%s-%s-%d.json", r.Policy, r.Predictor, r.Jobs))
	os.Remove(out) // a kept directory's old report must not be read as this run's
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "replay", "--trace", trace, "--nodes", strconv.Itoa(benchNodes),
		"--gpus-per-node", strconv.Itoa(benchGPUsPerNode), "--policies", r.Policy, "--predictor", r.Predictor,
		"--parallel", "1", "--progress", "never", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr        // the table on stdout is not needed: the JSON has it
	cmd.WaitDelay = time.Second // after a kill, do not wait on the pipe for a child's own children
	start := time.Now()
	err := cmd.Run()
	res := replayResult{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		res.PeakRSSMiB = peakRSSMiB(cmd.ProcessState)
	}
	if ctx.Err() != nil {
		res.Failed = fmt.Sprintf("killed after %g s", r.Timeout.Seconds())
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("asrpt replay --policies %s (%d jobs): %w\n%s", r.Policy, r.Jobs, err, tail(stderr.Bytes(), 20))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return res, fmt.Errorf("asrpt replay --policies %s (%d jobs): %w", r.Policy, r.Jobs, err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return res, fmt.Errorf("%s: %w", out, err)
	}
	if len(rep.Policies) != 1 {
		return res, fmt.Errorf("%s: %d policies, want 1", out, len(rep.Policies))
	}
	s := rep.Policies[0]
	res.EventsPerS, res.Events, res.TrainS = s.EventsPerSecond, s.Events, s.TrainSeconds
	if res.Events == 0 {
		return res, errors.New(out + ": no events")
	}
	return res, nil
}

// peakRSSMiB is a finished child's peak resident set in MiB: ru_maxrss is
// in KiB on Linux, in bytes on macOS; 0 when unknown.
func peakRSSMiB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / (1 << 20)
	}
	return float64(ru.Maxrss) / (1 << 10)
}
