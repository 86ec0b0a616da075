package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/asrpt/asrpt/internal/buildinfo"
)

func init() {
	register("version", "print the version, VCS revision and Go release of this binary (--json)", runVersion)
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	in := buildinfo.Get()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(in)
	}
	_, err := fmt.Fprintln(stdout, in)
	return err
}
