package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/asrpt/asrpt/internal/slurmtime"
	"github.com/asrpt/asrpt/jobword"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/job/jobstate"
)

// sacct field names this reader interprets, lower-cased. Other fields are
// ignored: admins print many more.
const (
	sJobIDRaw = iota
	sJobID
	sJobName
	sUser
	sAccount
	sPartition
	sQOS
	sSubmit
	sStart
	sEnd
	sElapsed
	sElapsedRaw
	sTimelimit
	sTimelimitRaw
	sNNodes
	sNodeList
	sAllocTRES
	sReqTRES
	sState
	sComment
	sWorkDir
	sSubmitLine
	numSacct
)

var sacctNames = [numSacct]string{
	"JobIDRaw", "JobID", "JobName", "User", "Account", "Partition", "QOS",
	"Submit", "Start", "End", "Elapsed", "ElapsedRaw", "Timelimit", "TimelimitRaw",
	"NNodes", "NodeList", "AllocTRES", "ReqTRES", "State", "Comment",
	"WorkDir", "SubmitLine",
}

// RecommendedSacct is the sacct command line FORMAT.md recommends; add -S
// and -E for the period wanted. SubmitLine comes last: a submit line that
// holds the delimiter (sbatch --wrap "a | b") then reads back whole.
const RecommendedSacct = "sacct -P -X -a -o JobIDRaw,JobID,JobName,User,Account,Partition,QOS,Submit,Start,End,ElapsedRaw,TimelimitRaw,NNodes,NodeList,AllocTRES,ReqTRES,State,WorkDir,SubmitLine"

// sacctLayout is sacct's default time format (local time, no zone).
const sacctLayout = "2006-01-02T15:04:05"

func readSacct(r io.Reader, name string, opt Options) (*job.Table, Stats, error) {
	var st Stats
	loc := opt.Location
	if loc == nil {
		loc = time.UTC
	}
	delim := "|"
	if opt.Delimiter != 0 {
		delim = string(opt.Delimiter)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	// Header: the first non-blank line.
	var head []string
	for sc.Scan() {
		line++
		s := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if s != "" {
			head = strings.Split(s, delim)
			break
		}
	}
	if head == nil {
		if err := sc.Err(); err != nil {
			return nil, st, scanError(name, line, err)
		}
		return nil, st, nil // no header, no rows: ErrEmpty from the caller
	}
	pos := [numSacct]int{}
	for i := range pos {
		pos[i] = -1
	}
	for i, h := range head {
		h = strings.TrimSpace(h)
		for k, n := range sacctNames {
			if strings.EqualFold(h, n) {
				if pos[k] >= 0 {
					return nil, st, &ParseError{File: name, Line: line, Field: n, Err: fmt.Errorf("%w: field %s twice", ErrHeader, n)}
				}
				pos[k] = i
			}
		}
	}
	if err := checkSacctHeader(pos); err != nil {
		return nil, st, &ParseError{File: name, Line: line, Err: err}
	}
	var (
		jobs   jobBuf
		fields []string
	)
	index := map[string]int{}
	hets := hetUnits{}
	in := interner{}
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r\n")
		if strings.TrimSpace(s) == "" {
			continue
		}
		st.Rows++
		fields = splitInto(fields[:0], s, delim)
		if len(fields) > len(head) && pos[sSubmitLine] == len(head)-1 {
			// The submit line is the last field: the delimiters in it are
			// its own (sbatch --wrap "a | b").
			fields[len(head)-1] = strings.Join(fields[len(head)-1:], delim)
			fields = fields[:len(head)]
		}
		if len(fields) != len(head) {
			return nil, st, &ParseError{File: name, Line: line,
				Err: fmt.Errorf("%d fields, header has %d (a %q inside a job name? use sacct --delimiter and Options.Delimiter)", len(fields), len(head), delim)}
		}
		get := func(k int) string {
			if pos[k] < 0 {
				return ""
			}
			return strings.TrimSpace(fields[pos[k]])
		}
		j, skip, field, err := sacctRow(get, pos, loc, in)
		if err != nil {
			return nil, st, &ParseError{File: name, Line: line, Field: field, Err: err}
		}
		if skip == skipStep {
			st.Steps++
			continue
		}
		leader, offset, het, err := hetComponent(get(sJobID))
		if err != nil {
			return nil, st, &ParseError{File: name, Line: line, Field: "JobID", Err: err}
		}
		switch {
		case skip == skipUnfinished:
			st.Unfinished++
			continue
		case het:
			// A component without GPUs or run time may belong to a job
			// with both: the whole job is judged (hetUnits.judge).
		case skip == skipNoGPU:
			st.NoGPU++
			continue
		case skip == skipNotRun:
			st.NotRun++
			continue
		}
		if pos[sComment] >= 0 {
			w := jobword.Parse(get(sComment))
			j.Preemptible = w.Preemptible()
			if w.HasPreempt && w.PreemptErr != nil {
				st.BadPreemptWords++
			}
		}
		if het {
			if err := hets.add(&jobs, index, name, line, leader, offset, &j, &st); err != nil {
				return nil, st, err
			}
			continue
		}
		if i, dup := index[j.ID]; dup {
			st.Duplicates++
			if err := jobs.set(name, line, i, &j); err != nil {
				return nil, st, err
			}
			continue
		}
		i, err := jobs.add(name, line, &j)
		if err != nil {
			return nil, st, err
		}
		index[j.ID] = i
	}
	if err := sc.Err(); err != nil {
		return nil, st, scanError(name, line+1, err)
	}
	hets.judge(&jobs, index, &st)
	t := jobs.table()
	for i := range t.Len() {
		if t.Preemptible(i) {
			st.Preemptible++
		}
	}
	return t, st, nil
}

