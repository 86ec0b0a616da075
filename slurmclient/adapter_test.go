package slurmclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/job"
)

// prefixes returns the slurm and slurmdb path prefixes of an API version.
func prefixes(api string) (string, string) {
	return "/slurm/" + api, "/slurmdb/" + api
}

// raw decodes a fixture generically, to check the adapter against the
// recording itself rather than against copied values.
func raw(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func rawList(m map[string]any, key string) []map[string]any {
	var out []map[string]any
	l, _ := m[key].([]any)
	for _, e := range l {
		if o, ok := e.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

// rawState returns the first state of a job_state / state value, which is
// a string in v0.0.38 and an array from v0.0.40 on.
func rawState(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			s, _ := v[0].(string)
			return s
		}
	}
	return ""
}

func TestAdapterPing(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "ping")
			f := newFake(t)
			p, _ := prefixes(r.api)
			f.set("GET", p+"/ping", 200, b)
			f.set("GET", p+"/nodes", 304, nil)
			v, err := f.client(t, r.api).Ping(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(v.Release, r.rel) || v.API != r.api {
				t.Errorf("Ping = %+v, want release %s.x, API %s", v, r.rel, r.api)
			}
			if h := f.hdr[0]; h.Get("X-SLURM-USER-NAME") != "root" || h.Get("X-SLURM-USER-TOKEN") == "" {
				t.Errorf("auth headers not sent: %v", h)
			}
		})
	}
}

func TestAdapterProbe(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "ping")
			f := newFake(t)
			p, _ := prefixes(r.api)
			f.set("GET", p+"/ping", 200, b)
			f.set("GET", p+"/nodes", 304, nil)
			c, err := New(ctxT(t), Config{URL: f.srv.URL, TokenFile: testToken(t, "root"), Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			if c.APIVersion() != r.api {
				t.Errorf("probe chose %s, want %s", c.APIVersion(), r.api)
			}
		})
	}
}

func TestAdapterJobs(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "jobs")
			f := newFake(t)
			p, _ := prefixes(r.api)
			f.set("GET", p+"/jobs", 200, b)
			jobs, err := f.client(t, r.api).Jobs(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]map[string]any{}
			for _, j := range rawList(raw(t, b), "jobs") {
				if st := rawState(j["job_state"]); st == "PENDING" || st == "RUNNING" {
					want[fmt.Sprint(j["job_id"])] = j
				}
			}
			if len(jobs) != len(want) || len(jobs) == 0 {
				t.Fatalf("got %d pending/running jobs, recording has %d", len(jobs), len(want))
			}
			for _, j := range jobs {
				w := want[j.ID]
				if w == nil {
					t.Fatalf("job %s not in recording", j.ID)
				}
				if j.Name != w["name"] || j.User != w["user_name"] || j.Partition != w["partition"] ||
					j.State != rawState(w["job_state"]) || j.Reason != w["state_reason"] {
					t.Errorf("job %s = %+v, recording %v/%v/%v/%v/%v", j.ID, j, w["name"], w["user_name"],
						w["partition"], w["job_state"], w["state_reason"])
				}
				if j.Submit.IsZero() {
					t.Errorf("job %s: no submit time", j.ID)
				}
				req, _ := w["tres_req_str"].(string)
				if strings.Contains(req, "gres/gpu=") != (j.GPUs.Total > 0) {
					t.Errorf("job %s: GPUs %+v from tres_req_str %q", j.ID, j.GPUs, req)
				}
				if j.State == "PENDING" && j.Priority == 0 && !j.Held {
					t.Errorf("job %s: priority 0 but not held (reason %s)", j.ID, j.Reason)
				}
				// Command from the working directory, and the submit line
				// where the version's job list has one.
				cwd, _ := w["current_working_directory"].(string)
				line, hasLine := w["submit_line"].(string)
				if hasLine != commandUsesSubmitLine[r.api] {
					t.Errorf("job %s: submit_line recorded: %t; commandUsesSubmitLine[%s] = %t",
						j.ID, hasLine, r.api, commandUsesSubmitLine[r.api])
				}
				if c := job.CommandKey(cwd, line); j.Command != c || cwd == "" {
					t.Errorf("job %s: Command %x, want %x (work dir %q)", j.ID, j.Command, c, cwd)
				}
			}
			if !slices.IsSortedFunc(jobs, func(a, b Job) int { return len(a.ID) - len(b.ID) }) {
				t.Error("jobs not ordered by id")
			}
		})
	}
}

