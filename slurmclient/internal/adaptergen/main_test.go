package main

import (
	"strings"
	"testing"
)

func TestRenderNamesTheVersion(t *testing.T) {
	src, err := render(params{N: "46", Releases: "26.11–28.05", JobState: "[]api.V0046JobInfoJobState"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"DO NOT EDIT.", `api "github.com/asrpt/asrpt/slurmclient/internal/api/v0046"`, "type v0046 struct",
		`"/slurm/v0.0.46"`, "(Slurm 26.11–28.05)", "*[]api.V0046JobInfoJobState", "func job46(",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("rendered adapter lacks %q", want)
		}
	}
	if strings.Contains(string(src), "{{") || strings.Contains(string(src), "V0042") {
		t.Error("rendered adapter keeps template text or another version's names")
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-n", "4", "-releases", "x", "-jobstate", "api.V0042JobState", "-o", "out.go"},
		{"-n", "42", "-releases", "", "-jobstate", "api.V0042JobState", "-o", "out.go"},
		{"-n", "42", "-releases", "x", "-jobstate", "os.File", "-o", "out.go"},
		{"-n", "42", "-releases", "x", "-jobstate", "api.V0042JobState"},
	} {
		if err := run(args); err == nil {
			t.Errorf("run(%q) = nil, want a usage error", args)
		}
	}
}

// TestRenderSubmitLine: with -submitline the job list and accounting both
// hash the submit line into Command; without it neither reads one (the
// job list has no submit_line), so the keys of a pending job and of its
// accounting record agree either way.
func TestRenderSubmitLine(t *testing.T) {
	tests := []struct {
		submitLine bool
		want, not  []string
	}{
		{true,
			[]string{"job.CommandKey(deref(j.CurrentWorkingDirectory), deref(j.SubmitLine))",
				"SubmitLine: deref(j.SubmitLine)", "`json:\"submit_line,omitempty\"`"},
			[]string{`job.CommandKey(deref(j.CurrentWorkingDirectory), "")`}},
		{false,
			[]string{`job.CommandKey(deref(j.CurrentWorkingDirectory), "")`, "WorkDir: deref(j.WorkingDirectory)",
				"has no submit_line"},
			[]string{"SubmitLine", "submit_line,"}},
	}
	for _, tc := range tests {
		src, err := render(params{N: "46", Releases: "x", JobState: "api.V0046JobState", SubmitLine: tc.submitLine})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(src), w) {
				t.Errorf("submitline %t: rendered adapter lacks %q", tc.submitLine, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(string(src), n) {
				t.Errorf("submitline %t: rendered adapter has %q", tc.submitLine, n)
			}
		}
	}
}
