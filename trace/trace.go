// Package trace reads and writes workloads: the project's native trace format
// (CSV and JSON Lines, see FORMAT.md), Slurm accounting as `sacct -P` prints
// it, and the Helios/Philly excerpt CSV; and it generates realistic synthetic
// workloads (see GENERATOR.md).
//
// Every reader returns jobs sorted by submit time, then job id, and reports a
// malformed row as a *ParseError naming the file, the line and the field.
// Readers never look at the clock: times come from the trace.
package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/asrpt/asrpt/job"
)

// Format names a trace format.
type Format string

// The trace formats.
const (
	// Native is the project's own format, CSV or JSON Lines (FORMAT.md).
	Native Format = "native"
	// Sacct is the output of `sacct -P` with a header line.
	Sacct Format = "sacct"
	// Helios is the Helios/Philly excerpt CSV
	// (u_id,user,gpu_num,cpu_num,node_num,interval,run_time,wall_time,new_status).
	Helios Format = "helios"
)

// Formats lists the formats in the order help texts show them.
var Formats = []Format{Native, Sacct, Helios}

// Errors a caller may test for with errors.Is.
var (
	// ErrEmpty is returned when a trace holds no usable job (no rows, or
	// every row skipped).
	ErrEmpty = errors.New("trace: no jobs")
	// ErrFormat is returned for an unknown format name.
	ErrFormat = errors.New("trace: unknown format")
	// ErrHeader is returned when the header line is missing, repeats a
	// column, names an unknown column (native format) or lacks a required one.
	ErrHeader = errors.New("trace: bad header")
	// ErrValue is wrapped by a ParseError whose field holds a value out of
	// range (zero or negative GPUs or run time, a negative time limit, ...).
	ErrValue = errors.New("value out of range")
)

// MaxGPUs is the largest GPU count a trace row may carry; larger counts are
// rejected as malformed so that no later product of GPUs and seconds
// overflows. Jobs larger than the cluster but below this are kept: excluding
// them is the simulator's business.
const MaxGPUs = 1 << 24

// ParseFormat returns the format named s (native, sacct or helios; case
// does not matter). An unknown name gives an error wrapping ErrFormat.
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Formats, f) {
		return f, nil
	}
	return "", fmt.Errorf("%w %q (want native, sacct or helios)", ErrFormat, s)
}

// ParseError is a malformed row or header: File and Line locate it (lines
// count from 1, the header being line 1), Field names the column ("" when the
// row as a whole is wrong) and Err says what is wrong.
type ParseError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: field %s: %v", e.File, e.Line, e.Field, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Options adjusts how a trace is read. The zero value is the default.
type Options struct {
	// Location is the time zone of sacct's local times (Submit, Start,
	// End without an offset); nil means UTC.
	Location *time.Location
	// Delimiter separates sacct fields; 0 means '|' (sacct -P). Use it with
	// `sacct --parsable2 --delimiter=...` when job names contain '|'.
	Delimiter rune
}

// Stats counts what a reader did with the rows of a trace.
type Stats struct {
	// Rows is the number of data rows read (header and blank lines not counted).
	Rows int
	// Jobs is the number of jobs returned.
	Jobs int
	// Steps counts sacct job-step rows (123.batch, 123.0, 123.extern) skipped.
	Steps int
	// NoGPU counts jobs skipped because they use no GPU (CPU jobs).
	NoGPU int
	// Unfinished counts sacct jobs skipped because they were still pending
	// or running (no end time).
	Unfinished int
	// NotRun counts jobs skipped because their run time is zero (cancelled
	// before they started). The native format rejects these instead.
	NotRun int
	// Duplicates counts sacct rows whose job id had been seen before; the
	// last row of an id wins (as plain sacct shows only the last attempt).
	Duplicates int
	// HetComponents counts the rows of heterogeneous jobs' components
	// merged into a job read before (sacct's N+K after the first of N):
	// a heterogeneous job is one job, under its leader's id N, with the
	// GPUs and nodes of all its components (job.MergeHet). NoGPU and
	// NotRun count such a job once.
	HetComponents int
	// Preemptible counts the jobs returned whose comment opted them in to
	// preemption (sacct's Comment field, an asrpt:preempt= word);
	// BadPreemptWords the rows kept whose preempt word was not valid (those
	// jobs are not opted in; a duplicate id's rows count each).
	Preemptible, BadPreemptWords int
}

// Skipped returns the number of rows read but not returned as jobs.
func (s Stats) Skipped() int { return s.Rows - s.Jobs }