func TestAdapterRunningJob(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "job-running")
			w := rawList(raw(t, b), "jobs")[0]
			id := fmt.Sprint(w["job_id"])
			f := newFake(t)
			p, _ := prefixes(r.api)
			f.set("GET", p+"/job/"+id, 200, b)
			j, err := f.client(t, r.api).Job(ctxT(t), id)
			if err != nil {
				t.Fatal(err)
			}
			if j.State != "RUNNING" || len(j.Nodes) == 0 {
				t.Fatalf("job %s: state %s nodes %v", id, j.State, j.Nodes)
			}
			n := 0
			for _, idx := range j.GPUIndices {
				n += len(idx)
			}
			if n != j.GPUs.Total || n == 0 {
				t.Errorf("job %s: %d GPU indices %v for a request of %+v (gres_detail %v)", id, n, j.GPUIndices, j.GPUs, w["gres_detail"])
			}
		})
	}
}

func TestAdapterNodes(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "nodes")
			f := newFake(t)
			p, _ := prefixes(r.api)
			f.set("GET", p+"/nodes", 200, b)
			nodes, err := f.client(t, r.api).Nodes(ctxT(t))
			if err != nil {
				t.Fatal(err)
			}
			rn := rawList(raw(t, b), "nodes")
			if len(nodes) != len(rn) {
				t.Fatalf("got %d nodes, recording has %d", len(nodes), len(rn))
			}
			drained, rawDrained := 0, 0
			for _, n := range rn {
				if strings.Contains(fmt.Sprint(n["state"], n["state_flags"]), "DRAIN") {
					rawDrained++
				}
			}
			for _, n := range nodes {
				if n.GPUs == 0 || n.GPUsUsed > n.GPUs || n.GPUType == "" {
					t.Errorf("node %+v: GPU counts wrong", n)
				}
				if n.Drained() {
					drained++
				}
			}
			if drained != rawDrained {
				t.Errorf("%d drained nodes reported, recording has %d", drained, rawDrained)
			}
		})
	}
}

