package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/asrpt/asrpt/policy"
)

// bench holds what a run needs while it measures.
type bench struct {
	opts   options
	bin    string // the asrpt binary
	dir    string // binaries, traces and reports
	ranges map[string]Range
	figs   figureSet
	log    func(string, ...any)
}

// timeout is how long the replay whose wall time is named key may run:
// TimeoutFactor × its range's max (at least 30 s), or Timeout without one.
func (b *bench) timeout(key string) time.Duration {
	r, ok := b.ranges[key]
	if !ok || r.Max == nil {
		return b.opts.Timeout
	}
	return max(30*time.Second, time.Duration(b.opts.TimeoutFactor**r.Max*float64(time.Second)))
}

// replay runs one replay on the generated trace of jobs jobs and returns
// what it measured; an error is a replay that failed other than by its
// time limit.
func (b *bench) replay(ctx context.Context, policyName, pred string, jobs int, wallKey string) (replayResult, error) {
	trace, err := genTrace(ctx, b.bin, b.dir, jobs)
	if err != nil {
		return replayResult{}, err
	}
	run := replayRun{Policy: policyName, Predictor: pred, Jobs: jobs, Timeout: b.timeout(wallKey)}
	b.log("replay %s --predictor %s, %d jobs (limit %.0f s)", policyName, pred, jobs, run.Timeout.Seconds())
	res, err := runReplay(ctx, b.bin, trace, b.dir, run)
	if err == nil {
		b.log("  %.2f s, %.0f MiB, %.0f events/s %s", res.Wall.Seconds(), res.PeakRSSMiB, res.EventsPerS, res.Failed)
	}
	return res, err
}

// maxRepeatJobs is the largest trace replayed Options.ScaleRuns times.
const maxRepeatJobs = 1_000_000

// sizeTable is the table of one policy's replays over trace sizes.
func sizeTable(policyName, pred string) TableInfo {
	return TableInfo{ID: "replay " + policyName + " " + pred, RowName: "jobs",
		Title: fmt.Sprintf("`asrpt replay --policies %s --predictor %s --parallel 1` on generated traces "+
			"(`asrpt gen --seed 1`), 1,000 nodes × 8 GPUs", policyName, pred),
		Note: "wall s is the process's time by the clock (start-up and reading the trace included), the fastest of " +
			"the runs (3 in make bench, up to 1,000,000 jobs; larger traces once), peak RSS the largest `ru_maxrss` " +
			"of them, µs/job the wall time per job; events/s and train s (the forest's training) are the fastest run's own."}
}

// replaySizes replays one policy on each size and adds its figures: wall
// s, peak RSS MiB, events/s, µs/job and, with the forest, train s.
func (b *bench) replaySizes(ctx context.Context, policyName, pred string, sizes []int) error {
	t := sizeTable(policyName, pred)
	b.figs.table(t)
	for _, n := range sizes {
		row := strconv.Itoa(n)
		wall := Figure{Table: t.ID, Row: row, Col: "wall s"}
		runs := 1
		if n <= maxRepeatJobs {
			runs = b.opts.ScaleRuns
		}
		var res replayResult
		for i := range max(runs, 1) {
			r, err := b.replay(ctx, policyName, pred, n, wall.Key())
			if err != nil {
				return err
			}
			// The fastest run that did not fail, with the largest peak
			// RSS of them all.
			if i == 0 || r.Failed == "" && (res.Failed != "" || r.Wall < res.Wall) {
				rss := math.Max(res.PeakRSSMiB, r.PeakRSSMiB)
				res = r
				res.PeakRSSMiB = rss
			} else {
				res.PeakRSSMiB = math.Max(res.PeakRSSMiB, r.PeakRSSMiB)
			}
		}
		wall.Value, wall.Failed = res.Wall.Seconds(), res.Failed
		b.figs.add(wall)
		b.figs.add(Figure{Table: t.ID, Row: row, Col: "peak RSS MiB", Value: res.PeakRSSMiB, Failed: res.Failed})
		if res.Failed != "" {
			continue
		}
		b.figs.add(Figure{Table: t.ID, Row: row, Col: "events/s", Value: res.EventsPerS})
		b.figs.add(Figure{Table: t.ID, Row: row, Col: "µs/job", Value: res.Wall.Seconds() * 1e6 / float64(n)})
		if pred == "forest" {
			b.figs.add(Figure{Table: t.ID, Row: row, Col: "train s", Value: res.TrainS})
		}
	}
	return nil
}

