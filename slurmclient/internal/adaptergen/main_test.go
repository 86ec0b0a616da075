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