func scanError(name string, line int, err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return &ParseError{File: name, Line: line, Err: fmt.Errorf("line longer than %d bytes", maxLine)}
	}
	return fmt.Errorf("trace: %s: %w", name, err)
}

func checkSacctHeader(pos [numSacct]int) error {
	var missing []string
	if pos[sJobIDRaw] < 0 && pos[sJobID] < 0 {
		missing = append(missing, "JobID or JobIDRaw")
	}
	for _, k := range []int{sJobName, sUser, sSubmit} {
		if pos[k] < 0 {
			missing = append(missing, sacctNames[k])
		}
	}
	if pos[sElapsedRaw] < 0 && pos[sElapsed] < 0 && (pos[sStart] < 0 || pos[sEnd] < 0) {
		missing = append(missing, "Start and End, or Elapsed, or ElapsedRaw")
	}
	if pos[sAllocTRES] < 0 && pos[sReqTRES] < 0 {
		missing = append(missing, "AllocTRES or ReqTRES")
	}
	if missing != nil {
		return fmt.Errorf("%w: sacct header lacks %s (is it sacct -P output with a header?)", ErrHeader, strings.Join(missing, "; "))
	}
	return nil
}

type skipReason int

const (
	keep skipReason = iota
	skipStep
	skipUnfinished
	skipNoGPU
	skipNotRun
)

