package slurmconf

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a configuration, located by file and
// line. Warnings describe configurations Slurm accepts but that asrpt models
// only approximately (or that Slurm itself only warns about); errors are
// configurations Slurm rejects or that would make asrpt's model wrong.
type Problem struct {
	File string `json:"file"`
	// Line is 1-based; 0 when the problem concerns the whole file.
	Line int `json:"line,omitempty"`
	// Field is the key the problem is about, as Slurm spells it; may be
	// empty.
	Field   string `json:"field,omitempty"`
	Msg     string `json:"msg"`
	Warning bool   `json:"warning,omitempty"`
}

// Error formats the problem as "file:line: field: msg".
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is a list of problems in the order they were found.
type Problems []Problem

func (ps *Problems) add(file string, line int, field, format string, args ...any) {
	*ps = append(*ps, Problem{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (ps *Problems) warn(file string, line int, field, format string, args ...any) {
	*ps = append(*ps, Problem{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Warning: true})
}

// Errors returns the problems that are not warnings.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// Err joins every problem that is not a warning into one error (each
// element a Problem, usable with errors.As), or returns nil if there is
// none.
func (ps Problems) Err() error {
	var errs []error
	for _, p := range ps {
		if !p.Warning {
			errs = append(errs, p)
		}
	}
	return errors.Join(errs...)
}

// Sort orders problems by file, then line, keeping the order of problems on
// one line.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
}