// growth adds, for every pair of sizes a < b that were both measured, the
// cost per job at b over the cost per job at a, beside the ratio n log n
// predicts (ln b ÷ ln a).
func (b *bench) growth(policyName, pred string, sizes []int) {
	src := sizeTable(policyName, pred).ID
	t := TableInfo{ID: "growth " + policyName + " " + pred, RowName: "jobs a to b",
		Title: "Growth of the cost per job of `" + policyName + "` (" + pred + "): (wall b ÷ b) ÷ (wall a ÷ a), " +
			"beside what n log n predicts, ln b ÷ ln a",
		Note: "The smallest trace is dominated by the process's start-up and the forest's first trainings, " +
			"which only lowers a ratio from it: the ranges are on 10,000 to 1,000,000 jobs without a tolerance, " +
			"and on 100,000 to 1,000,000 and 10,000,000 jobs with one."}
	b.figs.table(t)
	for i, lo := range sizes {
		wlo, ok := b.figs.value(Figure{Table: src, Row: strconv.Itoa(lo), Col: "wall s"}.Key())
		if !ok {
			continue
		}
		for _, hi := range sizes[i+1:] {
			whi, ok := b.figs.value(Figure{Table: src, Row: strconv.Itoa(hi), Col: "wall s"}.Key())
			if !ok {
				continue
			}
			row := fmt.Sprintf("%d to %d", lo, hi)
			b.figs.add(Figure{Table: t.ID, Row: row, Col: "cost per job ratio", Value: (whi / float64(hi)) / (wlo / float64(lo))})
			b.figs.add(Figure{Table: t.ID, Row: row, Col: "n log n ratio", Value: math.Log(float64(hi)) / math.Log(float64(lo))})
		}
	}
}

// policies replays every registered policy (policy.Names) on one trace
// with the mean predictor, runs rounds of each keeping its fastest, and adds
// each one's events/s, its ratio to fifo's (the baseline of the same run,
// on the same trace) and its wall time.
func (b *bench) policies(ctx context.Context, jobs, runs int) error {
	t := TableInfo{ID: fmt.Sprintf("policies mean %d", jobs), RowName: "policy",
		Title: fmt.Sprintf("Every policy on the %d-job trace, `--predictor mean` (the policy's own cost), "+
			"one at a time, the fastest of %d replays", jobs, runs),
		Note: "ratio to fifo is events/s over fifo's in the same run: it moves less with the machine's load than events/s."}
	b.figs.table(t)
	// Round after round of every policy, so that a change of the
	// machine's load touches each policy alike.
	best := make(map[string]replayResult, len(policy.Names))
	for range runs {
		for _, p := range policy.Names {
			wallKey := Figure{Table: t.ID, Row: p, Col: "wall s"}.Key()
			res, err := b.replay(ctx, p, "mean", jobs, wallKey)
			if err != nil {
				return err
			}
			if have, ok := best[p]; !ok || res.Failed == "" && (have.Failed != "" || res.EventsPerS > have.EventsPerS) {
				best[p] = res
			}
		}
	}
	fifo := best["fifo"]
	for _, p := range policy.Names {
		res := best[p]
		b.figs.add(Figure{Table: t.ID, Row: p, Col: "events/s", Value: res.EventsPerS, Failed: res.Failed})
		ratio := Figure{Table: t.ID, Row: p, Col: "ratio to fifo", Failed: res.Failed}
		if ratio.Failed == "" && fifo.Failed != "" {
			ratio.Failed = "fifo " + fifo.Failed
		}
		if ratio.Failed == "" {
			ratio.Value = res.EventsPerS / fifo.EventsPerS
		}
		b.figs.add(ratio)
		b.figs.add(Figure{Table: t.ID, Row: p, Col: "wall s", Value: res.Wall.Seconds(), Failed: res.Failed})
	}
	return nil
}
