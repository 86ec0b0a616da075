package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		sizes   []int
		las     []int
		jobs    int
		partial string // a part of partial(); "" for a full run
		wantErr string
	}{
		{name: "full", sizes: fullSizes, las: fullLASSizes, jobs: fullPolicyJobs},
		{name: "quick", args: []string{"-quick"}, sizes: quickSizes, las: quickLASSizes, jobs: quickPolicyJobs, partial: "quick"},
		{name: "env, sorted", env: map[string]string{"BENCH_SIZES": "1000000, 10000", "BENCH_LAS_SIZES": "none"},
			sizes: []int{10000, 1000000}, las: nil, jobs: fullPolicyJobs, partial: "las on none: skipped"},
		{name: "flag wins over env", args: []string{"-sizes", "500", "-policy-jobs", "0"}, env: map[string]string{"BENCH_SIZES": "7"},
			sizes: []int{500}, las: fullLASSizes, jobs: 0, partial: "every policy on none: skipped"},
		{name: "bad size", args: []string{"-sizes", "10,x"}, wantErr: `-sizes "10,x"`},
		{name: "zero size", args: []string{"-las-sizes", "0"}, wantErr: "at least 1"},
		{name: "runs below 1", args: []string{"-policy-runs", "0"}, wantErr: "-policy-runs"},
		{name: "stray argument", args: []string{"README.md"}, wantErr: "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseOptions(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.Sizes, tt.sizes) || !slices.Equal(o.LASSizes, tt.las) || o.PolicyJobs != tt.jobs {
				t.Errorf("sizes %v, las %v, policy jobs %d; want %v, %v, %d", o.Sizes, o.LASSizes, o.PolicyJobs, tt.sizes, tt.las, tt.jobs)
			}
			p := o.partial()
			if tt.partial == "" && p != "" || !strings.Contains(p, tt.partial) {
				t.Errorf("partial() = %q, want it to hold %q", p, tt.partial)
			}
		})
	}
}
