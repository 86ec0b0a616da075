package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/asrpt/asrpt/internal/fuzzbound"
)

// fuzzRead reads data in format f under name and checks that a success
// honours the reader contract. Inputs are capped so that each run stays
// small; the readers themselves bound a line at 1 MiB.
func fuzzRead(t *testing.T, data []byte, name string, f Format) {
	if len(data) > 1<<16 {
		return
	}
	jobs, st, err := ReadStats(bytes.NewReader(data), name, f, Options{})
	if err != nil {
		if jobs != nil {
			t.Fatalf("jobs returned with error %v", err)
		}
		return
	}
	checkJobs(t, jobs)
	if st.Jobs != len(jobs) || st.Rows < st.Jobs {
		t.Fatalf("stats %+v for %d jobs", st, len(jobs))
	}
	// Whatever was read writes back and reads again to the same jobs.
	var buf bytes.Buffer
	if err := WriteCSV(&buf, jobs); err != nil {
		t.Fatal(err)
	}
	again, err := Read(&buf, "again.csv", Native)
	if err != nil {
		t.Fatalf("re-reading the written trace: %v", err)
	}
	if len(again) != len(jobs) {
		t.Fatalf("re-read %d jobs of %d", len(again), len(jobs))
	}
}

func addFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) <= 1<<16 {
			f.Add(b)
		}
	}
}

func FuzzReadNativeCSV(f *testing.F) {
	f.Add([]byte(nativeHeader + "7,1793577600,alice,train,lab1,gpu,normal,16,2,3600.5,7200,COMPLETED,bert-large,1000\n"))
	f.Add([]byte("id,submit,gpus,run_time\n1,2026-11-02T00:00:01Z,1,5\n2,\"0\",2,1e3\n"))
	f.Add([]byte("id,submit,gpus,run_time\n1,0,0,5\n"))
	f.Add([]byte("id,submit,gpus,run_time,array_job_id,command\n1,0,2,5,,9f04ce7be0960ad0\n"))
	addFiles(f, "testdata/*.csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() { fuzzRead(t, data, "fuzz.csv", Native) })
	})
}

func FuzzReadJSONL(f *testing.F) {
	f.Add([]byte(`{"id":"7","submit":1793577600,"gpus":16,"run_time":3600.5,"profile":"bert-large","iterations":1000}` + "\n"))
	f.Add([]byte("{\"id\":3,\"submit\":\"2026-11-02T00:00:00Z\",\"gpus\":\"2\",\"run_time\":\"9\",\"user\":null}\n\n"))
	addFiles(f, "testdata/*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() { fuzzRead(t, data, "fuzz.jsonl", Native) })
	})
}

func FuzzReadSacct(f *testing.F) {
	addFiles(f, "testdata/sacct/*.txt")
	f.Add([]byte("JobID|JobName|User|Submit|Elapsed|Timelimit|NodeList|ReqTRES|State\n1_2|a|u|2026-01-01T00:00:00|1-00:00:01|UNLIMITED|n[1-3]|gres/gpu:a=2,gres/gpu:b=1|CANCELLED by 0\n"))
	f.Add([]byte("JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|ReqTRES|WorkDir|SubmitLine\n3|a|u|2026-01-01T00:00:00|9|cpu=8,mem=187.50G,gres/gpu=1|cpu=4|/home/u|sbatch --wrap \"a | b\"\n"))
	f.Add([]byte("JobIDRaw|JobID|JobName|User|Submit|ElapsedRaw|AllocTRES|State\n9|8+1|a|u|2026-01-01T00:00:00|9|cpu=2|COMPLETED\n8|8+0|a|u|2026-01-01T00:00:00|9|gres/gpu=2|COMPLETED\n8|8+0|a|u|2026-01-01T00:00:00|0|gres/gpu=2|FAILED\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() { fuzzRead(t, data, "fuzz.sacct", Sacct) })
	})
}

func FuzzReadHelios(f *testing.F) {
	f.Add([]byte(heliosHeader + "0,1,1,1,1,0,84,0,Pass\n1,1,0,4,1,94,87,0,Pass\n2,2,8,64,1,6,30,0,Failed\n"))
	f.Add([]byte("run_time,interval,gpu_num,user\n10,5,1,7\n0,5,1,7\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzbound.Within(t, time.Second, func() { fuzzRead(t, data, "fuzz.csv", Helios) })
	})
}

// FuzzScanObject checks the JSON Lines object scanner against
// encoding/json: both accept the same objects, with the same values.
func FuzzScanObject(f *testing.F) {
	f.Add([]byte(`{"id":"7","submit":1793577600,"gpus":16,"name":"a\"b\u00e9","user":null}`))
	f.Add([]byte(`{"id":"1","gpus":[1]}`))
	f.Add([]byte(` { "id" : "x" , "id" : "y" } `))
	f.Add([]byte(`{"zz":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzbound.Within(t, time.Second, func() {
			var vals [numCols][]byte
			_, err := scanObject(b, &vals)
			var m map[string]json.RawMessage
			stdErr := json.Unmarshal(b, &m)
			if stdErr != nil || m == nil {
				if err == nil {
					t.Fatalf("scanObject accepted %q, encoding/json: %v", b, stdErr)
				}
				return
			}
			want := [numCols]string{}
			ok := true
			for k, v := range m {
				c := colIndex(k)
				if c < 0 || v[0] == '{' || v[0] == '[' {
					ok = false
					continue
				}
				want[c] = string(v)
			}
			if !ok {
				if err == nil {
					t.Fatalf("scanObject accepted %q with an unknown key or a nested value", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("scanObject rejected %q: %v", b, err)
			}
			for c := range numCols {
				if want[c] == "" {
					if vals[c] != nil {
						t.Fatalf("%q: field %s = %q, absent for encoding/json", b, Columns[c], vals[c])
					}
					continue
				}
				g, _, gerr := jsonScalar(vals[c])
				w, _, werr := jsonScalar(json.RawMessage(want[c]))
				if g != w || (gerr == nil) != (werr == nil) {
					t.Fatalf("%q: field %s = %q (%v), encoding/json %q (%v)", b, Columns[c], g, gerr, w, werr)
				}
			}
		})
	})
}
