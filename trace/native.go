package trace

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/asrpt/asrpt/job"
)

// The native columns, in the order the writers use. FORMAT.md documents them.
const (
	colID = iota
	colSubmit
	colUser
	colName
	colAccount
	colPartition
	colQOS
	colGPUs
	colNodes
	colRunTime
	colTimeLimit
	colState
	colProfile
	colIterations
	colArray
	colCommand
	numCols
)

// Columns are the native column names, indexed by the col constants.
var Columns = [numCols]string{
	"id", "submit", "user", "name", "account", "partition", "qos",
	"gpus", "nodes", "run_time", "time_limit", "state", "profile", "iterations",
	"array_job_id", "command",
}

// requiredCols must be present in every native trace.
var requiredCols = []int{colID, colSubmit, colGPUs, colRunTime}

func colIndex(name string) int {
	for i, c := range Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// interner shares the backing storage of repeated strings (users, accounts,
// states) so that a large trace does not keep one copy per row.
type interner map[string]string

func (in interner) get(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := in[s]; ok {
		return v
	}
	if len(in) >= 1<<16 { // bound the table on adversarial input
		return strings.Clone(s)
	}
	v := strings.Clone(s)
	in[v] = v
	return v
}

// nativeRow builds a job from native field values given as text.
type nativeRow struct {
	j    job.Job
	seen [numCols]bool
	in   interner
}

// set parses one native field. It returns an error without position; the
// caller wraps it in a ParseError.
func (r *nativeRow) set(col int, v string) error {
	v = strings.TrimSpace(v)
	r.seen[col] = true
	j := &r.j
	var err error
	switch col {
	case colID:
		if v == "" {
			return errors.New("empty job id")
		}
		j.ID = strings.Clone(v)
	case colSubmit:
		j.Submit, err = parseSubmit(v)
	case colUser:
		j.User = r.in.get(v)
	case colName:
		j.Name = strings.Clone(v)
	case colAccount:
		j.Account = r.in.get(v)
	case colPartition:
		j.Partition = r.in.get(v)
	case colQOS:
		j.QOS = r.in.get(v)
	case colGPUs:
		j.GPUs, err = parseGPUs(v)
	case colNodes:
		j.Nodes, err = parseCount(v, true)
	case colRunTime:
		j.RunTime, err = parseSeconds(v, false)
		if err == nil && j.RunTime <= 0 {
			err = fmt.Errorf("%w: run time %s s, want > 0", ErrValue, v)
		}
		if err == nil {
			err = checkDuration("run time", j.RunTime)
		}
	case colTimeLimit:
		j.TimeLimit, err = parseSeconds(v, true)
		if err == nil {
			err = checkDuration("time limit", j.TimeLimit)
		}
	case colState:
		j.State = r.in.get(strings.ToUpper(v))
	case colProfile:
		j.Profile = r.in.get(v)
	case colIterations:
		j.Iterations, err = parseSeconds(v, true) // same rules: finite, ≥ 0
		if err == nil {
			err = checkIterations(j.Iterations)
		}
	case colArray:
		j.ArrayJobID = r.in.get(v)
	case colCommand:
		if j.Command, err = job.ParseCommand(v); err != nil {
			return fmt.Errorf("%w: %w", ErrValue, err)
		}
	}
	return err
}

// check validates the fields together once the row is complete; it returns
// the offending column and error.
func (r *nativeRow) check() (int, error) {
	for _, c := range requiredCols {
		if !r.seen[c] {
			return c, errors.New("missing")
		}
	}
	if r.j.Profile != "" && r.j.Iterations <= 0 {
		return colIterations, fmt.Errorf("%w: profile %q needs iterations > 0", ErrValue, r.j.Profile)
	}
	if r.j.Profile == "" && r.j.Iterations > 0 {
		return colProfile, fmt.Errorf("%w: iterations given without a profile", ErrValue)
	}
	return 0, nil
}

// parseSubmit reads Unix seconds (decimal, fraction allowed) or RFC 3339,
// in 0..MaxSubmit.
func parseSubmit(v string) (float64, error) {
	if v == "" {
		return 0, errors.New("empty submit time")
	}
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		if !finite(x) {
			return 0, fmt.Errorf("%w: submit time %q", ErrValue, v)
		}
		return submitIn(x)
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, fmt.Errorf("submit time %q is neither Unix seconds nor RFC 3339", v)
	}
	return submitIn(float64(t.Unix()) + float64(t.Nanosecond())/1e9)
}

