package slurmclient

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/asrpt/asrpt/hostlist"
)

var errHostlist = errors.New("bad hostlist")

// Bounds on what one response may make the client allocate. The body cap
// (256 MiB) does not bound memory: a short hostlist or index range expands
// to many names.
const (
	// MaxGPUIndicesPerNode is the most GPU indices one gres_detail
	// element (one node of a job) may list: 64 indices. Slurm nodes have
	// at most 8 or 16 GPUs.
	MaxGPUIndicesPerNode = 64
	// MaxResponseNames is the most host names and GPU indices, together,
	// that the node fields (required_nodes, excluded_nodes, nodes) and
	// gres_detail of all jobs of one response may expand to: 1,048,576
	// items, some 32 MB. A response past it is ErrBadResponse naming the
	// job and field.
	MaxResponseNames = 1 << 20
)

// errTooManyNames is wrapped when a response passes MaxResponseNames.
var errTooManyNames = errors.New("too many host names and GPU indices in one response")

// budget counts the host names and GPU indices expanded from one response
// against MaxResponseNames. One hostlist is expanded before it is charged,
// so a response allocates at most MaxResponseNames plus hostlist.MaxHosts
// names.
type budget struct{ left int }

// newBudget returns the budget of one response.
func newBudget() *budget { return &budget{left: MaxResponseNames} }

// charge takes n items from the budget, failing with errTooManyNames when
// fewer are left.
func (b *budget) charge(n int) error {
	if n > b.left {
		b.left = 0
		return fmt.Errorf("%w (limit %d)", errTooManyNames, MaxResponseNames)
	}
	b.left -= n
	return nil
}

// hosts is expandHostlist charged to the budget.
func (b *budget) hosts(s string) ([]string, error) {
	if b.left == 0 && strings.TrimSpace(s) != "" && s != "(null)" {
		return nil, fmt.Errorf("%w (limit %d)", errTooManyNames, MaxResponseNames)
	}
	out, err := expandHostlist(s)
	if err != nil {
		return nil, err
	}
	if err := b.charge(len(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// indexMap is indexMap charged to the budget.
func (b *budget) indexMap(nodes []string, detail []string) (map[string][]int, error) {
	m, err := indexMap(nodes, detail)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, idx := range m {
		n += len(idx)
	}
	if err := b.charge(n); err != nil {
		return nil, fmt.Errorf("gres_detail: %w", err)
	}
	return m, nil
}

// expandHostlist expands a Slurm hostlist ("node[1-3,5],gpu01") into names,
// in order, with Slurm's own rules (hostlist.Expand, which refuses
// more than hostlist.MaxHosts names). An empty string is an empty list.
func expandHostlist(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "(null)" {
		return nil, nil
	}
	out, err := hostlist.Expand(s)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", errHostlist, s, err)
	}
	return out, nil
}

// gpuSpec is one GPU entry of a TRES or GRES string.
type gpuSpec struct {
	typ   string
	count int
}

// parseGPUTres finds the GPU entry of a comma-separated TRES-per-node/-job
// string in either spelling: "gres:gpu:2", "gres:gpu:tesla:4" (22.05),
// "gres/gpu:2", "gres/gpu:tesla:3" (23.11+), "gpu:2", "gres/gpu=2".
// ok is false when there is no GPU entry.
func parseGPUTres(s string) (g gpuSpec, ok bool, err error) {
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		e = strings.TrimPrefix(e, "gres:")
		e = strings.TrimPrefix(e, "gres/")
		if e != "gpu" && !strings.HasPrefix(e, "gpu:") && !strings.HasPrefix(e, "gpu=") {
			continue
		}
		g, err := parseGPUEntry(e)
		if err != nil {
			return gpuSpec{}, false, fmt.Errorf("GPU TRES %q: %w", s, err)
		}
		return g, true, nil
	}
	return gpuSpec{}, false, nil
}

// parseGPUEntry parses "gpu", "gpu:N", "gpu:TYPE", "gpu:TYPE:N", "gpu=N",
// "gpu:TYPE=N", ignoring a trailing "(...)" annotation.
func parseGPUEntry(e string) (gpuSpec, error) {
	if i := strings.IndexByte(e, '('); i >= 0 {
		e = e[:i]
	}
	e = strings.TrimPrefix(e, "gpu")
	if e == "" {
		return gpuSpec{count: 1}, nil
	}
	var g gpuSpec
	if name, n, ok := strings.Cut(e, "="); ok {
		g.typ = strings.TrimPrefix(name, ":")
		c, err := parseCount(n)
		g.count = c
		return g, err
	}
	fields := strings.Split(strings.TrimPrefix(e, ":"), ":")
	switch len(fields) {
	case 1:
		if c, err := parseCount(fields[0]); err == nil {
			g.count = c
		} else if strings.Trim(fields[0], "0123456789") == "" {
			return g, err
		} else {
			g.typ, g.count = fields[0], 1
		}
	case 2:
		g.typ = fields[0]
		c, err := parseCount(fields[1])
		if err != nil {
			return g, err
		}
		g.count = c
	default:
		return g, fmt.Errorf("too many fields in %q", "gpu"+e)
	}
	return g, nil
}

func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("bad GPU count %q", s)
	}
	return n, nil
}

