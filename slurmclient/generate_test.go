package slurmclient

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedCodeUpToDate runs every //go:generate directive of
// internal/api/*/gen.go and adapters.go with its output redirected to a
// temporary file and checks that the result is byte for byte the committed
// file: the generated types come from the recorded specs in openapi/ and
// nothing else, and the v0.0.42+ adapters from their one template. It needs
// the go command and builds oapi-codegen (the tools module's tool), so -short skips it.
func TestGeneratedCodeUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running go generate")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	gens, err := filepath.Glob(filepath.Join("internal", "api", "*", "gen.go"))
	if err != nil || len(gens) == 0 {
		t.Fatalf("no internal/api/*/gen.go: %v", err)
	}
	gens = append(gens, "adapters.go")
	for _, gen := range gens {
		dir := filepath.Dir(gen)
		t.Run(gen, func(t *testing.T) {
			args := generateDirectives(t, gen)
			if len(args) == 0 {
				t.Fatalf("%s: no //go:generate directive", gen)
			}
			for n, argv := range args {
				out := -1
				for i, a := range argv {
					if a == "-o" && i+1 < len(argv) {
						out = i + 1
					}
				}
				if len(argv) < 2 || argv[0] != "go" || out < 0 {
					t.Fatalf("%s: directive %d %q: want `go … -o FILE`", gen, n+1, argv)
				}
				committed := filepath.Join(dir, argv[out])
				tmp := filepath.Join(t.TempDir(), filepath.Base(argv[out]))
				argv[out] = tmp
				cmd := exec.Command(goCmd, argv[1:]...)
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s: %q: %v\n%s", gen, argv, err, stderr.String())
				}
				want, err := os.ReadFile(committed)
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(tmp)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from what `go generate` makes from the recorded spec "+
						"(%d bytes generated, %d committed); run `go generate ./slurmclient/...` and commit",
						committed, len(got), len(want))
				}
			}
		})
	}
}

// generateDirectives returns the words of each //go:generate line of file.
func generateDirectives(t *testing.T, file string) [][]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "//go:generate "); ok {
			out = append(out, strings.Fields(rest))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out
}
