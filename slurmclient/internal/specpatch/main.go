// Command specpatch repairs the defects of an OpenAPI document published by
// slurmrestd that stop oapi-codegen from loading it, then runs
// `go tool oapi-codegen` on the repaired copy. It is run by the
// `//go:generate` directives of the packages under slurmclient/internal/api.
//
// Usage:
//
//	go run ../../specpatch -tools TOOLS-DIR -in SPEC.json -- OAPI-CODEGEN-ARGS...
//
// TOOLS-DIR is the repository's tools/ module, whose go.mod names the
// generator (a tool directive): the generator's dependencies stay out of
// the main module's graph. oapi-codegen runs in TOOLS-DIR, so specpatch
// makes the output path (-o) absolute first.
//
// The repaired document is written to a temporary file that is removed
// afterwards; the committed spec stays byte-for-byte what slurmrestd served.
// Each repair is reported on stderr. The repairs, all seen in Slurm 22.05.8's
// v0.0.38+dbv0.0.38 document:
//
//   - a path item holding a key that is not an OpenAPI path-item field
//     (22.05 puts "dbv0.0.38_tres_update" under /slurmdb/v0.0.38/accounts):
//     the key is dropped;
//   - a boolean schema whose default is a string or a number
//     (22.05's v0.0.38_job_properties.oversubscribe has "default": "false"):
//     the default is converted to a JSON boolean;
//   - a version number declared as a string but served as a JSON integer
//     (22.05's v0.0.38_meta and dbv0.0.38_meta: Slurm.version.major, .minor,
//     .micro are 22, 5, 8 on the wire): the type is made integer;
//   - the "number" of a *_uint32_no_val_struct declared "format": "int32"
//     (v0.0.40+): a uint32 such as a priority/basic priority of 4294901755
//     does not fit a Go int32, so the format is made int64.
//
// A spec without these defects passes through unchanged.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// pathItemFields are the fields OpenAPI 3.0 allows in a path item.
var pathItemFields = map[string]bool{
	"$ref": true, "summary": true, "description": true, "servers": true, "parameters": true,
	"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true,
	"patch": true, "trace": true,
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "specpatch:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("specpatch", flag.ContinueOnError)
	in := fs.String("in", "", "OpenAPI document (JSON) as published by slurmrestd")
	tools := fs.String("tools", "", "`dir` of the tools module whose go.mod names oapi-codegen as a tool")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *tools == "" || fs.NArg() == 0 {
		return errors.New("usage: specpatch -tools TOOLS-DIR -in SPEC.json -- OAPI-CODEGEN-ARGS")
	}
	genArgs, err := absOutput(fs.Args())
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	fixed, notes, err := Patch(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	for _, n := range notes {
		fmt.Fprintf(os.Stderr, "specpatch: %s: %s\n", *in, n)
	}
	tmp, err := os.CreateTemp("", "specpatch-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(fixed); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	cmdArgs := append([]string{"tool", "oapi-codegen"}, genArgs...)
	cmdArgs = append(cmdArgs, tmp.Name())
	cmd := exec.Command("go", cmdArgs...)
	cmd.Dir = *tools
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(cmdArgs, " "), err)
	}
	return nil
}

// absOutput returns args (oapi-codegen's) with the path after -o made
// absolute against the working directory, since the generator runs in the
// tools module's directory.
func absOutput(args []string) ([]string, error) {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "-o" && i+1 < len(out) {
			abs, err := filepath.Abs(out[i+1])
			if err != nil {
				return nil, fmt.Errorf("-o %s: %w", out[i+1], err)
			}
			out[i+1] = abs
		}
	}
	return out, nil
}

// Patch returns the repaired document and one note per repair made.
func Patch(raw []byte) ([]byte, []string, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, fmt.Errorf("not a JSON object: %w", err)
	}
	var notes []string
	if paths, ok := doc["paths"].(map[string]any); ok {
		for _, p := range sortedKeys(paths) {
			item, ok := paths[p].(map[string]any)
			if !ok {
				continue
			}
			for _, k := range sortedKeys(item) {
				if !pathItemFields[k] && !strings.HasPrefix(k, "x-") {
					delete(item, k)
					notes = append(notes, fmt.Sprintf("paths[%q]: dropped invalid path-item key %q", p, k))
				}
			}
		}
	}
	walk(doc, "#", &notes)
	fixMetaVersion(doc, &notes)
	fixUint32(doc, &notes)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	return out, notes, nil
}

// walk fixes boolean schemas with non-boolean defaults anywhere in v.
func walk(v any, at string, notes *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if v["type"] == "boolean" {
			if d, ok := v["default"]; ok {
				switch d := d.(type) {
				case string:
					b, err := strconv.ParseBool(d)
					if err == nil {
						v["default"] = b
						*notes = append(*notes, fmt.Sprintf("%s: boolean default %q made %v", at, d, b))
					} else {
						delete(v, "default")
						*notes = append(*notes, fmt.Sprintf("%s: dropped boolean default %q", at, d))
					}
				case float64:
					v["default"] = d != 0
					*notes = append(*notes, fmt.Sprintf("%s: boolean default %v made %v", at, d, d != 0))
				}
			}
		}
		for _, k := range sortedKeys(v) {
			walk(v[k], at+"/"+k, notes)
		}
	case []any:
		for i, e := range v {
			walk(e, fmt.Sprintf("%s/%d", at, i), notes)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// fixMetaVersion makes Slurm.version.{major,minor,micro} of every *_meta
// schema an integer where the document declares a string.
func fixMetaVersion(doc map[string]any, notes *[]string) {
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for _, name := range sortedKeys(schemas) {
		if !strings.HasSuffix(name, "_meta") {
			continue
		}
		ver := dig(schemas[name], "properties", "Slurm", "properties", "version", "properties")
		for _, f := range []string{"major", "minor", "micro"} {
			p, ok := ver[f].(map[string]any)
			if ok && p["type"] == "string" {
				p["type"] = "integer"
				*notes = append(*notes, fmt.Sprintf("#/components/schemas/%s: Slurm.version.%s string made integer", name, f))
			}
		}
	}
}

// dig follows keys through nested objects; nil when a step is missing.
func dig(v any, keys ...string) map[string]any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	m, _ := v.(map[string]any)
	return m
}

// fixUint32 widens the number of every *_uint32_no_val_struct to int64.
func fixUint32(doc map[string]any, notes *[]string) {
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for _, name := range sortedKeys(schemas) {
		if !strings.HasSuffix(name, "_uint32_no_val_struct") {
			continue
		}
		num := dig(schemas[name], "properties", "number")
		if num != nil && num["format"] == "int32" {
			num["format"] = "int64"
			*notes = append(*notes, fmt.Sprintf("#/components/schemas/%s: number int32 made int64", name))
		}
	}
}