// submitIn returns x when it is a submit time in 0..MaxSubmit.
func submitIn(x float64) (float64, error) {
	if err := checkTime("submit time", x); err != nil {
		return 0, err
	}
	return x, nil
}

// parseGPUs reads a GPU count, which must be in 1..MaxGPUs.
func parseGPUs(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("GPU count %q is not an integer", v)
	}
	if n <= 0 || n > MaxGPUs {
		return 0, fmt.Errorf("%w: %d GPUs, want 1..%d", ErrValue, n, MaxGPUs)
	}
	return n, nil
}

// parseCount reads a non-negative integer; empty is 0 when emptyOK.
func parseCount(v string, emptyOK bool) (int, error) {
	if v == "" && emptyOK {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	if n < 0 || n > MaxGPUs {
		return 0, fmt.Errorf("%w: %d, want 0..%d", ErrValue, n, MaxGPUs)
	}
	return n, nil
}

// parseSeconds reads a finite non-negative number; empty is 0 when emptyOK.
func parseSeconds(v string, emptyOK bool) (float64, error) {
	if v == "" {
		if emptyOK {
			return 0, nil
		}
		return 0, errors.New("empty")
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", v)
	}
	if !finite(x) || x < 0 {
		return 0, fmt.Errorf("%w: %s, want a finite number ≥ 0", ErrValue, v)
	}
	return x, nil
}

// readNativeCSV reads the native CSV form.
func readNativeCSV(r io.Reader, name string) (*job.Table, Stats, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var st Stats
	head, err := cr.Read()
	if err == io.EOF {
		return nil, st, nil // empty file: ErrEmpty from the caller
	}
	if err != nil {
		return nil, st, csvError(name, err)
	}
	cols := make([]int, len(head))
	have := make([]bool, numCols)
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		c := colIndex(h)
		if c < 0 {
			return nil, st, &ParseError{File: name, Line: 1, Field: h,
				Err: fmt.Errorf("%w: unknown column %q (known: %s)", ErrHeader, h, strings.Join(Columns[:], ","))}
		}
		if have[c] {
			return nil, st, &ParseError{File: name, Line: 1, Field: h, Err: fmt.Errorf("%w: column %q twice", ErrHeader, h)}
		}
		have[c] = true
		cols[i] = c
	}
	for _, c := range requiredCols {
		if !have[c] {
			return nil, st, &ParseError{File: name, Line: 1, Field: Columns[c], Err: fmt.Errorf("%w: required column %q missing", ErrHeader, Columns[c])}
		}
	}
	var jobs jobBuf
	in := interner{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, st, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		st.Rows++
		if len(rec) != len(cols) {
			return nil, st, &ParseError{File: name, Line: line, Err: fmt.Errorf("%d fields, header has %d", len(rec), len(cols))}
		}
		row := nativeRow{in: in}
		for i, v := range rec {
			if err := row.set(cols[i], v); err != nil {
				l, _ := cr.FieldPos(i)
				return nil, st, &ParseError{File: name, Line: l, Field: Columns[cols[i]], Err: err}
			}
		}
		if c, err := row.check(); err != nil {
			return nil, st, &ParseError{File: name, Line: line, Field: Columns[c], Err: err}
		}
		if _, err := jobs.add(name, line, &row.j); err != nil {
			return nil, st, err
		}
	}
	if err := jobs.unique(name); err != nil {
		return nil, st, err
	}
	return jobs.table(), st, nil
}

// csvError turns an encoding/csv error into a ParseError with its line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{File: name, Line: pe.Line, Err: pe.Err}
	}
	return fmt.Errorf("trace: %s: %w", name, err)
}

// maxLine bounds one JSON Lines record (bytes).
const maxLine = 1 << 20