// reqGPUs returns the gres/gpu count of a tres_req_str / tres_alloc_str
// ("cpu=2,mem=2G,node=1,billing=2,gres/gpu=2"): the untyped entry, or the
// largest typed one.
func reqGPUs(s string) (int, error) {
	best, untyped := 0, -1
	for _, e := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(e), "=")
		if !ok || !(k == "gres/gpu" || strings.HasPrefix(k, "gres/gpu:")) {
			continue
		}
		n, err := parseCount(v)
		if err != nil {
			return 0, fmt.Errorf("TRES %q: %w", s, err)
		}
		if k == "gres/gpu" {
			untyped = n
		} else if n > best {
			best = n
		}
	}
	if untyped >= 0 {
		return untyped, nil
	}
	return best, nil
}

// nodeGPUs sums the GPU entries of a node's gres or gres_used string
// ("gpu:tesla:4(S:0)", "gpu:tesla:1(IDX:0),gpu:a100:0(IDX:N/A)").
func nodeGPUs(s string) (count int, typ string, err error) {
	for _, e := range splitParen(s) {
		e = strings.TrimSpace(e)
		if e != "gpu" && !strings.HasPrefix(e, "gpu:") {
			continue
		}
		g, err := parseGPUEntry(e)
		if err != nil {
			return 0, "", fmt.Errorf("GRES %q: %w", s, err)
		}
		count += g.count
		if typ == "" {
			typ = g.typ
		}
	}
	return count, typ, nil
}

// splitParen splits on commas outside parentheses.
func splitParen(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if s != "" {
		parts = append(parts, s[start:])
	}
	return parts
}

