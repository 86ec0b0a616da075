package decision

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// effects are the imports through which a package reads or writes the
// world (files, the network, the clock's context), logs or counts.
var effects = []string{
	"context", "io", "io/fs", "log", "log/slog", "net", "net/http", "os", "os/exec", "syscall",
	"github.com/rs/zerolog", "github.com/prometheus/client_golang",
	"github.com/asrpt/asrpt/sidecar", "github.com/asrpt/asrpt/loop",
}

// TestNoEffects: the decide step imports nothing that reads or writes the
// world, logs or counts, and never reads the clock (time is passed in).
func TestNoEffects(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		for _, e := range effects {
			if imp == e || strings.HasPrefix(imp, e+"/") {
				t.Errorf("decision imports %s", imp)
			}
		}
	}
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since") {
					t.Errorf("%s: time.%s: the step's time is passed in", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}
