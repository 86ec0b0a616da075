package slurmconf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/asrpt/asrpt/internal/regularfile"
)

// Limits that keep parsing bounded on hostile input.
const (
	// MaxFileSize is the largest configuration file read, in bytes.
	MaxFileSize = 16 << 20
	// MaxLineLen is the longest logical line (after joining continuation
	// lines), in bytes.
	MaxLineLen = 1 << 20
	// MaxIncludeDepth is how deep Include directives may nest.
	MaxIncludeDepth = 16
	// maxIncludedFiles bounds the files one parse may pull in.
	maxIncludedFiles = 1024
)

// KV is one key=value pair of a configuration line. Key is as written; use
// strings.EqualFold or Line.Get to match it, since Slurm keys are
// case-insensitive.
type KV struct {
	Key   string
	Op    string // "" for "=", or "+", "-", "*", "/" for "+=" and friends
	Value string
}

// Line is one logical line of a Slurm configuration file: its key=value
// pairs in order, and where it starts.
type Line struct {
	File  string
	Line  int
	Pairs []KV
}

// Get returns the value of the last pair whose key matches key
// case-insensitively, and whether there was one.
func (l *Line) Get(key string) (string, bool) {
	for i := len(l.Pairs) - 1; i >= 0; i-- {
		if strings.EqualFold(l.Pairs[i].Key, key) {
			return l.Pairs[i].Value, true
		}
	}
	return "", false
}

// Source resolves Include directives: it reads files and expands glob
// patterns. A nil Source makes every Include a problem, which keeps the
// Parse functions pure.
type Source interface {
	ReadFile(path string) ([]byte, error)
	Glob(pattern string) ([]string, error)
}

// OSSource reads from the local file system.
type OSSource struct{}

// ErrNotRegular is returned (wrapped) by OSSource.ReadFile for a path that
// is not a regular file: a FIFO or device could block the read forever.
var ErrNotRegular = regularfile.ErrNotRegular

// ReadFile reads path, refusing files larger than MaxFileSize and paths that
// are not regular files. It stats path before opening it, since opening a
// FIFO blocks until a writer comes.
func (OSSource) ReadFile(path string) ([]byte, error) {
	f, _, err := regularfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, MaxFileSize)
	}
	return b, nil
}

// Glob expands pattern with filepath.Glob.
func (OSSource) Glob(pattern string) ([]string, error) { return filepath.Glob(pattern) }

// lexer turns files into Lines, following Include directives.
type lexer struct {
	src      Source
	problems *Problems
	lines    []Line
	files    int
	// vars replaces %c in Include paths; set from ClusterName as it is seen.
	clusterName string
}

// lexFile lexes data as the file name (which Include paths are resolved
// against) at the given include depth, appending lines to l.lines.
func (l *lexer) lexFile(name string, data io.Reader, depth int, stack []string) {
	l.files++
	cr := &countingReader{r: io.LimitReader(data, MaxFileSize+1)}
	br := bufio.NewReaderSize(cr, 64<<10)
	defer func() {
		if cr.n > MaxFileSize {
			l.problems.add(name, 0, "", "file larger than %d bytes; the rest is ignored", MaxFileSize)
		}
	}()
	lineNo := 0
	var logical []byte
	start := 0
	for {
		raw, err := readLine(br, MaxLineLen+1)
		if err != nil && !errors.Is(err, io.EOF) {
			l.problems.add(name, lineNo+1, "", "read: %v", err)
			return
		}
		if raw == nil && errors.Is(err, io.EOF) {
			if logical != nil {
				l.logicalLine(name, start, string(logical), depth, stack)
			}
			return
		}
		lineNo++
		if len(raw) > MaxLineLen {
			l.problems.add(name, lineNo, "", "line longer than %d bytes", MaxLineLen)
			// Skip the rest of the over-long physical line.
			for err == nil && len(raw) > 0 && raw[len(raw)-1] != '\n' {
				raw, err = readLine(br, MaxLineLen+1)
			}
			logical = nil
			continue
		}
		text := stripComment(strings.TrimRight(string(raw), "\r\n"))
		if logical == nil {
			start = lineNo
		}
		if continued(text) {
			logical = append(logical, text[:len(text)-1]...)
			if len(logical) > MaxLineLen {
				l.problems.add(name, start, "", "continued line longer than %d bytes", MaxLineLen)
				logical = nil
			}
			if errors.Is(err, io.EOF) {
				l.logicalLine(name, start, string(logical), depth, stack)
				return
			}
			continue
		}
		full := text
		if logical != nil {
			full = string(logical) + text
			logical = nil
		}
		l.logicalLine(name, start, full, depth, stack)
		if errors.Is(err, io.EOF) {
			return
		}
	}
}

// readLine reads up to and including '\n', returning at most limit bytes
// (the rest of a longer line is left for the next call).
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		out = append(out, frag...)
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			if len(out) == 0 && err != nil {
				return nil, err
			}
			return out, err
		}
		if len(out) >= limit {
			return out, nil
		}
	}
}

// stripComment removes a '#' comment. As in Slurm's parser, "\#" is a
// literal '#', and quotes do not protect a '#'.
func stripComment(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && s[i+1] == '#' {
			b.WriteByte('#')
			i++
			continue
		}
		if c == '#' {
			break
		}
		b.WriteByte(c)
	}
	return b.String()
}

