package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"

	"github.com/asrpt/asrpt/internal/buildinfo"
	"github.com/asrpt/asrpt/internal/golden"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite testdata/schema/*.txt")

// keyPaths lists the key paths of a JSON document ("a.b[].c"), sorted,
// each once.
func keyPaths(t *testing.T, data []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, data)
	}
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				seen[p] = true
				walk(p, c)
			}
		case []any:
			for _, c := range x {
				walk(prefix+"[]", c)
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var snake = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestJSONSchemas: every JSON output of the commands has snake_case keys,
// and its key paths are those of testdata/schema/NAME.txt (the documented
// schema; go test ./cmd/asrpt -run JSONSchemas -update-schema rewrites
// them after a deliberate change). Map keys that are data (policy names,
// counts by state) are listed as they come from the fixed inputs here.
func TestJSONSchemas(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.csv")
	var gen bytes.Buffer
	if rc := run([]string{"gen", "--jobs", "300", "--seed", "2", "--nodes", "4", "--gpus-per-node", "8"}, &gen, os.Stderr); rc != 0 {
		t.Fatal("gen failed")
	}
	if err := os.WriteFile(trace, gen.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shares := filepath.Join(dir, "assoc.txt")
	if err := os.WriteFile(shares, []byte("Account|User|Share\nlab1||2\nlab2||1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := map[string]func() []byte{
		"replay": func() []byte {
			out := filepath.Join(dir, "replay.json")
			var so, se bytes.Buffer
			if rc := run([]string{"replay", "--trace", trace, "--nodes", "4", "--gpus-per-node", "8", "--policies", "fifo,asrpt,asrpt-oracle,asrpt-sidecar", "--against", "multifactor",
				"--predictor", "mean", "--progress", "never", "--shares", shares, "--out", out}, &so, &se); rc != 0 {
				t.Fatalf("replay: %s", se.String())
			}
			b, _ := os.ReadFile(out)
			return b
		},
		"eval": func() []byte {
			out := filepath.Join(dir, "eval.json")
			var so, se bytes.Buffer
			if rc := run([]string{"eval", "--history", trace, "--trees", "5", "--out", out}, &so, &se); rc != 0 {
				t.Fatalf("eval: %s", se.String())
			}
			b, _ := os.ReadFile(out)
			return b
		},
		"plan": func() []byte {
			b, _ := json.Marshal([]decision.PlanRow{{JobID: "1", User: "u", Name: "n", Shape: "plain", GPUs: 8, Predicted: 60, Known: true,
				Stage: "dispatched", Rank: 1, PriorityNow: 1, PriorityNew: 2, SiteFactorNow: new(uint32), SiteFactorNew: new(uint32),
				Nodes: []string{"a"}, Reason: reason.NoPlacement, Note: "x", Family: "n",
				Profile: "gpt2-1.5b", ProfileSource: "comment", ProfileProblem: "p", AlphaMin: 1, Alpha: 1, Heavy: true}})
			return b
		},
		"status": func() []byte {
			b, _ := json.Marshal(sampleStatus(time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)))
			return b
		},
		"version": func() []byte {
			b, _ := json.Marshal(buildinfo.Get())
			return b
		},
	}
	for name, produce := range outputs {
		t.Run(name, func(t *testing.T) {
			paths := keyPaths(t, produce())
			for _, p := range paths {
				for _, part := range strings.Split(strings.ReplaceAll(p, "[]", ""), ".") {
					if part != "" && !snake.MatchString(part) && !dataKey(name, part) {
						t.Errorf("%s: key %q of %q is not snake_case", name, part, p)
					}
				}
			}
			golden.Check(t, filepath.Join("testdata", "schema", name+".txt"), []byte(strings.Join(paths, "\n")+"\n"), *updateSchema)
		})
	}
}

// dataKey reports a map key that is data, not a field name: policy names
// with their -oracle suffix.
func dataKey(output, key string) bool {
	return output == "replay" && regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(key)
}
