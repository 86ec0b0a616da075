// Package buildinfo says which build of asrpt is running: the version
// given at link time (make sets it from git describe), else the module
// version, and the VCS revision and Go version the binary was built with.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// version is set at link time:
//
//	go build -ldflags "-X github.com/asrpt/asrpt/internal/buildinfo.version=v1.2.3"
var version string

// Info is what Get reports.
type Info struct {
	// Version is the link-time version, else the module's ("(devel)" for a
	// plain go build).
	Version string `json:"version"`
	// Revision is the VCS commit, with "-dirty" when the tree had changes;
	// empty when the build recorded none.
	Revision string `json:"revision"`
	// GoVersion is the Go release that built the binary.
	GoVersion string `json:"go_version"`
}

// Get returns the running binary's build information.
func Get() Info {
	in := Info{Version: version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if in.Version == "" {
			in.Version = "unknown"
		}
		return in
	}
	in.GoVersion = bi.GoVersion
	if in.Version == "" {
		in.Version = bi.Main.Version
	}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && in.Revision != "" {
		in.Revision += "-dirty"
	}
	return in
}

// String is "asrpt VERSION (REVISION, GOVERSION)".
func (in Info) String() string {
	var extra []string
	if in.Revision != "" {
		extra = append(extra, in.Revision)
	}
	if in.GoVersion != "" {
		extra = append(extra, in.GoVersion)
	}
	s := "asrpt " + in.Version
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
}
