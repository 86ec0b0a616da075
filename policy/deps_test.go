package policy

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/asrpt/asrpt"

// TestNoPredictorImport: the policies know predictions through package
// prediction only, not the predictors (the forest and its training).
func TestNoPredictorImport(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Imports, module+"/predictor") {
		t.Errorf("policy imports predictor: %v", p.Imports)
	}
}

// slurmSpecific are the packages that speak Slurm's own vocabulary: its
// configuration files, its REST API and the sidecar that drives it. Slurm's
// priority model enters the policies through package multifactor's own
// types; job states are the job record's (job/jobstate).
var slurmSpecific = []string{module + "/slurmconf", module + "/slurmclient", module + "/sidecar"}

// TestNoSlurmTypes: policy, with everything it imports from this module
// (its tests included), reaches none of the Slurm-specific packages.
func TestNoSlurmTypes(t *testing.T) {
	seen := map[string]string{} // package → the package that imports it
	queue := []string{module + "/policy"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		dir := filepath.Join("..", filepath.FromSlash(strings.TrimPrefix(path, module+"/")))
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		imports := p.Imports
		if path == module+"/policy" {
			imports = append(append(imports, p.TestImports...), p.XTestImports...)
		}
		for _, imp := range imports {
			if !strings.HasPrefix(imp, module+"/") || seen[imp] != "" {
				continue
			}
			seen[imp] = path
			for _, s := range slurmSpecific {
				if imp == s || strings.HasPrefix(imp, s+"/") {
					t.Errorf("policy reaches %s (imported by %s)", imp, path)
				}
			}
			queue = append(queue, imp)
		}
	}
	if seen[module+"/multifactor"] == "" {
		t.Errorf("policy does not reach multifactor: the guard walks the wrong tree (%d packages)", len(seen))
	}
}