// sacctRow converts one sacct row. It parses every present field first, so
// that a malformed value is an error even on a row that would be skipped;
// field names the sacct field of an error.
func sacctRow(get func(int) string, pos [numSacct]int, loc *time.Location, in interner) (j job.Job, skip skipReason, field string, err error) {
	idField := sJobIDRaw
	id := get(sJobIDRaw)
	if id == "" && pos[sJobID] >= 0 {
		idField, id = sJobID, get(sJobID)
	}
	if pos[sJobIDRaw] < 0 {
		idField = sJobID
	}
	if id == "" {
		return j, 0, sacctNames[idField], errors.New("empty job id")
	}
	if strings.Contains(id, ".") || strings.Contains(get(sJobID), ".") {
		return j, skipStep, "", nil
	}
	j.ID = strings.Clone(id)
	if j.ArrayJobID, err = arrayParent(get(sJobID)); err != nil {
		return j, 0, "JobID", err
	}
	j.ArrayJobID = in.get(j.ArrayJobID)
	j.Name = strings.Clone(get(sJobName))
	j.User = in.get(get(sUser))
	j.Account = in.get(get(sAccount))
	j.Partition = in.get(get(sPartition))
	j.QOS = in.get(get(sQOS))
	state := get(sState)
	if i := strings.IndexByte(state, ' '); i >= 0 { // "CANCELLED by 1234"
		state = state[:i]
	}
	j.State = in.get(strings.ToUpper(strings.TrimRight(state, "+")))

	submit, known, err := parseSacctTime("submit time", get(sSubmit), loc)
	if err != nil || !known {
		if err == nil {
			err = errors.New("submit time unknown")
		}
		return j, 0, "Submit", err
	}
	j.Submit = submit
	start, startKnown, err := parseSacctTime("start time", get(sStart), loc)
	if err != nil {
		return j, 0, "Start", err
	}
	end, endKnown, err := parseSacctTime("end time", get(sEnd), loc)
	if err != nil {
		return j, 0, "End", err
	}
	runKnown := false
	switch {
	case get(sElapsedRaw) != "":
		v := get(sElapsedRaw)
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			return j, 0, "ElapsedRaw", fmt.Errorf("%q is not a whole number of seconds", v)
		}
		if n < 0 {
			return j, 0, "ElapsedRaw", fmt.Errorf("%w: %d s, want ≥ 0", ErrValue, n)
		}
		if err := checkDuration("run time", float64(n)); err != nil {
			return j, 0, "ElapsedRaw", err
		}
		j.RunTime, runKnown = float64(n), true
	case get(sElapsed) != "":
		s, unlimited, perr := slurmtime.Parse(get(sElapsed), false)
		if perr != nil || unlimited {
			if perr == nil {
				perr = fmt.Errorf("%q is not an elapsed time", get(sElapsed))
			}
			return j, 0, "Elapsed", perr
		}
		if err := checkDuration("run time", s); err != nil {
			return j, 0, "Elapsed", err
		}
		j.RunTime, runKnown = s, true
	case startKnown && endKnown:
		if end < start {
			return j, 0, "End", fmt.Errorf("%w: end %s before start %s", ErrValue, get(sEnd), get(sStart))
		}
		if err := checkDuration("run time End−Start", end-start); err != nil {
			return j, 0, "End", err
		}
		j.RunTime, runKnown = end-start, true
	}

	switch {
	case get(sTimelimitRaw) != "":
		j.TimeLimit = parseTimelimit(get(sTimelimitRaw), true)
		if j.TimeLimit < 0 {
			return j, 0, "TimelimitRaw", fmt.Errorf("%q is not a time limit in minutes", get(sTimelimitRaw))
		}
		j.TimeLimit = sacctLimit(j.TimeLimit)
	case get(sTimelimit) != "":
		j.TimeLimit = parseTimelimit(get(sTimelimit), false)
		if j.TimeLimit < 0 {
			return j, 0, "Timelimit", fmt.Errorf("%q is not a time limit ([D-]HH:MM:SS, MM:SS, minutes, UNLIMITED)", get(sTimelimit))
		}
		j.TimeLimit = sacctLimit(j.TimeLimit)
	}

	switch {
	case get(sNNodes) != "":
		if j.Nodes, err = parseCount(get(sNNodes), false); err != nil {
			return j, 0, "NNodes", err
		}
	case get(sNodeList) != "":
		if j.Nodes, err = countHosts(get(sNodeList)); err != nil {
			return j, 0, "NodeList", err
		}
	}

	tresField := sAllocTRES
	tres := get(sAllocTRES)
	if tres == "" {
		tresField, tres = sReqTRES, get(sReqTRES)
	}
	if tresField == sReqTRES && pos[sReqTRES] < 0 {
		tresField = sAllocTRES
	}
	j.GPUs, err = tresGPUs(tres)
	if err != nil {
		return j, 0, sacctNames[tresField], err
	}
	j.Command = job.CommandKey(get(sWorkDir), get(sSubmitLine))

	switch {
	case jobstate.Unfinished(j.State), pos[sEnd] >= 0 && !endKnown, !runKnown:
		return j, skipUnfinished, "", nil
	case j.GPUs == 0:
		return j, skipNoGPU, "", nil
	case j.RunTime == 0:
		return j, skipNotRun, "", nil
	}
	return j, keep, "", nil
}