// continued reports whether s ends with an odd number of backslashes, which
// joins the next physical line to it.
func continued(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// logicalLine handles one joined line: an Include directive or key=value
// pairs.
func (l *lexer) logicalLine(name string, lineNo int, text string, depth int, stack []string) {
	trimmed := strings.TrimLeft(text, " \t")
	if trimmed == "" {
		return
	}
	if len(trimmed) > 7 && strings.EqualFold(trimmed[:7], "include") && (trimmed[7] == ' ' || trimmed[7] == '\t') {
		rest := strings.TrimLeft(trimmed[7:], " \t")
		file, leftover, _ := strings.Cut(strings.ReplaceAll(rest, "\t", " "), " ")
		l.include(name, lineNo, file, depth, stack)
		if strings.TrimSpace(leftover) == "" {
			return
		}
		trimmed = leftover
	}
	pairs, err := splitPairs(trimmed)
	if err != nil {
		l.problems.add(name, lineNo, "", "%v", err)
	}
	if len(pairs) == 0 {
		return
	}
	for _, p := range pairs {
		if strings.EqualFold(p.Key, "ClusterName") {
			l.clusterName = p.Value
		}
	}
	l.lines = append(l.lines, Line{File: name, Line: lineNo, Pairs: pairs})
}

// include resolves and lexes an Include directive. A relative path is
// taken relative to the directory of the including file; a pattern with
// glob characters includes every match in lexical order; "%c" is replaced
// by the ClusterName seen so far.
func (l *lexer) include(from string, lineNo int, file string, depth int, stack []string) {
	if file == "" {
		l.problems.add(from, lineNo, "Include", "no file name")
		return
	}
	if l.src == nil {
		l.problems.add(from, lineNo, "Include", "%q not followed: no file source (use Load)", file)
		return
	}
	if depth >= MaxIncludeDepth {
		l.problems.add(from, lineNo, "Include", "%q: includes nested deeper than %d", file, MaxIncludeDepth)
		return
	}
	file = strings.ReplaceAll(file, "%c", l.clusterName)
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(from), file)
	}
	paths := []string{file}
	if strings.ContainsAny(file, "*?[") {
		m, err := l.src.Glob(file)
		if err != nil {
			l.problems.add(from, lineNo, "Include", "bad pattern %q: %v", file, err)
			return
		}
		if len(m) == 0 {
			l.problems.add(from, lineNo, "Include", "pattern %q matches no file", file)
			return
		}
		sort.Strings(m)
		paths = m
	}
	for _, p := range paths {
		for _, s := range stack {
			if s == p {
				l.problems.add(from, lineNo, "Include", "%q includes itself", p)
				return
			}
		}
		if l.files >= maxIncludedFiles {
			l.problems.add(from, lineNo, "Include", "more than %d files included", maxIncludedFiles)
			return
		}
		data, err := l.src.ReadFile(p)
		if err != nil {
			l.problems.add(from, lineNo, "Include", "%v", err)
			continue
		}
		l.lexFile(p, bytes.NewReader(data), depth+1, append(stack[:len(stack):len(stack)], p))
	}
}

// splitPairs splits a line into key=value pairs with Slurm's rules: a key is
// letters, digits, '_' or '.', optionally followed by one of "+-*/" before
// '='; blanks may surround '='; a value is either "double quoted" (the
// quotes are removed; it may hold blanks) or runs to the next blank. Pairs
// are separated by blanks. It returns the pairs it could read and an error
// naming the first text it could not.
func splitPairs(s string) ([]KV, error) {
	var pairs []KV
	i := 0
	n := len(s)
	for {
		for i < n && isBlank(s[i]) {
			i++
		}
		if i >= n {
			return pairs, nil
		}
		ks := i
		for i < n && isKeyChar(s[i]) {
			i++
		}
		key := s[ks:i]
		op := ""
		if i < n && strings.IndexByte("+-*/", s[i]) >= 0 && i+1 < n && s[i+1] == '=' {
			op = s[i : i+1]
			i++
		}
		j := i
		for j < n && isBlank(s[j]) {
			j++
		}
		if key == "" || j >= n || s[j] != '=' {
			return pairs, fmt.Errorf("cannot parse %q: want key=value", clip(s[ks:]))
		}
		i = j + 1
		for i < n && isBlank(s[i]) {
			i++
		}
		var val string
		if i < n && s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return pairs, fmt.Errorf("key %s: unterminated quote", key)
			}
			val = s[i+1 : i+1+end]
			i = i + 1 + end + 1
			if i < n && !isBlank(s[i]) {
				return pairs, fmt.Errorf("key %s: text %q after closing quote", key, clip(s[i:]))
			}
		} else {
			vs := i
			for i < n && !isBlank(s[i]) {
				i++
			}
			val = s[vs:i]
		}
		pairs = append(pairs, KV{Key: key, Op: op, Value: val})
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func isKeyChar(c byte) bool {
	return c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// clip shortens s for error messages.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// lex lexes r as file name, following Includes through src.
func lex(r io.Reader, name string, src Source, problems *Problems) []Line {
	l := &lexer{src: src, problems: problems}
	l.lexFile(name, r, 0, []string{name})
	return l.lines
}