func (s Stats) String() string {
	return fmt.Sprintf("%d rows, %d jobs; skipped: %d job steps, %d without GPUs, %d unfinished, %d never ran, %d duplicates",
		s.Rows, s.Jobs, s.Steps, s.NoGPU, s.Unfinished, s.NotRun, s.Duplicates) + s.hetText() + s.preemptText()
}

// ReadFile reads the whole trace at path in format f with default options.
// Native detects CSV or JSON Lines by the file extension (.csv, .jsonl,
// .ndjson, .json) or else by content. A name ending in .gz is decompressed.
// The jobs come sorted by (Submit, ID), stably.
func ReadFile(path string, f Format) ([]job.Job, error) {
	jobs, _, err := ReadFileStats(path, f, Options{})
	return jobs, err
}

// ReadFileStats is ReadFile with options, also returning what was skipped.
func ReadFileStats(path string, f Format, opt Options) ([]job.Job, Stats, error) {
	t, st, err := ReadTableFile(context.Background(), path, f, opt)
	if err != nil {
		return nil, st, err
	}
	return t.Jobs(), st, nil
}

// Read reads a whole trace from r; name is used in errors and, for Native,
// to choose CSV or JSON Lines by its extension.
func Read(r io.Reader, name string, f Format) ([]job.Job, error) {
	jobs, _, err := ReadStats(r, name, f, Options{})
	return jobs, err
}

// ReadStats is Read with options, also returning what was skipped. The
// error wraps ErrEmpty when no job is left, *ParseError for a malformed row,
// ErrHeader for a bad header and ErrFormat for an unknown format.
func ReadStats(r io.Reader, name string, f Format, opt Options) ([]job.Job, Stats, error) {
	t, st, err := ReadTable(r, name, f, opt)
	if err != nil {
		return nil, st, err
	}
	return t.Jobs(), st, nil
}

// ReadTableFile is ReadFileStats into a compact job.Table, for traces of
// millions of jobs: the file is read as a stream, one row at a time, and
// each job is held in its compact form only. Reading stops with ctx's
// error soon after ctx is done.
func ReadTableFile(ctx context.Context, path string, f Format, opt Options) (*job.Table, Stats, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("trace: %w", err)
	}
	defer fh.Close()
	var r io.Reader = ctxReader{ctx, fh}
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, Stats{}, fmt.Errorf("trace: %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	return ReadTable(r, path, f, opt)
}

// ctxReader reads from r until ctx is done, then fails with ctx's error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadTable is ReadStats into a compact job.Table, sorted the same way.
func ReadTable(r io.Reader, name string, f Format, opt Options) (*job.Table, Stats, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var (
		jobs *job.Table
		st   Stats
		err  error
	)
	switch f {
	case Native:
		if isJSONL(name, br) {
			jobs, st, err = readJSONL(br, name)
		} else {
			jobs, st, err = readNativeCSV(br, name)
		}
	case Sacct:
		jobs, st, err = readSacct(br, name, opt)
	case Helios:
		jobs, st, err = readHelios(br, name)
	default:
		_, err = ParseFormat(string(f))
		return nil, Stats{}, err
	}
	if err != nil {
		return nil, st, err
	}
	if jobs == nil {
		jobs = &job.Table{}
	}
	st.Jobs = jobs.Len()
	if jobs.Len() == 0 {
		return nil, st, fmt.Errorf("%s: %w (%v)", name, ErrEmpty, st)
	}
	if !jobs.IsSorted(compareRows) {
		jobs.SortStable(compareRows)
	}
	return jobs, st, nil
}

// isJSONL decides between the native CSV and JSON Lines forms: by the
// extension of name if it has a known one, else by whether the first
// non-blank byte is '{'.
func isJSONL(name string, br *bufio.Reader) bool {
	n := strings.TrimSuffix(strings.ToLower(name), ".gz")
	switch {
	case strings.HasSuffix(n, ".csv"):
		return false
	case strings.HasSuffix(n, ".jsonl"), strings.HasSuffix(n, ".ndjson"), strings.HasSuffix(n, ".json"):
		return true
	}
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if len(b) < i || err != nil {
			return false
		}
		switch b[i-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '\xef', '\xbb', '\xbf': // UTF-8 byte order mark
			continue
		}
		return b[i-1] == '{'
	}
}

// Sort orders jobs by submit time, then by job id in natural order (digit
// runs compared as numbers, so "9" < "10" and "123_4" < "123_10"); stable.
func Sort(jobs []job.Job) {
	slices.SortStableFunc(jobs, compareJobs)
}

// compareRows is compareJobs on the rows a and b of t.
func compareRows(t *job.Table, a, b int) int {
	if sa, sb := t.Submit(a), t.Submit(b); sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	return compareIDs(t.IDBytes(a), t.IDBytes(b))
}

