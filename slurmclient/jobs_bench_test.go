package slurmclient

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
)

// bigJobList is a v0.0.42 job list of about size bytes: the recorded
// 24.11 pending job, again and again with fresh ids.
func bigJobList(tb testing.TB, size int) ([]byte, int) {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(fixture(tb, "24.11", "jobs"), &m); err != nil {
		tb.Fatal(err)
	}
	var one map[string]any
	for _, j := range rawList(m, "jobs") {
		if rawState(j["job_state"]) == "PENDING" {
			one = j
			break
		}
	}
	rec, _ := json.Marshal(one)
	n := max(size/(len(rec)+1), 1)
	out := make([]byte, 0, n*(len(rec)+16)+64)
	out = append(out, `{"meta":{},"errors":[],"warnings":[],"jobs":[`...)
	for i := range n {
		if i > 0 {
			out = append(out, ',')
		}
		one["job_id"] = 100000 + i
		one["name"] = "job" + strconv.Itoa(i)
		b, _ := json.Marshal(one)
		out = append(out, b...)
	}
	return append(out, "]}"...), n
}

// BenchmarkJobsList reads a job list of ASRPT_BENCH_JOBLIST_MB megabytes
// (default 8) through the v0.0.42 adapter: B/op is what one list costs.
//
//	ASRPT_BENCH_JOBLIST_MB=236 go test -run '^$' -bench JobsList -benchmem -benchtime 1x ./slurmclient/
func BenchmarkJobsList(b *testing.B) {
	mb := 8
	if s := os.Getenv("ASRPT_BENCH_JOBLIST_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	body, n := bigJobList(b, mb<<20)
	f := newFake(b)
	p, _ := prefixes("v0.0.42")
	f.set("GET", p+"/jobs", 200, body)
	c := f.client(b, "v0.0.42")
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		jobs, err := c.Jobs(ctxT(b))
		if err != nil || len(jobs) != n {
			b.Fatalf("%d jobs of %d, err %v", len(jobs), n, err)
		}
	}
	b.ReportMetric(float64(n), "jobs")
}
