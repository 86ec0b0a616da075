package slurmclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/hostlist"
)

func TestGPUIndicesPerNode(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		fail bool
	}{
		{"gpu:8(IDX:0-7)", 8, false},
		{fmt.Sprintf("gpu:64(IDX:0-%d)", MaxGPUIndicesPerNode-1), MaxGPUIndicesPerNode, false},
		{fmt.Sprintf("gpu:65(IDX:0-%d)", MaxGPUIndicesPerNode), 0, true},
		{"gpu:1(IDX:0-4096)", 0, true},
		// The reproducer: many ranges of 4,097 indices in one element.
		{"gpu:1(IDX:" + strings.Repeat("0-4096,", 20000) + "0)", 0, true},
	}
	for _, tt := range tests {
		idx, err := gpuIndices(tt.in)
		if tt.fail {
			want := fmt.Sprintf("more than %d GPU indices for one node", MaxGPUIndicesPerNode)
			if err == nil || !strings.Contains(err.Error(), want) || len(err.Error()) > 200 {
				t.Errorf("gpuIndices(%.40q) = %v; want an error of at most 200 bytes containing %q", tt.in, err, want)
			}
			continue
		}
		if err != nil || len(idx) != tt.n {
			t.Errorf("gpuIndices(%q) = %d indices, %v; want %d", tt.in, len(idx), err, tt.n)
		}
	}
}

func TestResponseBudget(t *testing.T) {
	b := &budget{left: 10}
	if _, err := b.hosts("n[1-6]"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.indexMap([]string{"n1"}, []string{"gpu:2(IDX:0-1)"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.hosts("m[1-3]"); !errors.Is(err, errTooManyNames) {
		t.Fatalf("past the budget: %v", err)
	}
	if _, err := b.hosts("x"); !errors.Is(err, errTooManyNames) {
		t.Fatalf("spent budget: %v", err)
	}
	if got, err := b.hosts(""); err != nil || got != nil {
		t.Fatalf("empty list on a spent budget: %v, %v", got, err)
	}
}

// hostileJobs is a v0.0.42/v0.0.44 jobs response of n running jobs, each
// with every node field "n[1-65536]" and gres_detail as given.
func hostileJobs(t *testing.T, n int, detail []string) []byte {
	t.Helper()
	var jobs []map[string]any
	for i := 1; i <= n; i++ {
		jobs = append(jobs, map[string]any{
			"job_id": i, "name": "x", "user_name": "u", "partition": "p",
			"job_state": []string{"RUNNING"}, "tres_req_str": "gres/gpu=1",
			"nodes": "n[1-65536]", "required_nodes": "n[1-65536]", "excluded_nodes": "n[1-65536]",
			"gres_detail": detail,
		})
	}
	b, err := json.Marshal(map[string]any{"jobs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJobsResponseBounds covers the reproducers of a hostile slurmrestd:
// 100 jobs with three fields of 65,536 names, and a gres_detail of many
// index ranges. The first is ErrBadResponse (the response's budget),
// found after at most MaxResponseNames names; the second is one bad
// record, skipped (ErrBadRecord); both name the job and field.
func TestJobsResponseBounds(t *testing.T) {
	perJob := 3 * hostlist.MaxHosts
	firstBad := MaxResponseNames/perJob + 1 // the job whose fields pass the budget
	tests := []struct {
		name  string
		body  []byte
		want  error
		field string
	}{
		{"100 jobs of 3×65,536 names", hostileJobs(t, 100, nil), ErrBadResponse, fmt.Sprintf("job %d: excluded_nodes: slurm: malformed response: too many host names", firstBad)},
		{"gres_detail of many IDX ranges", hostileJobs(t, 1, []string{"gpu:1(IDX:" + strings.Repeat("0-4096,", 20000) + "0)"}), ErrBadRecord, "job 1: slurm: malformed response: gres_detail"},
	}
	for _, r := range releases[1:] {
		for _, tt := range tests {
			t.Run(r.rel+"/"+tt.name, func(t *testing.T) {
				f := newFake(t)
				p, _ := prefixes(r.api)
				f.set("GET", p+"/jobs", 200, tt.body)
				start := time.Now()
				_, err := f.client(t, r.api).Jobs(ctxT(t))
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("Jobs took %v", d)
				}
				if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.field) {
					t.Fatalf("Jobs = %.300v; want %v containing %q", err, tt.want, tt.field)
				}
			})
		}
	}
}

// TestBadRecordSkipped: one record of a job list with a field out of range
// (array_task_id 4e9, a TRES string that is no number) is skipped and
// named in a RecordErrors returned with the other jobs, on every API
// version; the rest of the list stands. A bad record of a finished job is
// ignored.
// floatLit is the JSON number lit, bare (v0.0.38) or as a no-val struct's
// number.
func floatLit(v38 bool, lit string) any {
	if v38 {
		return json.RawMessage(lit)
	}
	return json.RawMessage(`{"set":true,"infinite":false,"number":` + lit + `}`)
}

func TestBadRecordSkipped(t *testing.T) {
	type rec = map[string]any
	for _, r := range releases {
		v38 := r.api == "v0.0.38"
		num := func(n int64) any {
			if v38 {
				return n
			}
			return rec{"set": true, "number": n}
		}
		state := func(s string) any {
			if v38 {
				return s
			}
			return []string{s}
		}
		job := func(id int64, st string, extra rec) rec {
			j := rec{"job_id": id, "name": "x", "user_name": "u", "partition": "p", "job_state": state(st),
				"tres_req_str": "gres/gpu=1", "priority": num(1000)}
			for k, v := range extra {
				j[k] = v
			}
			return j
		}
		for _, c := range []struct {
			name string
			bad  rec
		}{
			{"array_task_id 4e9", rec{"array_job_id": num(5), "array_task_id": num(4_000_000_000)}},
			{"TRES count not a number", rec{"tres_req_str": "gres/gpu=lots", "tres_per_node": "gres/gpu:lots"}},
			// A number in float syntax where an integer is due: the record
			// does not decode, and is skipped alone (getJobs).
			{"array_task_id 4e9 as a float literal", rec{"array_job_id": num(5), "array_task_id": floatLit(v38, "4e9")}},
			{"priority as a string", rec{"priority": "high"}},
		} {
			t.Run(r.rel+"/"+c.name, func(t *testing.T) {
				body, err := json.Marshal(rec{"jobs": []rec{
					job(4, "PENDING", nil), job(5, "PENDING", c.bad), job(6, "RUNNING", nil),
					job(7, "COMPLETED", c.bad),
				}})
				if err != nil {
					t.Fatal(err)
				}
				f := newFake(t)
				p, _ := prefixes(r.api)
				f.set("GET", p+"/jobs", 200, body)
				jobs, err := f.client(t, r.api).Jobs(ctxT(t))
				var re *RecordErrors
				if !errors.As(err, &re) || !errors.Is(err, ErrBadRecord) || len(re.IDs) != 1 || re.IDs[0] != "5" ||
					!strings.Contains(err.Error(), "job 5") {
					t.Fatalf("err = %v, want a RecordErrors naming job 5 alone", err)
				}
				var ids []string
				for _, j := range jobs {
					ids = append(ids, j.ID)
				}
				if strings.Join(ids, ",") != "4,6" {
					t.Errorf("jobs %v, want 4 and 6", ids)
				}
			})
		}
	}
}
