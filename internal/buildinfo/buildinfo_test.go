package buildinfo

import (
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	in := Get()
	if in.Version == "" || in.GoVersion == "" || !strings.HasPrefix(in.GoVersion, "go") {
		t.Errorf("build info %+v", in)
	}
	old := version
	defer func() { version = old }()
	version = "v9.8.7"
	if got := Get(); got.Version != "v9.8.7" || !strings.HasPrefix(got.String(), "asrpt v9.8.7 (") {
		t.Errorf("with a link-time version: %+v, %q", got, got.String())
	}
}