// readJSONL reads the native JSON Lines form: one object per line with the
// native field names; values are strings or numbers; blank lines are skipped.
func readJSONL(r io.Reader, name string) (*job.Table, Stats, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var (
		st   Stats
		jobs jobBuf
		line int
	)
	in := interner{}
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(b) == 0 {
			continue
		}
		st.Rows++
		var vals [numCols][]byte
		if field, err := scanObject(b, &vals); err != nil {
			return nil, st, &ParseError{File: name, Line: line, Field: field, Err: err}
		}
		row := nativeRow{in: in}
		// Visit fields in column order so that the first error is stable.
		for c := range numCols {
			if vals[c] == nil {
				continue
			}
			v, null, err := jsonScalar(vals[c])
			if err == nil && !null {
				err = row.set(c, v)
			}
			if err != nil {
				return nil, st, &ParseError{File: name, Line: line, Field: Columns[c], Err: err}
			}
		}
		if c, err := row.check(); err != nil {
			return nil, st, &ParseError{File: name, Line: line, Field: Columns[c], Err: err}
		}
		if _, err := jobs.add(name, line, &row.j); err != nil {
			return nil, st, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, st, &ParseError{File: name, Line: line + 1, Err: fmt.Errorf("line longer than %d bytes", maxLine)}
		}
		return nil, st, fmt.Errorf("trace: %s: %w", name, err)
	}
	if err := jobs.unique(name); err != nil {
		return nil, st, err
	}
	return jobs.table(), st, nil
}

// scanObject splits one JSON object into the raw values of the native
// fields. The object must be valid JSON whose values are strings, numbers
// or null; a nested value or an unknown key is an error naming that key.
// A key given twice keeps its last value, as encoding/json does.
func scanObject(b []byte, vals *[numCols][]byte) (field string, err error) {
	if !json.Valid(b) {
		var v map[string]json.RawMessage
		err := json.Unmarshal(b, &v) // for encoding/json's description of the error
		return "", fmt.Errorf("not a JSON object: %w", err)
	}
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return "", errors.New("not a JSON object")
	}
	i = skipSpace(b, i+1)
	for b[i] != '}' {
		end := stringEnd(b, i)
		key, err := jsonString(b[i:end])
		if err != nil {
			return "", err
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // past the ':'
		var vEnd int
		switch b[i] {
		case '"':
			vEnd = stringEnd(b, i)
		case '{', '[':
			return key, errors.New("want a string or a number, got an object or array")
		default:
			vEnd = i
			for vEnd < len(b) && b[vEnd] != ',' && b[vEnd] != '}' && !isSpace(b[vEnd]) {
				vEnd++
			}
		}
		c := colIndex(key)
		if c < 0 {
			return key, fmt.Errorf("%w: unknown field %q (known: %s)", ErrHeader, key, strings.Join(Columns[:], ","))
		}
		vals[c] = b[i:vEnd]
		i = skipSpace(b, vEnd)
		if b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return "", nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just after the JSON string that starts at
// b[i] (a '"'); b is known to be valid JSON.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// jsonString decodes a JSON string literal; one without escapes or
// non-ASCII bytes is converted directly.
func jsonString(raw []byte) (string, error) {
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' || c >= 0x80 {
			var s string
			err := json.Unmarshal(raw, &s)
			return s, err
		}
	}
	return string(inner), nil
}

// jsonScalar returns the text of a JSON string or number; null reports a
// JSON null (treated as an absent field).
func jsonScalar(raw json.RawMessage) (s string, null bool, err error) {
	if len(raw) == 0 {
		return "", true, nil
	}
	switch raw[0] {
	case '"':
		s, err = jsonString(raw)
		return s, false, err
	case 'n':
		return "", true, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw), false, nil
	}
	return "", false, fmt.Errorf("want a string or a number, got %.20s", raw)
}