// arrayParent returns the array job id of a JobID as sacct prints it: the
// 123 of an array task 123_4 (or of 123_[5-9], a pending task range), ""
// for a job that is not an array task (123, 8+0). The id before '_' must
// be a decimal number.
func arrayParent(jobID string) (string, error) {
	parent, _, isTask := strings.Cut(jobID, "_")
	if !isTask {
		return "", nil
	}
	if parent == "" || len(parent) > 20 || strings.Trim(parent, "0123456789") != "" {
		return "", fmt.Errorf("%w: array task %.40q: the array job id before '_' is not a number", ErrValue, jobID)
	}
	return parent, nil
}

// parseSacctTime reads a sacct time: YYYY-MM-DDTHH:MM:SS in loc, RFC 3339
// with an offset, or Unix seconds (SLURM_TIME_FORMAT=%s), in 0..MaxSubmit;
// what names the time in errors. "Unknown", "None" and "" give known =
// false.
func parseSacctTime(what, v string, loc *time.Location) (t float64, known bool, err error) {
	t, known, err = parseSacctTimeAny(v, loc)
	if err == nil && known {
		if err := checkTime(what, t); err != nil {
			return 0, false, err
		}
	}
	return t, known, err
}

// parseSacctTimeAny is parseSacctTime without the range check.
func parseSacctTimeAny(v string, loc *time.Location) (t float64, known bool, err error) {
	switch v {
	case "", "Unknown", "None", "N/A":
		return 0, false, nil
	}
	if digitRun(v) == len(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("time %q out of range", v)
		}
		return float64(n), true, nil
	}
	tm, err := time.ParseInLocation(sacctLayout, v, loc)
	if err != nil {
		tm, err = time.Parse(time.RFC3339, v)
	}
	if err != nil {
		return 0, false, fmt.Errorf("time %q is not YYYY-MM-DDTHH:MM:SS", v)
	}
	return float64(tm.Unix()), true, nil
}

// parseTimelimit reads a Timelimit (Slurm time syntax) or, when raw, a
// TimelimitRaw (minutes). UNLIMITED, Partition_Limit, INVALID and empty
// give 0 (no limit known); a malformed value gives -1.
func parseTimelimit(v string, raw bool) float64 {
	switch strings.ToUpper(v) {
	case "", "UNLIMITED", "INFINITE", "PARTITION_LIMIT", "INVALID", "NONE":
		return 0
	}
	if raw {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return -1
		}
		if n == math.MaxUint32 || n == math.MaxUint32-1 { // INFINITE / NO_VAL
			return 0
		}
		return float64(n) * 60
	}
	s, unlimited, err := slurmtime.Parse(v, true)
	if err != nil {
		return -1
	}
	if unlimited {
		return 0
	}
	return s
}

