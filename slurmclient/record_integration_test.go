//go:build integration

package slurmclient

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// emptyFrom starts an accounting window in which no lab has jobs.
var emptyFrom = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	record     = flag.Bool("record", false, "record responses from the running labs into testdata/<ver>/")
	recordOnly = flag.String("record-only", "", "with -record: comma-separated names to record (default: all)")
)

// TestRecord performs the calls the replay tests need against each running
// lab and saves the answers as testdata/<ver>/<name>.json with a
// <name>.request.txt beside it (method, path, query, status; no token or
// header is written). Run:
//
//	go test -tags integration -run TestRecord -record ./slurmclient/
//
// -record-only=accounting-empty,ping records only the names given.
func TestRecord(t *testing.T) {
	if !*record {
		t.Skip("-record not given")
	}
	forLabs(t, func(t *testing.T, l *lab) {
		c := l.client(t, "slurmrest")
		api := c.APIVersion()
		r := restOf(c)
		p, db := prefixes(api)
		dir := filepath.Join("testdata", l.Version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		save := func(name, path string, q url.Values) {
			t.Helper()
			if *recordOnly != "" && !slices.Contains(strings.Split(*recordOnly, ","), name) {
				return
			}
			res, err := r.t.do(ctxT(t), "GET", path, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.status != 200 {
				t.Fatalf("%s: HTTP %d", path, res.status)
			}
			req := fmt.Sprintf("# recorded from the project's Slurm %s lab by TestRecord\nGET %s?%s\n# HTTP status: %d\n",
				l.Release, path, q.Encode(), res.status)
			if err := os.WriteFile(filepath.Join(dir, name+".request.txt"), []byte(req), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".json"), res.body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		from := time.Now().Add(-2 * time.Second).Truncate(time.Second)
		done := []string{
			l.submit(t, "alice", 1, "--gres=gpu:1"),
			l.submit(t, "bob", 1, "--gres=gpu:2", "-N", "2"),
		}
		l.submit(t, "alice", 600, "--gres=gpu:1", "--begin=now+3600")
		l.submit(t, "bob", 600, "--gres=gpu:1", "--hold")
		run := l.submit(t, "alice", 120, "--gres=gpu:2", "-w", "node2")
		l.waitState(t, run, "RUNNING", 60*time.Second)
		for _, id := range done {
			l.waitState(t, id, "COMPLETED", 60*time.Second)
		}
		to := time.Now().Add(time.Second)
		deadline := time.Now().Add(60 * time.Second)
		for {
			js, err := c.AccountingJobs(ctxT(t), from, to)
			if err != nil {
				t.Fatal(err)
			}
			if len(js) >= len(done) || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Second)
		}
		save("ping", p+"/ping", nil)
		save("jobs", p+"/jobs", nil)
		save("nodes", p+"/nodes", nil)
		save("job-running", p+"/job/"+run, nil)
		window := func(from, to time.Time) url.Values {
			q := url.Values{}
			if api == "v0.0.38" {
				q.Set("start_time", from.In(time.Local).Format("2006-01-02T15:04:05"))
				q.Set("end_time", to.In(time.Local).Format("2006-01-02T15:04:05"))
			} else {
				q.Set("start_time", fmt.Sprint(from.Unix()))
				q.Set("end_time", fmt.Sprint(to.Unix()))
			}
			return q
		}
		// The shapes of a real queue: an array running two tasks at its
		// throttle with the rest pending, a heterogeneous job and a job
		// submitted to two partitions, both pending (BeginTime).
		arr := l.submit(t, "alice", 120, "--array=1-4%2", "--gres=gpu:1")
		l.submit(t, "bob", 60, "--begin=now+3600", "--gres=gpu:1", ":", "--gres=gpu:2")
		l.submit(t, "bob", 60, "--begin=now+3600", "-p", l.Partition+","+l.Partition2, "--gres=gpu:2")
		l.waitState(t, arr+"_2", "RUNNING", 60*time.Second)
		save("jobs-shapes", p+"/jobs", nil)
		save("accounting", db+"/jobs", window(from, to))
		// A window before the lab existed: 22.05 answers 200 with error
		// 9003 "Nothing found", v0.0.42+ 200 with a "found nothing" warning.
		save("accounting-empty", db+"/jobs", window(emptyFrom, emptyFrom.Add(24*time.Hour)))
	})
}