// WriteCSV writes jobs as a native CSV trace with a header line naming all
// columns up to the last optional one some job fills (array_job_id,
// command, in that order: a trace without them keeps the columns
// it had before they existed).
// Numbers are written exactly (shortest form that reads back to the
// same float64); the reader reads the output back to equal jobs.
func WriteCSV(w io.Writer, jobs []job.Job) error {
	cw := csv.NewWriter(w)
	cols := colArray // without the optional columns
	for i := range jobs {
		j := &jobs[i]
		for c, used := range [...]bool{colArray: j.ArrayJobID != "", colCommand: j.Command != 0} {
			if used {
				cols = max(cols, c+1)
			}
		}
	}
	if err := cw.Write(Columns[:cols]); err != nil {
		return fmt.Errorf("trace: write csv: %w", err)
	}
	rec := make([]string, numCols)
	for i := range jobs {
		csvRecord(&jobs[i], rec)
		if err := cw.Write(rec[:cols]); err != nil {
			return fmt.Errorf("trace: write csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("trace: write csv: %w", err)
	}
	return nil
}

// csvRecord fills rec (numCols fields) with j's native CSV fields.
func csvRecord(j *job.Job, rec []string) {
	rec[colID] = j.ID
	rec[colSubmit] = fmtFloat(j.Submit)
	rec[colUser] = j.User
	rec[colName] = j.Name
	rec[colAccount] = j.Account
	rec[colPartition] = j.Partition
	rec[colQOS] = j.QOS
	rec[colGPUs] = strconv.Itoa(j.GPUs)
	rec[colNodes] = strconv.Itoa(j.Nodes)
	rec[colRunTime] = fmtFloat(j.RunTime)
	rec[colTimeLimit] = fmtFloat(j.TimeLimit)
	rec[colState] = j.State
	rec[colProfile] = j.Profile
	rec[colIterations] = ""
	if j.Iterations != 0 {
		rec[colIterations] = fmtFloat(j.Iterations)
	}
	rec[colArray] = j.ArrayJobID
	rec[colCommand] = job.FormatCommand(j.Command)
}

// CheckJob returns nil when the native reader accepts j as one row, as
// WriteCSV writes it: the same parsing and limits, field by field
// (MaxSubmit, MaxGPUs, MaxRunTime, …), and otherwise the error the reader
// would give, naming the job and the field (wrapping ErrValue for a value
// out of its limits). Writers of traces (asrpt history) use it so as not
// to export a row their own replay refuses. Non-finite numbers are
// refused too.
func CheckJob(j *job.Job) error {
	rec := make([]string, numCols)
	csvRecord(j, rec)
	row := nativeRow{in: interner{}}
	for c, v := range rec {
		if err := row.set(c, v); err != nil {
			return fmt.Errorf("trace: job %q: %s: %w", j.ID, Columns[c], err)
		}
	}
	if c, err := row.check(); err != nil {
		return fmt.Errorf("trace: job %q: %s: %w", j.ID, Columns[c], err)
	}
	return nil
}

// jsonJob is the JSON Lines record; optional fields are omitted when empty.
type jsonJob struct {
	ID         string  `json:"id"`
	Submit     float64 `json:"submit"`
	User       string  `json:"user,omitempty"`
	Name       string  `json:"name,omitempty"`
	Account    string  `json:"account,omitempty"`
	Partition  string  `json:"partition,omitempty"`
	QOS        string  `json:"qos,omitempty"`
	GPUs       int     `json:"gpus"`
	Nodes      int     `json:"nodes,omitempty"`
	RunTime    float64 `json:"run_time"`
	TimeLimit  float64 `json:"time_limit,omitempty"`
	State      string  `json:"state,omitempty"`
	Profile    string  `json:"profile,omitempty"`
	Iterations float64 `json:"iterations,omitempty"`
	ArrayJobID string  `json:"array_job_id,omitempty"`
	Command    string  `json:"command,omitempty"`
}

// WriteJSONL writes jobs as native JSON Lines, one object per job, empty
// optional fields omitted.
func WriteJSONL(w io.Writer, jobs []job.Job) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range jobs {
		j := &jobs[i]
		for _, x := range [...]float64{j.Submit, j.RunTime, j.TimeLimit, j.Iterations} {
			if !finite(x) {
				return fmt.Errorf("trace: write jsonl: job %q: non-finite number", j.ID)
			}
		}
		if err := enc.Encode(jsonJob{j.ID, j.Submit, j.User, j.Name, j.Account, j.Partition, j.QOS,
			j.GPUs, j.Nodes, j.RunTime, j.TimeLimit, j.State, j.Profile, j.Iterations, j.ArrayJobID, job.FormatCommand(j.Command)}); err != nil {
			return fmt.Errorf("trace: write jsonl: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("trace: write jsonl: %w", err)
	}
	return nil
}

// fmtFloat writes x in the shortest decimal form that parses back to x,
// without an exponent for the magnitudes traces hold.
func fmtFloat(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
