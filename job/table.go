package job

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Table holds many jobs compactly, for replays of millions of jobs: each
// job's numbers inline, its id and name (unique or nearly so for most
// jobs) in one byte arena, and its other strings (user, account,
// partition, QOS, state, profile, array id, command: few distinct values) as 32-bit
// handles into a table of distinct strings. A job costs 88 bytes plus its
// id's and name's bytes, and the records hold no pointers, so the garbage collector
// never scans them.
// Records live in fixed-size chunks: appending never copies the records
// already held. Job returns a job as a Job value again.
//
// The zero value is an empty table ready to use. A Table is not safe for
// concurrent writes; concurrent reads (Len, Job, Submit, GPUs, ...) of a
// table no longer written are safe.
type Table struct {
	chunks [][]record
	n      int
	text   []byte            // the ids and names
	strs   []string          // handle → string; handle 0 is ""
	index  map[string]uint32 // string → handle, for the first maxInterned distinct strings
}

// record is one job of a Table. The id is text[idOff : idOff+idLen] and
// the name text[nameOff : nameOff+nameLen]; the other string fields are
// handles into Table.strs.
type record struct {
	submit, runTime, timeLimit, iterations float64
	gpus, nodes                            int32
	idOff, nameOff                         uint32
	user, account, partition, qos          uint32
	state, profile, array, command         uint32
	idLen, nameLen                         uint16
	preemptible                            bool
}

const (
	// TableChunk is the number of records per chunk of a Table (5 MiB).
	TableChunk = 1 << 16
	// maxInterned bounds the distinct strings shared through the index;
	// past it every new string is kept once per job that holds it, so
	// that adversarial input cannot grow the index without bound.
	maxInterned = 1 << 20
	// MaxTableTextBytes bounds the total length of the ids and names of
	// one Table: 4 GiB (offsets are 32-bit).
	MaxTableTextBytes = math.MaxUint32
	// MaxTableIDLen is the longest job id, and job name, a Table holds,
	// bytes.
	MaxTableIDLen = math.MaxUint16
)

// ErrTableLimit marks a job a Table cannot hold: a field past the range
// of its compact form (GPUs or nodes above 2^31−1, an id longer than
// MaxTableIDLen bytes, ids and names over MaxTableTextBytes in all, or
// more than 2^32 distinct strings).
var ErrTableLimit = errors.New("job table limit")

