package trace

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
)

const nativeHeader = "id,submit,user,name,account,partition,qos,gpus,nodes,run_time,time_limit,state,profile,iterations\n"

func TestReadNative(t *testing.T) {
	full := job.Job{ID: "7", Submit: 1793577600, User: "alice", Name: "train-bert-2026-11-01-run3", Account: "lab1",
		Partition: "gpu", QOS: "normal", GPUs: 16, Nodes: 2, RunTime: 3600.5, TimeLimit: 7200, State: "COMPLETED",
		Profile: "bert-large", Iterations: 1000}
	tests := []struct {
		name  string
		file  string
		input string
		want  []job.Job
	}{
		{"csv all columns", "t.csv", nativeHeader +
			"7,1793577600,alice,train-bert-2026-11-01-run3,lab1,gpu,normal,16,2,3600.5,7200,completed,bert-large,1000\n",
			[]job.Job{full}},
		{"csv minimal columns any order", "t.csv", "run_time,gpus,id,submit\n60,1,b,20\n30,2,a,10\n",
			[]job.Job{{ID: "a", Submit: 10, GPUs: 2, RunTime: 30}, {ID: "b", Submit: 20, GPUs: 1, RunTime: 60}}},
		{"csv RFC 3339 submit, empty optional fields", "t.csv", "id,submit,gpus,run_time,time_limit,nodes\n1,2026-11-02T00:00:01Z,1,5,,\n",
			[]job.Job{{ID: "1", Submit: 1793577601, GPUs: 1, RunTime: 5}}},
		{"csv quoted name with comma, BOM, spaces", "t.csv", "\ufeffid, submit ,gpus,run_time,name\n1,0,1,5,\"a,b\"\n",
			[]job.Job{{ID: "1", GPUs: 1, RunTime: 5, Name: "a,b"}}},
		{"csv sorted by submit then natural id", "t.csv", "id,submit,gpus,run_time\n10,5,1,1\n9,5,1,1\n1,6,1,1\n",
			[]job.Job{{ID: "9", Submit: 5, GPUs: 1, RunTime: 1}, {ID: "10", Submit: 5, GPUs: 1, RunTime: 1}, {ID: "1", Submit: 6, GPUs: 1, RunTime: 1}}},
		{"jsonl all fields", "t.jsonl", `{"id":"7","submit":1793577600,"user":"alice","name":"train-bert-2026-11-01-run3","account":"lab1","partition":"gpu","qos":"normal","gpus":16,"nodes":2,"run_time":3600.5,"time_limit":7200,"state":"COMPLETED","profile":"bert-large","iterations":1000}` + "\n",
			[]job.Job{full}},
		{"jsonl numeric id, string numbers, nulls, blank lines", "t.jsonl", "\n{\"id\":3,\"submit\":\"2026-11-02T00:00:00Z\",\"gpus\":\"2\",\"run_time\":\"9\",\"user\":null}\n\n",
			[]job.Job{{ID: "3", Submit: 1793577600, GPUs: 2, RunTime: 9}}},
		{"content sniffing: JSON without extension", "trace", `{"id":"1","submit":0,"gpus":1,"run_time":1}`,
			[]job.Job{{ID: "1", GPUs: 1, RunTime: 1}}},
		{"content sniffing: CSV without extension", "trace", "id,submit,gpus,run_time\n1,0,1,1\n",
			[]job.Job{{ID: "1", GPUs: 1, RunTime: 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Read(strings.NewReader(tc.input), tc.file, Native)
			if err != nil {
				t.Fatal(err)
			}
			checkJobs(t, got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReadNativeBad(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		input     string
		line      int
		field     string
		is        error // the error must wrap this, when not nil
		wantParse bool
	}{
		{"zero GPUs", "t.csv", "id,submit,gpus,run_time\n1,0,1,5\n2,0,0,5\n", 3, "gpus", ErrValue, true},
		{"negative GPUs", "t.csv", "id,submit,gpus,run_time\n1,0,-4,5\n", 2, "gpus", ErrValue, true},
		{"GPUs not a number", "t.csv", "id,submit,gpus,run_time\n1,0,two,5\n", 2, "gpus", nil, true},
		{"GPUs absurdly large", "t.csv", "id,submit,gpus,run_time\n1,0,99999999999,5\n", 2, "gpus", ErrValue, true},
		{"zero run time", "t.csv", "id,submit,gpus,run_time\n1,0,1,0\n", 2, "run_time", ErrValue, true},
		{"negative run time", "t.csv", "id,submit,gpus,run_time\n1,0,1,-5\n", 2, "run_time", ErrValue, true},
		{"NaN run time", "t.csv", "id,submit,gpus,run_time\n1,0,1,NaN\n", 2, "run_time", ErrValue, true},
		{"empty run time", "t.csv", "id,submit,gpus,run_time\n1,0,1,\n", 2, "run_time", nil, true},
		{"negative time limit", "t.csv", "id,submit,gpus,run_time,time_limit\n1,0,1,5,-1\n", 2, "time_limit", ErrValue, true},
		{"bad submit", "t.csv", "id,submit,gpus,run_time\n1,yesterday,1,5\n", 2, "submit", nil, true},
		{"infinite submit", "t.csv", "id,submit,gpus,run_time\n1,+Inf,1,5\n", 2, "submit", ErrValue, true},
		{"empty id", "t.csv", "id,submit,gpus,run_time\n,0,1,5\n", 2, "id", nil, true},
		{"duplicate id", "t.csv", "id,submit,gpus,run_time\n1,0,1,5\n1,3,1,5\n", 3, "id", ErrValue, true},
		{"too few fields", "t.csv", "id,submit,gpus,run_time\n1,0,1\n", 2, "", nil, true},
		{"bare quote", "t.csv", "id,submit,gpus,run_time\n1,0,1,5\n2,0\"x,1,5\n", 3, "", nil, true},
		{"profile without iterations", "t.csv", "id,submit,gpus,run_time,profile\n1,0,8,5,bert-large\n", 2, "iterations", ErrValue, true},
		{"iterations without profile", "t.csv", "id,submit,gpus,run_time,iterations\n1,0,8,5,100\n", 2, "profile", ErrValue, true},
		{"unknown column", "t.csv", "id,submit,gpus,run_time,runtime\n1,0,1,5,5\n", 1, "runtime", ErrHeader, true},
		{"column twice", "t.csv", "id,submit,gpus,run_time,gpus\n1,0,1,5,1\n", 1, "gpus", ErrHeader, true},
		{"required column missing", "t.csv", "id,submit,gpus\n1,0,1\n", 1, "run_time", ErrHeader, true},
		{"empty file", "t.csv", "", 0, "", ErrEmpty, false},
		{"header only", "t.csv", nativeHeader, 0, "", ErrEmpty, false},
		{"jsonl empty", "t.jsonl", "\n\n", 0, "", ErrEmpty, false},
		{"jsonl zero GPUs", "t.jsonl", `{"id":"1","submit":0,"gpus":0,"run_time":1}`, 1, "gpus", ErrValue, true},
		{"jsonl negative run time", "t.jsonl", "{\"id\":\"1\",\"submit\":0,\"gpus\":1,\"run_time\":1}\n{\"id\":\"2\",\"submit\":0,\"gpus\":1,\"run_time\":-1}", 2, "run_time", ErrValue, true},
		{"jsonl missing field", "t.jsonl", `{"id":"1","submit":0,"gpus":1}`, 1, "run_time", nil, true},
		{"jsonl unknown field", "t.jsonl", `{"id":"1","submit":0,"gpus":1,"run_time":1,"zz":1,"gpu":2}`, 1, "zz", ErrHeader, true},
		{"jsonl wrong type", "t.jsonl", `{"id":"1","submit":0,"gpus":[1],"run_time":1}`, 1, "gpus", nil, true},
		{"jsonl not an object", "t.jsonl", "{\"id\":\"1\",\"submit\":0,\"gpus\":1,\"run_time\":1}\n[1,2]\n", 2, "", nil, true},
		{"jsonl truncated", "t.jsonl", `{"id":"1","submit":0,`, 1, "", nil, true},
		{"jsonl fractional GPUs", "t.jsonl", `{"id":"1","submit":0,"gpus":1.5,"run_time":1}`, 1, "gpus", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			jobs, err := Read(strings.NewReader(tc.input), tc.file, Native)
			if err == nil {
				t.Fatalf("no error; got %+v", jobs)
			}
			if jobs != nil {
				t.Errorf("jobs returned along with an error")
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not wrap %v", err, tc.is)
			}
			if !tc.wantParse {
				return
			}
			pe := parseErr(t, err)
			if pe.File != tc.file || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("error at %s:%d field %q, want %s:%d field %q (%v)", pe.File, pe.Line, pe.Field, tc.file, tc.line, tc.field, err)
			}
			if !strings.HasPrefix(err.Error(), tc.file+":") {
				t.Errorf("error %q does not start with the file name", err)
			}
		})
	}
}

func TestReadFileNative(t *testing.T) {
	dir := t.TempDir()
	jobs := []job.Job{{ID: "1", Submit: 1, GPUs: 1, RunTime: 2}, {ID: "2", Submit: 3, GPUs: 8, RunTime: 4.25, Profile: "resnet50", Iterations: 17}}
	for _, name := range []string{"a.csv", "a.jsonl", "a.csv.gz"} {
		var buf bytes.Buffer
		var err error
		if strings.Contains(name, "jsonl") {
			err = WriteJSONL(&buf, jobs)
		} else {
			err = WriteCSV(&buf, jobs)
		}
		if err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		if strings.HasSuffix(name, ".gz") {
			data = gzipBytes(t, data)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p, Native)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, jobs) {
			t.Errorf("%s: read back %+v, want %+v", name, got, jobs)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.csv"), Native); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

// TestNativeOptionalColumns: array ids and command keys
// round-trip through both native forms, and CSV names the optional
// columns up to the last one some job fills.
func TestNativeOptionalColumns(t *testing.T) {
	plain := []job.Job{{ID: "1", Submit: 1, GPUs: 1, RunTime: 2}}
	arrays := append(plain, job.Job{ID: "7", Submit: 2, GPUs: 1, RunTime: 3, ArrayJobID: "5"},
		job.Job{ID: "5", Submit: 2, GPUs: 1, RunTime: 4, ArrayJobID: "5"})
	command := append(plain, job.Job{ID: "9", Submit: 3, GPUs: 2, RunTime: 5, Command: job.CommandKey("/w", "sbatch a.sh")})
	for _, tc := range []struct {
		jobs    []job.Job
		header  string // the columns after iterations
		jsonKey []string
	}{
		{plain, "", nil},
		{arrays, ",array_job_id", []string{"array_job_id"}},
		{command, ",array_job_id,command", []string{"command"}},
	} {
		var csvBuf, jsonBuf bytes.Buffer
		if err := WriteCSV(&csvBuf, tc.jobs); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSONL(&jsonBuf, tc.jobs); err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(csvBuf.String(), "\n")
		if _, tail, _ := strings.Cut(head, ",iterations"); tail != tc.header {
			t.Errorf("header %q: optional columns %q, want %q", head, tail, tc.header)
		}
		for _, k := range []string{"array_job_id", "command"} {
			if strings.Contains(jsonBuf.String(), `"`+k+`"`) != slices.Contains(tc.jsonKey, k) {
				t.Errorf("JSON Lines %q names %s: %v, want %v", jsonBuf.String(), k, !slices.Contains(tc.jsonKey, k), slices.Contains(tc.jsonKey, k))
			}
		}
		for name, buf := range map[string]*bytes.Buffer{"a.csv": &csvBuf, "a.jsonl": &jsonBuf} {
			got, err := Read(buf, name, Native)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]job.Job{}, tc.jobs...)
			Sort(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read back %+v, want %+v", name, got, want)
			}
		}
	}
	for _, bad := range []string{"command\nxyz", "command\n" + strings.Repeat("1", 17), "command\n-5"} {
		col, v, _ := strings.Cut(bad, "\n")
		in := "id,submit,gpus,run_time," + col + "\n1,0,1,5," + v + "\n"
		var pe *ParseError
		if _, err := Read(strings.NewReader(in), "bad.csv", Native); !errors.As(err, &pe) || pe.Field != col || pe.Line != 2 {
			t.Errorf("%s = %.20s: %v, want a ParseError naming line 2 and %s", col, v, err, col)
		}
	}
}

// TestGolden writes a small generated trace plus hand-made edge cases in
// both native forms, compares with testdata/*.golden (rewrite with
// -update), and reads each back to the same jobs.
func TestGolden(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs, cfg.ProfiledShare = 40, 0 // no dependence on the placement catalogue
	jobs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs,
		job.Job{ID: "p1", Submit: jobs[len(jobs)-1].Submit + 0.25, User: "zoë", Name: `quote"and,comma`, GPUs: 16, Nodes: 2,
			RunTime: 1234.5678901234, TimeLimit: 0, State: "COMPLETED", Profile: "gpt2-1.5b", Iterations: 5000},
		job.Job{ID: "p2", Submit: jobs[len(jobs)-1].Submit + 0.501, Name: "line\nbreak", GPUs: 1, RunTime: 1e-3})
	for _, tc := range []struct {
		file  string
		write func(*bytes.Buffer, []job.Job) error
	}{
		{"gen.golden.csv", func(b *bytes.Buffer, j []job.Job) error { return WriteCSV(b, j) }},
		{"gen.golden.jsonl", func(b *bytes.Buffer, j []job.Job) error { return WriteJSONL(b, j) }},
	} {
		var buf bytes.Buffer
		if err := tc.write(&buf, jobs); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s differs from the golden file (run go test -update if the change is intended)", tc.file)
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), tc.file, Native)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, jobs) {
			for i := range min(len(back), len(jobs)) {
				if !reflect.DeepEqual(back[i], jobs[i]) {
					t.Fatalf("%s: job %d read back as %+v, wrote %+v", tc.file, i, back[i], jobs[i])
				}
			}
			t.Fatalf("%s: read back %d jobs, wrote %d", tc.file, len(back), len(jobs))
		}
	}
}