func compareJobs(a, b job.Job) int {
	if a.Submit != b.Submit {
		if a.Submit < b.Submit {
			return -1
		}
		return 1
	}
	return CompareIDs(a.ID, b.ID)
}

// CompareIDs compares two job ids in natural order: runs of decimal digits
// compare by numeric value, everything else byte by byte. It returns -1, 0
// or +1.
func CompareIDs(a, b string) int { return compareIDs(a, b) }

func compareIDs[S ~string | ~[]byte](a, b S) int {
	for len(a) > 0 && len(b) > 0 {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			za, zb := zeros(a[:da]), zeros(b[:db])
			na, nb := a[za:da], b[zb:db]
			if len(na) != len(nb) {
				return cmpInt(len(na), len(nb))
			}
			for i := range len(na) {
				if na[i] != nb[i] {
					return cmpInt(int(na[i]), int(nb[i]))
				}
			}
			if da != db { // same value, fewer leading zeros first
				return cmpInt(da, db)
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func digitRun[S ~string | ~[]byte](s S) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// zeros returns the number of leading '0' bytes of s.
func zeros[S ~string | ~[]byte](s S) int {
	i := 0
	for i < len(s) && s[i] == '0' {
		i++
	}
	return i
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// jobBuf collects the jobs of a reader in a compact job.Table, with the
// line each came from.
type jobBuf struct {
	t     *job.Table
	lines []int32
}

// add appends j, read at line, and returns its index; an error names the
// file and line.
func (b *jobBuf) add(name string, line int, j *job.Job) (int, error) {
	if b.t == nil {
		b.t = &job.Table{}
	}
	if err := b.t.Append(j); err != nil {
		return 0, &ParseError{File: name, Line: line, Err: err}
	}
	b.lines = append(b.lines, int32(min(line, math.MaxInt32)))
	return b.t.Len() - 1, nil
}

// set replaces the job at index i by j, read at line.
func (b *jobBuf) set(name string, line, i int, j *job.Job) error {
	if err := b.t.Set(i, j); err != nil {
		return &ParseError{File: name, Line: line, Err: err}
	}
	b.lines[i] = int32(min(line, math.MaxInt32))
	return nil
}

// keep keeps the jobs for which keep returns true (their indices before
// the call), in order, with their lines.
func (b *jobBuf) keep(keep func(i int) bool) {
	if b.t == nil {
		return
	}
	k := 0
	for i := range b.lines {
		if keep(i) {
			b.lines[k] = b.lines[i]
			k++
		}
	}
	b.lines = b.lines[:k]
	b.t.Keep(keep)
}

// table returns the jobs read (an empty table when none).
func (b *jobBuf) table() *job.Table {
	if b.t == nil {
		return &job.Table{}
	}
	return b.t
}

// unique returns a ParseError for the first line (in file order) whose job
// id an earlier line already had, or nil. It sorts a permutation of the
// jobs by id instead of keeping a map of every id while reading.
func (b *jobBuf) unique(name string) error {
	t := b.table()
	perm := make([]int32, t.Len())
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(x, y int32) int { return bytes.Compare(t.IDBytes(int(x)), t.IDBytes(int(y))) })
	bad, first, run := -1, -1, 0
	for k := 1; k < len(perm); k++ {
		c := perm[k]
		if !bytes.Equal(t.IDBytes(int(perm[k-1])), t.IDBytes(int(c))) {
			run = k
			continue
		}
		// Within equal ids the permutation keeps file order: the run's
		// first job is the id's first line.
		if bad < 0 || b.lines[c] < b.lines[bad] {
			bad, first = int(c), int(perm[run])
		}
	}
	if bad < 0 {
		return nil
	}
	return &ParseError{File: name, Line: int(b.lines[bad]), Field: "id",
		Err: fmt.Errorf("%w: job id %q already on line %d", ErrValue, t.ID(bad), b.lines[first])}
}

// hetText is the part of String on heterogeneous jobs, "" without any.
func (s Stats) hetText() string {
	if s.HetComponents == 0 {
		return ""
	}
	return fmt.Sprintf("; heterogeneous job components merged into their jobs: %d", s.HetComponents)
}

// preemptText is the part of String on preempt words, "" without any.
func (s Stats) preemptText() string {
	if s.Preemptible == 0 && s.BadPreemptWords == 0 {
		return ""
	}
	return fmt.Sprintf("; %d opted in to preemption by their comment, %d with a bad asrpt:preempt= word", s.Preemptible, s.BadPreemptWords)
}
