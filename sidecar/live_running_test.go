//go:build integration

package sidecar

// With the predictor mean-gpus-running a job that Slurm runs counts in
// its group's expected run time once it has outlived the group's mean
// (predictor.RunAware): on each lab, a 2 s run of a family finishes, a
// 600 s run of it starts, and a job of the family waiting on a dependency
// is predicted from the finished run and the running one, whose start time
// is slurmrestd's. With two runs in the group, one finished (r s) and one
// running for ran s and longer than every finished run, the group's mean
// is (r + 2·ran) / 2, and so is the shrunk value (the (user, family) group
// has the same runs).
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run TestLiveRunningJobs -v ./sidecar/

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/test/slurmlab"
)

func TestLiveRunningJobs(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		l := newLive(t, lab, "", func(c *Config) {
			c.Scope.Partitions = []string{lab.Partition}
			c.UsePredictor("mean-gpus-running")
		})
		defer l.cleanupJobs()
		// A family of its own (letters only: Family keeps them), so that
		// no earlier run on the lab is in its history.
		name := "asrpt-running-" + strings.Map(func(r rune) rune { return 'a' + (r-'0')%26 }, strconv.FormatInt(time.Now().UnixNano()%1e9, 10))
		first := l.submitNow("alice", name, 1, 2)
		var run float64
		var end time.Time
		l.waitFor("the first run's accounting", 2*time.Minute, func() bool {
			time.Sleep(500 * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := lab.Run(ctx, "sacct", "-X", "-n", "-P", "-j", first, "-o", "State,ElapsedRaw,End")
			f := strings.Split(strings.TrimSpace(out), "|")
			if err != nil || len(f) != 3 || f[0] != "COMPLETED" {
				return false
			}
			if run, err = strconv.ParseFloat(f[1], 64); err != nil {
				return false
			}
			end, err = time.ParseInLocation("2006-01-02T15:04:05", f[2], time.Local)
			return err == nil
		})
		long := l.submitNow("alice", name, 1, 600)
		l.waitRunning("the long run", []string{long})
		probe := l.submitNow("alice", name, 1, 10, "--dependency=afterany:"+long)
		start, err := time.ParseInLocation("2006-01-02T15:04:05", recField(l.show(long), "StartTime"), time.Local)
		if err != nil {
			t.Fatalf("lab %s: the long run's start: %v", lab.Version, err)
		}
		// The running job past the finished run's length, so that it
		// counts, and the finished run older than the sidecar's accounting
		// lag, so that it is read.
		at := start.Add(time.Duration(run+8) * time.Second)
		if read := end.Add(accountingLag + 2*time.Second); read.After(at) {
			at = read
		}
		time.Sleep(time.Until(at))
		now := time.Now()
		rep, err := l.s.Plan(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		row := planRow(t, rep, probe)
		ran := now.Sub(start).Seconds()
		want := (run + 2*ran) / 2
		t.Logf("lab %s: family %s, finished run %.0f s, running %.1f s: the waiting job predicted %.1f s (%s), want %.1f", lab.Version, name, run, ran, row.Predicted, row.Estimator, want)
		// Start times are whole seconds: ran is known to within 1 s.
		if math.Abs(row.Predicted-want) > 1.5 || row.Estimator != "group" {
			t.Errorf("lab %s: the waiting job %s predicted %.1f s by %q, want %.1f s by the group (the finished %.0f s run and the running one, %.1f s in)",
				lab.Version, probe, row.Predicted, row.Estimator, want, run, ran)
		}
		if row.Predicted < 2*run+2 {
			t.Errorf("lab %s: %s", lab.Version, fmt.Sprintf("the running job was not counted: %.1f s", row.Predicted))
		}
	})
}