// TableOf returns a Table holding jobs, in order.
func TableOf(jobs []Job) (*Table, error) {
	t := &Table{}
	for i := range jobs {
		if err := t.Append(&jobs[i]); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Len returns the number of jobs held.
func (t *Table) Len() int { return t.n }

func (t *Table) rec(i int) *record { return &t.chunks[i/TableChunk][i%TableChunk] }

// Append adds a copy of j at the end. An error (wrapping ErrTableLimit,
// naming the job) leaves the table as it was.
func (t *Table) Append(j *Job) error {
	if t.n >= math.MaxInt32 {
		return fmt.Errorf("job %.64q: %w: more than %d jobs", j.ID, ErrTableLimit, math.MaxInt32)
	}
	r, err := t.encode(j)
	if err != nil {
		return err
	}
	if t.n%TableChunk == 0 {
		t.chunks = append(t.chunks, make([]record, 0, TableChunk))
	}
	c := len(t.chunks) - 1
	t.chunks[c] = append(t.chunks[c], r)
	t.n++
	return nil
}

// Set replaces the job at index i with a copy of j; an error leaves it as
// it was.
func (t *Table) Set(i int, j *Job) error {
	r, err := t.encode(j)
	if err != nil {
		return err
	}
	*t.rec(i) = r
	return nil
}

func (t *Table) encode(j *Job) (record, error) {
	limit := func(what string, v any) (record, error) {
		return record{}, fmt.Errorf("job %.64q: %w: %s %v", j.ID, ErrTableLimit, what, v)
	}
	if j.GPUs < math.MinInt32 || j.GPUs > math.MaxInt32 {
		return limit("GPUs", j.GPUs)
	}
	if j.Nodes < math.MinInt32 || j.Nodes > math.MaxInt32 {
		return limit("nodes", j.Nodes)
	}
	if len(j.ID) > MaxTableIDLen {
		return limit("id length", len(j.ID))
	}
	if len(j.Name) > MaxTableIDLen {
		return limit("name length", len(j.Name))
	}
	if len(t.text)+len(j.ID)+len(j.Name) > MaxTableTextBytes {
		return limit("ids and names in all, bytes", len(t.text)+len(j.ID)+len(j.Name))
	}
	if len(t.strs)+9 > math.MaxUint32 {
		return limit("distinct strings", len(t.strs))
	}
	r := record{submit: j.Submit, runTime: j.RunTime, timeLimit: j.TimeLimit, iterations: j.Iterations,
		gpus: int32(j.GPUs), nodes: int32(j.Nodes), idOff: uint32(len(t.text)), idLen: uint16(len(j.ID)),
		nameOff: uint32(len(t.text) + len(j.ID)), nameLen: uint16(len(j.Name)),
		user: t.handle(j.User), account: t.handle(j.Account),
		partition: t.handle(j.Partition), qos: t.handle(j.QOS), state: t.handle(j.State), profile: t.handle(j.Profile),
		array: t.handle(j.ArrayJobID), preemptible: j.Preemptible,
		command: t.handle(FormatCommand(j.Command))}
	t.text = append(t.text, j.ID...)
	t.text = append(t.text, j.Name...)
	return r, nil
}

// handle returns the handle of s, adding it to the strings when new.
func (t *Table) handle(s string) uint32 {
	if s == "" {
		return 0
	}
	if h, ok := t.index[s]; ok {
		return h
	}
	if len(t.strs) == 0 {
		t.strs = append(t.strs, "")
	}
	h := uint32(len(t.strs))
	s = string([]byte(s)) // a copy: s may share the storage of a larger buffer
	t.strs = append(t.strs, s)
	if t.index == nil {
		t.index = map[string]uint32{}
	}
	if len(t.index) < maxInterned {
		t.index[s] = h
	}
	return h
}

// command reads back a Command kept as its FormatCommand text (a handle:
// the record stays 88 bytes, and commands repeat).
func (t *Table) command(h uint32) uint64 {
	c, _ := ParseCommand(t.str(h)) // written by FormatCommand
	return c
}

func (t *Table) str(h uint32) string {
	if h == 0 {
		return ""
	}
	return t.strs[h]
}

// Job returns the job at index i as a Job value. Its id and name are new
// strings; its other strings are shared with the table.
func (t *Table) Job(i int) Job {
	r := t.rec(i)
	return Job{ID: t.ID(i), Submit: r.submit, User: t.str(r.user), Name: t.textOf(r.nameOff, r.nameLen),
		Account: t.str(r.account), Partition: t.str(r.partition),
		QOS: t.str(r.qos), GPUs: int(r.gpus), Nodes: int(r.nodes), RunTime: r.runTime, TimeLimit: r.timeLimit,
		State: t.str(r.state), Profile: t.str(r.profile), Iterations: r.iterations, Preemptible: r.preemptible,
		ArrayJobID: t.str(r.array), Command: t.command(r.command)}
}

// Jobs returns every job as a slice of Job values, in order.
func (t *Table) Jobs() []Job {
	out := make([]Job, t.n)
	for i := range out {
		out[i] = t.Job(i)
	}
	return out
}

// Submit returns the submit time of job i, Unix seconds.
func (t *Table) Submit(i int) float64 { return t.rec(i).submit }

// GPUs returns the GPUs of job i.
func (t *Table) GPUs(i int) int { return int(t.rec(i).gpus) }

// RunTime returns the run time of job i, seconds.
func (t *Table) RunTime(i int) float64 { return t.rec(i).runTime }

// SetRunTime sets the run time of job i, seconds.
func (t *Table) SetRunTime(i int, s float64) { t.rec(i).runTime = s }

// Preemptible reports whether job i opted in to preemption
// (Job.Preemptible).
func (t *Table) Preemptible(i int) bool { return t.rec(i).preemptible }

// Profiled reports whether job i is profiled (Job.Profiled).
func (t *Table) Profiled(i int) bool {
	r := t.rec(i)
	return r.profile != 0 && r.iterations > 0
}

// ID returns the id of job i (a new string).
func (t *Table) ID(i int) string {
	r := t.rec(i)
	return t.textOf(r.idOff, r.idLen)
}

func (t *Table) textOf(off uint32, n uint16) string {
	if n == 0 {
		return ""
	}
	return string(t.text[off : off+uint32(n)])
}

// User returns the user of job i.
func (t *Table) User(i int) string { return t.str(t.rec(i).user) }

// Account returns the account of job i.
func (t *Table) Account(i int) string { return t.str(t.rec(i).account) }

// IDBytes returns the id of job i without a copy; the bytes must not be
// changed, and are valid while the table is not appended to.
func (t *Table) IDBytes(i int) []byte {
	r := t.rec(i)
	return t.text[r.idOff : r.idOff+uint32(r.idLen) : r.idOff+uint32(r.idLen)]
}

// Keep keeps the jobs for which keep returns true, in order, and drops the
// others; it returns how many it dropped. The dropped jobs' ids and names
// stay in the arena.
func (t *Table) Keep(keep func(i int) bool) int {
	k := 0
	for i := 0; i < t.n; i++ {
		if keep(i) {
			if k != i {
				*t.rec(k) = *t.rec(i)
			}
			k++
		}
	}
	dropped := t.n - k
	t.truncate(k)
	return dropped
}

func (t *Table) truncate(n int) {
	chunks := (n + TableChunk - 1) / TableChunk
	clear(t.chunks[chunks:])
	t.chunks = t.chunks[:chunks]
	if chunks > 0 {
		t.chunks[chunks-1] = t.chunks[chunks-1][:n-(chunks-1)*TableChunk]
	}
	t.n = n
}

// SortStable orders the jobs by cmp, keeping the order of equal jobs. It
// sorts a permutation of 32-bit indices and moves each record once.
func (t *Table) SortStable(cmp func(t *Table, a, b int) int) {
	perm := make([]int32, t.n)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return cmp(t, int(a), int(b)) })
	// Apply the permutation chunk by chunk into new chunks.
	var out [][]record
	for i, p := range perm {
		if i%TableChunk == 0 {
			out = append(out, make([]record, 0, min(TableChunk, t.n-i)))
		}
		out[len(out)-1] = append(out[len(out)-1], *t.rec(int(p)))
	}
	t.chunks = out
}

// IsSorted reports whether cmp finds the jobs in order.
func (t *Table) IsSorted(cmp func(t *Table, a, b int) int) bool {
	for i := 1; i < t.n; i++ {
		if cmp(t, i-1, i) > 0 {
			return false
		}
	}
	return true
}