// tresGPUs returns the GPU count of a TRES string such as
// "cpu=8,mem=64G,node=1,gres/gpu:a100=2,gres/gpu=2": the untyped gres/gpu
// count when present, else the sum of the typed gres/gpu:TYPE counts (sacct
// lists both for typed requests; summing only typed ones avoids counting
// twice). No GPU entry gives 0.
func tresGPUs(tres string) (int, error) {
	untyped, typed := -1, 0
	for len(tres) > 0 {
		item := tres
		if i := strings.IndexByte(tres, ','); i >= 0 {
			item, tres = tres[:i], tres[i+1:]
		} else {
			tres = ""
		}
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || (k != "gres/gpu" && !strings.HasPrefix(k, "gres/gpu:")) {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxGPUs {
			return 0, fmt.Errorf("%s=%q is not a GPU count in 0..%d", k, v, MaxGPUs)
		}
		if k == "gres/gpu" {
			untyped = n
		} else {
			typed += n
			if typed > MaxGPUs {
				return 0, fmt.Errorf("%w: more than %d GPUs", ErrValue, MaxGPUs)
			}
		}
	}
	if untyped >= 0 {
		return untyped, nil
	}
	return typed, nil
}

// countHosts counts the hosts of a Slurm hostlist such as
// "gpu[01-04,07],login1" without expanding it. "None assigned" and ""
// count 0.
func countHosts(list string) (int, error) {
	if list == "" || strings.HasPrefix(list, "None") {
		return 0, nil
	}
	total := 0
	depth, startExpr := 0, 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			switch list[i] {
			case '[':
				depth++
				continue
			case ']':
				depth--
				if depth < 0 {
					return 0, fmt.Errorf("unbalanced ']' in %q", list)
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if depth != 0 {
			return 0, fmt.Errorf("unbalanced '[' in %q", list)
		}
		n, err := countHostExpr(list[startExpr:i])
		if err != nil {
			return 0, err
		}
		total += n
		if total > MaxGPUs {
			return 0, fmt.Errorf("%w: more than %d hosts", ErrValue, MaxGPUs)
		}
		startExpr = i + 1
	}
	return total, nil
}

// countHostExpr counts one host expression: the product of its bracket
// groups' sizes, e.g. "rack[1-2]-n[1-4]" is 8.
func countHostExpr(e string) (int, error) {
	if e == "" {
		return 0, fmt.Errorf("empty host name in host list")
	}
	n := 1
	for {
		i := strings.IndexByte(e, '[')
		if i < 0 {
			return n, nil
		}
		k := strings.IndexByte(e[i:], ']')
		if k < 0 {
			return 0, fmt.Errorf("unbalanced '[' in %q", e)
		}
		group := e[i+1 : i+k]
		e = e[i+k+1:]
		size := 0
		for r := range strings.SplitSeq(group, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			a, err1 := strconv.ParseUint(lo, 10, 32)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.ParseUint(hi, 10, 32)
			}
			if err1 != nil || err2 != nil || b < a {
				return 0, fmt.Errorf("bad host range %q", r)
			}
			if b-a >= MaxGPUs {
				return 0, fmt.Errorf("%w: host range %q too large", ErrValue, r)
			}
			size += int(b-a) + 1
			if size > MaxGPUs {
				return 0, fmt.Errorf("%w: more than %d hosts", ErrValue, MaxGPUs)
			}
		}
		n *= size
		if n > MaxGPUs {
			return 0, fmt.Errorf("%w: more than %d hosts", ErrValue, MaxGPUs)
		}
	}
}

// splitInto splits s at sep, reusing dst.
func splitInto(dst []string, s, sep string) []string {
	for {
		i := strings.Index(s, sep)
		if i < 0 {
			return append(dst, s)
		}
		dst = append(dst, s[:i])
		s = s[i+len(sep):]
	}
}

// sacctLimit returns a time limit from accounting, seconds, or 0 (none
// known) when it exceeds MaxRunTime: sites set partitions' MaxTime to years
// to mean "no limit", and such a limit tells nothing about a job's run, so
// it does not make a whole history unreadable.
func sacctLimit(s float64) float64 {
	if s > MaxRunTime {
		return 0
	}
	return s
}
