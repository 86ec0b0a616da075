package slurmclient

import (
	"go/build"
	"slices"
	"testing"
)

// TestNoSlurmconfImport: the REST client expands hostlists with package
// hostlist and knows nothing of slurm.conf.
func TestNoSlurmconfImport(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Imports, "github.com/asrpt/asrpt/slurmconf") {
		t.Errorf("slurmclient imports slurmconf: %v", p.Imports)
	}
}
