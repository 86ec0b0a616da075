// Command adaptergen writes the REST adapter of one Slurm REST API version
// from adapter.go.tmpl: the v0.0.42 and later adapters differ only in the
// generated types' names and in the shape of job_state, so they are one
// template rather than copies kept in step by hand. It is run by the
// //go:generate directives of slurmclient/adapters.go.
//
// Usage:
//
//	go run ./internal/adaptergen -n 44 -releases 25.11–27.05 -jobstate '[]api.V0044JobInfoJobState' -submitline -o v0044.go
//
// -n is the version's number (v0.0.N), -releases the Slurm releases that
// serve it (for the doc comment), -jobstate the Go type of a job record's
// job_state field in that version's generated types (package api).
// -submitline says that the version's job list (its JobInfo) reports
// submit_line: only then is the submit line hashed into a job's Command,
// in the job list and in accounting alike, since a pending job's Command
// must equal that of its later accounting record (v0.0.44 has it; v0.0.42's
// JobInfo has none, though its accounting job has). The output is
// gofmt'd.
package main

import (
	"bytes"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"regexp"
	"text/template"
)

//go:embed adapter.go.tmpl
var adapterTemplate string

// params are the template's fields.
type params struct {
	N        string // "44" for v0.0.44
	Releases string // "25.11–27.05"
	JobState string // "[]api.V0044JobInfoJobState"
	// SubmitLine is true when the version's job list (JobInfo) has
	// submit_line, as its accounting job does: Command then hashes the
	// working directory and the submit line on both sides, else no
	// command on either (a directory alone is none), so that a pending job
	// and its later accounting record get the same key.
	SubmitLine bool
}

var (
	versionRE = regexp.MustCompile(`^[0-9]{2}$`)
	typeRE    = regexp.MustCompile(`^(\[\])?api\.V00[0-9]{2}[A-Za-z]+$`)
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "adaptergen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("adaptergen", flag.ContinueOnError)
	var p params
	fs.StringVar(&p.N, "n", "", "REST API version `number` (44 for v0.0.44)")
	fs.StringVar(&p.Releases, "releases", "", "the Slurm `releases` serving it, for the doc comment")
	fs.StringVar(&p.JobState, "jobstate", "", "Go `type` of a job record's job_state (package api)")
	fs.BoolVar(&p.SubmitLine, "submitline", false, "the version's job list has submit_line: hash it into Command (job list and accounting)")
	out := fs.String("o", "", "output `file`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !versionRE.MatchString(p.N) || p.Releases == "" || !typeRE.MatchString(p.JobState) || *out == "" {
		return errors.New("usage: adaptergen -n NN -releases R -jobstate TYPE [-submitline] -o FILE")
	}
	src, err := render(p)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, src, 0o644)
}

// render executes the template for p and formats the result.
func render(p params) ([]byte, error) {
	t, err := template.New("adapter").Option("missingkey=error").Parse(adapterTemplate)
	if err != nil {
		return nil, fmt.Errorf("adapter.go.tmpl: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("adapter.go.tmpl: %w", err)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("adapter.go.tmpl for v0.0.%s: not Go: %w", p.N, err)
	}
	return src, nil
}