func TestAdapterAccounting(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "accounting")
			f := newFake(t)
			_, db := prefixes(r.api)
			f.set("GET", db+"/jobs", 200, b)
			rj := rawList(raw(t, b), "jobs")
			var lo, hi int64 = 1 << 62, 0
			for _, j := range rj {
				e := int64(j["time"].(map[string]any)["end"].(float64))
				lo, hi = min(lo, e), max(hi, e)
			}
			from, to := time.Unix(lo, 0), time.Unix(hi+1, 0)
			jobs, err := f.client(t, r.api).AccountingJobs(ctxT(t), from, to)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) == 0 || len(jobs) > len(rj) {
				t.Fatalf("got %d jobs from %d records", len(jobs), len(rj))
			}
			q := f.log[0]
			if r.api == "v0.0.38" {
				if !strings.Contains(q, "start_time=") || !strings.Contains(q, "%3A") {
					t.Errorf("v0.0.38 query %q: want sacct-style time with ':' encoded", q)
				}
			} else if !strings.Contains(q, fmt.Sprintf("start_time=%d", lo)) {
				t.Errorf("query %q: want epoch start_time=%d", q, lo)
			}
			for _, j := range jobs {
				if j.State == "" || j.Submit == 0 || j.User == "" {
					t.Errorf("job %+v incomplete", j)
				}
			}
			// Command of the finished jobs, as the recording gives it.
			// The submit line counts only on v0.0.44: 22.05's accounting
			// has none, and 24.11's job list has none, so its
			// accounting's is not read (commandUsesSubmitLine).
			type res struct {
				workDir, line string
			}
			const line = "sbatch --parsable -p gpu -t 10 -o /dev/null -J asrpt-it --gres=gpu:"
			want := map[string]map[string]res{
				"22.05": {
					"43": {"/work/main/slurmclient", ""},
					"44": {"/work/main/slurmclient", ""},
				},
				"24.11": {
					"15": {"/", ""},
					"16": {"/", ""},
				},
				"26.05": {
					"15": {"/", line + "1 --wrap sleep 1"},
					"16": {"/", line + "2 -N 2 --wrap sleep 1"},
				},
			}
			if len(jobs) != len(want[r.rel]) {
				t.Errorf("got %d jobs, want %d", len(jobs), len(want[r.rel]))
			}
			for _, j := range jobs {
				w, ok := want[r.rel][j.ID]
				if !ok {
					t.Errorf("unexpected job %s", j.ID)
					continue
				}
				if c := job.CommandKey(w.workDir, w.line); j.Command != c || (c == 0) != (w.line == "") {
					t.Errorf("job %s: Command %x, want %x", j.ID, j.Command, c)
				}
			}
			// A window that ends before the first job ends holds none.
			none, err := f.client(t, r.api).AccountingJobs(ctxT(t), from.Add(-time.Hour), from)
			if err != nil || len(none) != 0 {
				t.Errorf("window before all ends: %d jobs, %v", len(none), err)
			}
		})
	}
}

// TestAdapterAccountingTres checks, on a hand-written answer (not a
// recording), that AccountingJobs takes GPUs from the allocated TRES,
// falls back to the requested when none were allocated (a job cancelled
// before it started), ignores the other TRES entries (cpu, mem, energy),
// and hashes the work dir, and on v0.0.44 the submit line, into Command
// (v0.0.38 and v0.0.42 ignore a submit line: their job lists have none).
func TestAdapterAccountingTres(t *testing.T) {
	tres := func(gpu int) []map[string]any {
		l := []map[string]any{{"type": "cpu", "name": "", "count": 8},
			{"type": "mem", "name": "", "count": 4096}, {"type": "energy", "name": "", "count": -2}}
		if gpu > 0 {
			l = append(l, map[string]any{"type": "gres", "name": "gpu", "count": gpu})
		}
		return l
	}
	type res struct {
		gpus    int
		command uint64
	}
	const dir, line = "/home/u/run", "sbatch  --gres=gpu:2 train.sh --lr 0.1"
	jobs := []struct {
		id             int
		alloc, req     []map[string]any
		workDir, line  string
		want38, want44 res // want38: v0.0.38 and v0.0.42
	}{
		// Never started: GPUs from the request.
		{101, nil, tres(2), dir, line,
			res{2, job.CommandKey(dir, "")}, res{2, job.CommandKey(dir, line)}},
		// Started: GPUs from the allocation.
		{102, tres(1), tres(3), dir, "",
			res{1, job.CommandKey(dir, "")}, res{1, job.CommandKey(dir, "")}},
		// A submit line without a work dir.
		{103, tres(1), tres(3), "", line,
			res{1, 0}, res{1, job.CommandKey("", line)}},
		// Nothing known.
		{104, nil, nil, "", "", res{}, res{}},
	}
	for _, api := range []string{"v0.0.38", "v0.0.42", "v0.0.44"} {
		t.Run(api, func(t *testing.T) {
			var list []map[string]any
			for _, j := range jobs {
				m := map[string]any{
					"job_id": j.id, "name": "n", "user": "u", "account": "a", "partition": "p", "qos": "q",
					"tres":              map[string]any{"allocated": j.alloc, "requested": j.req},
					"working_directory": j.workDir, "submit_line": j.line,
				}
				if api == "v0.0.38" {
					m["state"] = map[string]any{"current": "CANCELLED"}
					m["time"] = map[string]any{"submission": 1000, "end": 1100, "limit": 60}
				} else {
					m["state"] = map[string]any{"current": []string{"CANCELLED"}}
					m["time"] = map[string]any{"submission": 1000, "end": 1100,
						"limit": map[string]any{"set": true, "infinite": false, "number": 60}}
				}
				list = append(list, m)
			}
			got := accountingOf(t, api, list)
			if len(got) != len(jobs) {
				t.Fatalf("got %d jobs, want %d", len(got), len(jobs))
			}
			for i, j := range got {
				w := jobs[i].want44
				if !commandUsesSubmitLine[api] {
					w = jobs[i].want38
				}
				g := res{j.GPUs, j.Command}
				if j.ID != fmt.Sprint(jobs[i].id) || g != w {
					t.Errorf("job %s: got %+v, want %+v", j.ID, g, w)
				}
			}
		})
	}
}

