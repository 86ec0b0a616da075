package reason

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// codes returns every Code constant declared in reason.go, by value.
func codes(t *testing.T) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "reason.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			v := sp.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, n := range v.Names {
				lit := v.Values[i].(*ast.BasicLit)
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				if prev, dup := out[s]; dup {
					t.Errorf("code %q declared twice: %s and %s", s, prev, n.Name)
				}
				out[s] = n.Name
			}
		}
	}
	return out
}

// TestCodesAreAContract: every code is snake_case, unique, and documented
// where admins read them (contrib/README.md for the plan, README.md for
// the replay).
func TestCodesAreAContract(t *testing.T) {
	var doc []byte
	for _, f := range []string{"../contrib/README.md", "../README.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc = append(doc, b...)
	}
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	cs := codes(t)
	if len(cs) < 30 {
		t.Fatalf("found %d codes in reason.go, want every one of them", len(cs))
	}
	for c, name := range cs {
		if !snake.MatchString(c) {
			t.Errorf("%s = %q: not snake_case", name, c)
		}
		if !strings.Contains(string(doc), "`"+c+"`") {
			t.Errorf("%s = %q: in neither contrib/README.md nor README.md", name, c)
		}
	}
}

func TestReason(t *testing.T) {
	if !(Reason{}).None() || Of(Held, "").None() {
		t.Error("None")
	}
	if got := Of(Held, "held by alice").String(); got != "held by alice" {
		t.Errorf("String with detail: %q", got)
	}
	if got := Of(NoRoom, "").String(); got != "no_room" {
		t.Errorf("String without detail: %q", got)
	}
}
