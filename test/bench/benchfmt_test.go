package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseBench(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		procs   int
		want    []BenchResult
		wantErr string
	}{
		{
			name: "benchmem and custom metrics, procs suffix cut",
			out: `goos: linux
goarch: amd64
pkg: github.com/asrpt/asrpt/predictor
cpu: AMD EPYC 7B13
BenchmarkTrain/rows=500000-2         	       1	25312345678 ns/op	        1234 nodes/tree	1048576 B/op	    2048 allocs/op
BenchmarkPredict/batch-2             	       3	 412345678 ns/op	    242516 rows/s	       0 B/op	       0 allocs/op
PASS
`,
			procs: 2,
			want: []BenchResult{
				{Name: "Train/rows=500000", Iterations: 1, Metrics: []Metric{{25312345678, "ns/op"}, {1234, "nodes/tree"}, {1048576, "B/op"}, {2048, "allocs/op"}}},
				{Name: "Predict/batch", Iterations: 3, Metrics: []Metric{{412345678, "ns/op"}, {242516, "rows/s"}, {0, "B/op"}, {0, "allocs/op"}}},
			},
		},
		{
			name:  "one proc: no suffix, a name ending in a number survives",
			out:   "BenchmarkForestPredict/history=2000 \t 20000\t 41234 ns/op\n",
			procs: 1,
			want:  []BenchResult{{Name: "ForestPredict/history=2000", Iterations: 20000, Metrics: []Metric{{41234, "ns/op"}}}},
		},
		{
			name:  "only the procs suffix is cut",
			out:   "BenchmarkX/size-8-4 \t 10\t 5.5 ns/op\n",
			procs: 4,
			want:  []BenchResult{{Name: "X/size-8", Iterations: 10, Metrics: []Metric{{5.5, "ns/op"}}}},
		},
		{
			name:  "logs, failures and names without counts are skipped",
			out:   "BenchmarkHeavyEdge64on1000x8\n    bench_test.go:12: setup done\nBenchmarkFoo logs something\n--- FAIL: BenchmarkBar\nok  \tgithub.com/asrpt/asrpt/placement\t3.1s\n",
			procs: 2,
			want:  nil,
		},
		{
			name:    "a value that is not a number",
			out:     "BenchmarkX-2 \t 10\t fast ns/op\n",
			procs:   2,
			wantErr: `line 1: "BenchmarkX-2 \t 10\t fast ns/op": value "fast"`,
		},
		{
			name:    "a value without its unit",
			out:     "pkg: x\nBenchmarkX-2 \t 10\t 12 ns/op 7\n",
			procs:   2,
			wantErr: "line 2:",
		},
		{
			name:    "a count without figures",
			out:     "BenchmarkX-2 \t 10\n",
			procs:   2,
			wantErr: "want value-unit pairs",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBench(strings.NewReader(tt.out), tt.procs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
