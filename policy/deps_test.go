package policy

import (
	"go/build"
	"slices"
	"testing"
)

// TestNoPredictorImport: the policies know predictions through package
// prediction only, not the predictors (the forest and its training).
func TestNoPredictorImport(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Imports, "github.com/asrpt/asrpt/predictor") {
		t.Errorf("policy imports predictor: %v", p.Imports)
	}
}