// accountingOf is what api's AccountingJobs returns for [1000, 2000) when
// slurmdbd answers with jobs.
func accountingOf(t *testing.T, api string, jobs []map[string]any) []job.Job {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jobs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	f := newFake(t)
	_, db := prefixes(api)
	f.set("GET", db+"/jobs", 200, b)
	got, err := f.client(t, api).AccountingJobs(ctxT(t), time.Unix(1000, 0), time.Unix(2000, 0))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestAdapterAccountingHet: the components of a heterogeneous job, as
// each API reports them (het.job_id, het.job_offset), come back as one job
// under the leader's id with the GPUs and nodes of all of them and the
// leader's name, whichever component slurmdbd lists first; a plain job
// (het.job_id 0) stays as it is.
func TestAdapterAccountingHet(t *testing.T) {
	type rec struct {
		id, leader, offset, gpus, nodes int
		name                            string
	}
	recs := []rec{
		{21, 20, 1, 2, 2, "io"},
		{20, 20, 0, 1, 1, "train"},
		{30, 0, -1, 4, 1, "plain"},
	}
	for _, api := range []string{"v0.0.38", "v0.0.42", "v0.0.44"} {
		t.Run(api, func(t *testing.T) {
			var list []map[string]any
			for _, r := range recs {
				m := map[string]any{"job_id": r.id, "name": r.name, "user": "u", "account": "a", "partition": "p",
					"tres": map[string]any{"allocated": []map[string]any{
						{"type": "gres", "name": "gpu", "count": r.gpus}, {"type": "node", "name": "", "count": r.nodes}}}}
				var offset any // what each version sends for a job that is not heterogeneous
				if api == "v0.0.38" {
					m["state"] = map[string]any{"current": "COMPLETED"}
					m["time"] = map[string]any{"submission": 1000, "start": 1000, "end": 1100, "elapsed": 100}
					if r.offset >= 0 {
						offset = r.offset
					}
				} else {
					m["state"] = map[string]any{"current": []string{"COMPLETED"}}
					m["time"] = map[string]any{"submission": 1000, "start": 1000, "end": 1100, "elapsed": 100}
					offset = map[string]any{"set": r.offset >= 0, "infinite": false, "number": max(r.offset, 0)}
				}
				m["het"] = map[string]any{"job_id": r.leader, "job_offset": offset}
				list = append(list, m)
			}
			got := accountingOf(t, api, list)
			var short []string
			for _, j := range got {
				short = append(short, fmt.Sprintf("%s %s gpus=%d nodes=%d run=%g", j.ID, j.Name, j.GPUs, j.Nodes, j.RunTime))
			}
			want := []string{"20 train gpus=3 nodes=3 run=100", "30 plain gpus=4 nodes=1 run=100"}
			if !slices.Equal(short, want) {
				t.Errorf("got %q, want %q", short, want)
			}
		})
	}
}

// TestAdapterAccountingEmpty replays each lab's answer to a window without
// jobs (22.05: HTTP 200 with error 9003 "Nothing found"; v0.0.42+: 200 with
// a "found nothing" warning): zero jobs, no error. 9003 stays an error
// where it is not an empty listing.
func TestAdapterAccountingEmpty(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			b := fixture(t, r.rel, "accounting-empty")
			if n := len(rawList(raw(t, b), "jobs")); n != 0 {
				t.Fatalf("recording holds %d jobs, want none", n)
			}
			f := newFake(t)
			_, db := prefixes(r.api)
			f.set("GET", db+"/jobs", 200, b)
			from := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			jobs, err := f.client(t, r.api).AccountingJobs(ctxT(t), from, from.Add(24*time.Hour))
			if err != nil || jobs == nil || len(jobs) != 0 {
				t.Fatalf("empty window: %v jobs (nil: %t), err %v; want an empty list", len(jobs), jobs == nil, err)
			}
		})
	}
	nothing := []byte(`{"errors":[{"description":"Nothing found","error_number":9003,"error":"Nothing found with query","source":"slurmdb_jobs_get"}],"jobs":[]}`)
	tests := []struct {
		name   string
		path   string
		status int
		want   error
	}{
		{"accounting, 9003 on a failure status", pdb38 + "/jobs", 500, ErrServer},
		// A read sends no key: not ErrIgnoredField.
		{"jobs list, 9003 on 200", p38 + "/jobs", 200, ErrServer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.set("GET", tc.path, tc.status, nothing)
			c := f.client(t, "v0.0.38")
			var err error
			if strings.HasPrefix(tc.path, pdb38) {
				_, err = c.AccountingJobs(ctxT(t), time.Unix(0, 0), time.Unix(1, 0))
			} else {
				_, err = c.Jobs(ctxT(t))
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestAdapterErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"expired token 24.11", 511, `{"errors":[{"error_number":1007,"error":"Protocol authentication error","source":"slurm_load_jobs()"}]}`, ErrAuth},
		{"bad token 22.05", 500, `{"errors":[{"error_number":-1,"error":"Unspecified error","source":"slurm_load_jobs"}]}`, ErrAuth},
		{"no auth", 401, `Authentication failure`, ErrAuth},
		{"unknown job", 404, `{"errors":[{"error_number":2017,"error":"Invalid job id specified"}]}`, ErrJobGone},
		{"truncated", 200, `{"jobs":[{"job_id":1,`, ErrBadResponse},
		{"not json", 200, `<html>`, ErrBadResponse},
		// A record that does not decode is skipped alone (the list is
		// read record by record).
		{"wrong type", 200, `{"jobs":[{"job_id":"x"}]}`, ErrBadRecord},
		{"jobs not an array", 200, `{"jobs":{"job_id":1}}`, ErrBadResponse},
		{"data after the object", 200, `{"jobs":[]} {}`, ErrBadResponse},
		{"no endpoint", 404, `Unable to find requested URL endpoint`, ErrUnsupported},
		{"malformed query", 400, `Unable to parse query.`, ErrInvalid},
	}
	for _, r := range releases {
		for _, tc := range tests {
			t.Run(r.rel+"/"+tc.name, func(t *testing.T) {
				f := newFake(t)
				p, _ := prefixes(r.api)
				f.set("GET", p+"/jobs", tc.status, []byte(tc.body))
				_, err := f.client(t, r.api).Jobs(ctxT(t))
				if !errors.Is(err, tc.want) {
					t.Errorf("err = %v, want %v", err, tc.want)
				}
				if err != nil && strings.Contains(err.Error(), "c2ln") {
					t.Errorf("error leaks the token: %v", err)
				}
			})
		}
	}
}
