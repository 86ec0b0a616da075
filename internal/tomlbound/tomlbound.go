// Package tomlbound bounds the work of decoding a TOML file. The TOML
// decoder's time and memory grow with the square of the nesting depth of
// inline tables and arrays (a 50 KB file of "a={b={b=…}}" takes seconds and
// gigabytes), so every TOML file asrpt reads is first read through ReadFile
// (at most MaxSize bytes, regular files only) and scanned by Check (at most
// MaxDepth levels of '{' and '[') before it is decoded.
package tomlbound

import (
	"errors"
	"fmt"
	"io"

	"github.com/asrpt/asrpt/internal/regularfile"
)

const (
	// MaxSize is the largest TOML file read, in bytes (1 MiB). asrpt's
	// TOML files (the sidecar configuration, the bandwidth file) are a
	// few kilobytes.
	MaxSize = 1 << 20
	// MaxDepth is the deepest nesting of inline tables and arrays ('{'
	// and '[', table headers included) accepted, in levels (16), and the
	// most parts of one dotted key ("a.b.c" has 3), which nests tables as
	// deeply and costs the decoder as much. asrpt's files use at most 2.
	MaxDepth = 16
)

var (
	// ErrTooLarge is returned (wrapped) for a file larger than MaxSize.
	ErrTooLarge = errors.New("TOML file too large")
	// ErrTooDeep is returned (wrapped) for nesting deeper than MaxDepth.
	ErrTooDeep = errors.New("TOML nested too deeply")
	// ErrNotRegular is returned (wrapped) for a path that is not a
	// regular file (a FIFO, a device, a directory), which could block or
	// never end.
	ErrNotRegular = regularfile.ErrNotRegular
)

// ReadFile reads the TOML file at path: a regular file of at most MaxSize
// bytes. It stats path before opening it, so that a FIFO is refused
// instead of blocking the open. Errors name path.
func ReadFile(path string) ([]byte, error) {
	f, _, err := regularfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads at most MaxSize bytes from r, failing with ErrTooLarge when r
// holds more. name is used in errors.
func Read(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes (1 MiB)", name, ErrTooLarge, MaxSize)
	}
	return data, nil
}

// Check scans TOML text for nesting of '{' and '[' (outside strings and
// comments) deeper than MaxDepth, and for dotted keys of more than MaxDepth
// parts, in time linear in len(data) and without
// allocating. It returns nil, or the 1-based line where the limit is passed
// and an error wrapping ErrTooDeep (or ErrTooLarge when data is larger than
// MaxSize) that does not name the file, so callers can report it with their
// own file name and line. Syntax errors are left to the decoder.
func Check(data []byte) (line int, err error) {
	if len(data) > MaxSize {
		return 0, fmt.Errorf("%w: larger than %d bytes (1 MiB)", ErrTooLarge, MaxSize)
	}
	line = 1
	depth := 0
	dots := 0 // in the current run of key characters, blanks and strings
	n := len(data)
	for i := 0; i < n; i++ {
		c := data[i]
		switch {
		case c == '.':
			dots++
			if dots >= MaxDepth {
				return line, fmt.Errorf("%w: a dotted key of more than %d parts", ErrTooDeep, MaxDepth)
			}
			continue
		case c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '_' || c == '-' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
		default:
			dots = 0
		}
		switch c {
		case '\n':
			line++
		case '#':
			for i+1 < n && data[i+1] != '\n' {
				i++
			}
		case '"', '\'':
			multi := i+2 < n && data[i+1] == c && data[i+2] == c
			if multi {
				i += 2
			}
			// Skip to the closing quote(s). A basic string ('"')
			// has backslash escapes; a single-line string ends at
			// the end of the line at the latest (a syntax error the
			// decoder reports).
			for i+1 < n {
				i++
				d := data[i]
				if d == '\n' {
					line++
					if !multi {
						break
					}
					continue
				}
				if d == '\\' && c == '"' {
					if i+1 < n && data[i+1] == '\n' {
						line++
					}
					i++
					continue
				}
				if d != c {
					continue
				}
				if !multi {
					break
				}
				if i+2 < n && data[i+1] == c && data[i+2] == c {
					i += 2
					// Up to two more quotes may belong to the
					// string ("""a"""" is `a"`).
					for k := 0; k < 2 && i+1 < n && data[i+1] == c; k++ {
						i++
					}
					break
				}
			}
		case '{', '[':
			depth++
			if depth > MaxDepth {
				return line, fmt.Errorf("%w: more than %d levels of '{' and '['", ErrTooDeep, MaxDepth)
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0, nil
}
