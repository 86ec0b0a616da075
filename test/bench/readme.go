package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/asrpt/asrpt/internal/atomicfile"
)

// The markers around the generated block in the README, each on a line of
// its own.
const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

// ErrMarkers is returned (wrapped) when a document does not hold exactly
// one begin marker followed by one end marker, each on its own line.
var ErrMarkers = errors.New("bench markers")

// blockBounds returns where the generated block of doc starts (just after
// the begin marker's line) and ends (at the start of the end marker's
// line).
func blockBounds(doc string) (start, end int, err error) {
	for _, m := range []string{beginMarker, endMarker} {
		if n := strings.Count(doc, m); n != 1 {
			return 0, 0, fmt.Errorf("%w: %q found %d times, want once", ErrMarkers, m, n)
		}
	}
	b := strings.Index(doc, beginMarker)
	e := strings.Index(doc, endMarker)
	if e < b {
		return 0, 0, fmt.Errorf("%w: %q before %q", ErrMarkers, endMarker, beginMarker)
	}
	start = b + len(beginMarker)
	if !strings.HasPrefix(doc[start:], "\n") || (b > 0 && doc[b-1] != '\n') {
		return 0, 0, fmt.Errorf("%w: %q not on a line of its own", ErrMarkers, beginMarker)
	}
	start++
	if doc[e-1] != '\n' || !(e+len(endMarker) == len(doc) || doc[e+len(endMarker)] == '\n') {
		return 0, 0, fmt.Errorf("%w: %q not on a line of its own", ErrMarkers, endMarker)
	}
	return start, e, nil
}

// Block returns the text between the markers of doc, the lines after the
// begin marker's line and before the end marker's.
func Block(doc string) (string, error) {
	s, e, err := blockBounds(doc)
	if err != nil {
		return "", err
	}
	return doc[s:e], nil
}

// SpliceBlock returns doc with the text between its markers replaced by
// block (which ends with a newline, or gets one).
func SpliceBlock(doc, block string) (string, error) {
	s, e, err := blockBounds(doc)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(block, "\n") {
		block += "\n"
	}
	return doc[:s] + block + doc[e:], nil
}

// SpliceFile replaces the block between the markers of the file at path
// with block, atomically (internal/atomicfile): on any error, markers
// missing included, the file is left as it was. Errors name path.
func SpliceFile(path, block string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("readme: %w", err)
	}
	out, err := SpliceBlock(string(doc), block)
	if err != nil {
		return fmt.Errorf("readme %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, out)
		return err
	})
}