func TestWriteJSONLRejectsNaN(t *testing.T) {
	var buf bytes.Buffer
	err := WriteJSONL(&buf, []job.Job{{ID: "1", GPUs: 1, RunTime: nan()}})
	if err == nil {
		t.Fatal("no error writing NaN")
	}
}

// TestReadLarge reads traces longer than one chunk of the reader's buffer,
// shuffled, and checks that they come back whole and sorted.
func TestReadLarge(t *testing.T) {
	cfg := DefaultGenConfig()
	cfg.Jobs = 3*job.TableChunk + 17
	jobs, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shuffled := slices.Clone(jobs)
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, name := range []string{"big.csv", "big.jsonl"} {
		var buf bytes.Buffer
		if strings.HasSuffix(name, ".csv") {
			err = WriteCSV(&buf, shuffled)
		} else {
			err = WriteJSONL(&buf, shuffled)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(&buf, name, Native)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, jobs) {
			t.Errorf("%s: read back differs from the generated jobs", name)
		}
	}
	// sacct: a duplicate of a job in the first chunk, after several chunks.
	var b strings.Builder
	b.WriteString("JobIDRaw|JobName|User|Submit|ElapsedRaw|AllocTRES|State\n")
	n := 2*job.TableChunk + 5
	for i := range n {
		fmt.Fprintf(&b, "%d|j|u|%d|%d|gres/gpu=1|COMPLETED\n", i, 1000+i, 10+i)
	}
	fmt.Fprintf(&b, "%d|j|u|%d|%d|gres/gpu=1|COMPLETED\n", 5, 1005, 999)
	got, st, err := ReadStats(strings.NewReader(b.String()), "big.sacct", Sacct, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || st.Duplicates != 1 || got[5].ID != "5" || got[5].RunTime != 999 {
		t.Errorf("sacct: %d jobs (want %d), stats %v, job 5 = %+v", len(got), n, st, got[5])
	}
}
