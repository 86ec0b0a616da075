package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"--version"}, &out, &errb); rc != 0 || !strings.HasPrefix(out.String(), "asrpt ") {
		t.Fatalf("--version: rc %d, %q %q", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := run([]string{"version", "--json"}, &out, &errb); rc != 0 {
		t.Fatalf("version --json: rc %d: %s", rc, errb.String())
	}
	var v struct {
		Version   string `json:"version"`
		GoVersion string `json:"go_version"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version == "" || !strings.HasPrefix(v.GoVersion, "go") {
		t.Errorf("version --json: %q (%v)", out.String(), err)
	}
}