// gpuIndices parses the IDX list of a gres_detail element
// ("gpu:tesla:2(IDX:0-1)", "gpu:2(IDX:0,2-3)"); nil when it has none. More
// than MaxGPUIndicesPerNode indices are an error.
func gpuIndices(detail string) ([]int, error) {
	i := strings.Index(detail, "IDX:")
	if i < 0 {
		return nil, nil
	}
	rest := detail[i+4:]
	if j := strings.IndexByte(rest, ')'); j >= 0 {
		rest = rest[:j]
	}
	if rest == "N/A" || rest == "" {
		return nil, nil
	}
	var out []int
	for _, r := range strings.Split(rest, ",") {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a || b-a > 1<<12 {
			return nil, fmt.Errorf("gres_detail %q: bad index range %q", detail, r)
		}
		if len(out)+b-a+1 > MaxGPUIndicesPerNode {
			return nil, fmt.Errorf("gres_detail %s: more than %d GPU indices for one node", clip(detail), MaxGPUIndicesPerNode)
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

// gpuRequest builds a GPURequest from the three request strings.
func gpuRequest(perNode, perJob, reqStr string) (GPURequest, error) {
	var r GPURequest
	if g, ok, err := parseGPUTres(perNode); err != nil {
		return r, err
	} else if ok {
		r.PerNode, r.Type = g.count, g.typ
	}
	if g, ok, err := parseGPUTres(perJob); err != nil {
		return r, err
	} else if ok {
		r.PerJob = g.count
		if r.Type == "" {
			r.Type = g.typ
		}
	}
	n, err := reqGPUs(reqStr)
	if err != nil {
		return r, err
	}
	r.Total = n
	if r.Total == 0 {
		r.Total = max(r.PerJob, r.PerNode)
	}
	return r, nil
}

// clip quotes s, shortened to its first 64 bytes when longer, so that an
// error does not repeat a hostile string.
func clip(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "…"
	}
	return strconv.Quote(s)
}

// indexMap pairs gres_detail entries with the allocated nodes, in order.
func indexMap(nodes []string, detail []string) (map[string][]int, error) {
	if len(detail) == 0 {
		return nil, nil
	}
	m := make(map[string][]int, len(detail))
	for i, d := range detail {
		if i >= len(nodes) {
			break
		}
		idx, err := gpuIndices(d)
		if err != nil {
			return nil, err
		}
		if idx != nil {
			m[nodes[i]] = idx
		}
	}
	return m, nil
}

// ErrBadRecord is wrapped by RecordErrors: some records of a job list
// could not be used and were skipped; the rest of the list stands.
var ErrBadRecord = errors.New("slurm: job records skipped")

// maxRecordErrs bounds the errors a RecordErrors keeps (its IDs are all
// kept).
const maxRecordErrs = 16

// RecordErrors is the error Jobs returns together with the jobs it could
// read when some pending or running records of the list could not be used
// (a field out of range, such as an array_task_id of 4e9; a malformed TRES
// string): each is skipped, not the whole list. errors.Is(err,
// ErrBadRecord) holds; a caller that can go on with the readable jobs
// does, and should count IDs as listed (the job exists, its record is
// unreadable). A response past MaxResponseNames still fails as a whole.
type RecordErrors struct {
	// Op is the request, e.g. "GET /slurm/v0.0.42/jobs".
	Op string
	// IDs are the skipped records' job ids, in list order ("" for a
	// record without one).
	IDs []string
	// Errs are the first maxRecordErrs records' errors.
	Errs []error
}

func (e *RecordErrors) Error() string {
	return fmt.Sprintf("%s: %d job records skipped, first: %v", e.Op, len(e.IDs), e.Errs[0])
}

// Unwrap returns ErrBadRecord.
func (e *RecordErrors) Unwrap() error { return ErrBadRecord }

// jobList gathers the jobs of one job list at op, record by record,
// sharing one budget: the pending and running jobs in id order, and the
// records that could not be used (RecordErrors).
type jobList struct {
	op  string
	b   *budget
	out []Job
	bad RecordErrors
}

func newJobList(op string) *jobList {
	return &jobList{op: op, b: newBudget(), bad: RecordErrors{Op: op}}
}

// add takes one record's conversion: a job j, or the error err that made
// it unusable (with whatever j says, its id, its state). A record that is
// not pending or running is dropped either way; one past the response's
// budget fails the whole list (the error add returns).
func (l *jobList) add(j Job, err error) error {
	switch {
	case err == nil:
		if active(j.State) {
			l.out = append(l.out, j)
		}
	case errors.Is(err, errTooManyNames):
		return fmt.Errorf("%s: %w", l.op, err)
	case j.State != "" && !active(j.State):
	default:
		l.bad.IDs = append(l.bad.IDs, j.ID)
		if len(l.bad.Errs) < maxRecordErrs {
			l.bad.Errs = append(l.bad.Errs, err)
		}
	}
	return nil
}

// result returns the jobs in id order, with a RecordErrors when records
// were skipped.
func (l *jobList) result() ([]Job, error) {
	sortJobs(l.out)
	if len(l.bad.IDs) > 0 {
		bad := l.bad
		return l.out, &bad
	}
	return l.out, nil
}

// parseJobs converts the records of a job list at op with conv (see
// jobList): a record conv refuses is skipped into a RecordErrors, returned
// with the jobs, unless it is not pending or running (nothing to manage)
// or the response passed its budget (the whole response fails).
func parseJobs[R any](op string, recs []R, conv func(*budget, R) (Job, error)) ([]Job, error) {
	l := newJobList(op)
	for _, r := range recs {
		if err := l.add(conv(l.b, r)); err != nil {
			return nil, err
		}
	}
	return l.result()
}
