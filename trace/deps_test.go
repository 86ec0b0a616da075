package trace

import (
	"go/build"
	"strings"
	"testing"
)

// TestNoSlurmclientImport: the trace package reads job records and states
// (package job, job/jobstate), never the REST client's types.
func TestNoSlurmclientImport(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range append(p.Imports, p.TestImports...) {
		if strings.HasPrefix(imp, "github.com/asrpt/asrpt/slurmclient") {
			t.Errorf("trace imports %s", imp)
		}
	}
}
