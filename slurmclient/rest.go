package slurmclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// rest holds what every adapter shares: the transport and the request
// helpers that run every answer through classify.
type rest struct {
	t *transport
}

// envelope is the part of every response body common to all API versions.
type envelope struct {
	Errors   []apiError   `json:"errors"`
	Warnings []apiWarning `json:"warnings"`
}

// call performs one request and decodes the body into out (when non-nil).
// sent lists the top-level keys of body; a warning about one fails the call.
func (r *rest) call(ctx context.Context, method, path string, q url.Values, body any, sent []string, out any) error {
	op := method + " " + path
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	res, err := r.t.do(ctx, method, path, q, b)
	if err != nil {
		return err
	}
	if err := answer(op, res, sent); err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(res.body, out); err != nil {
			return badResponse(op, err)
		}
	}
	return nil
}

// answer classifies the answer res to op from its status and its
// envelope's errors and warnings (a warning about a key of sent fails it):
// nil for a success.
func answer(op string, res response, sent []string) error {
	var env envelope
	if jerr := json.Unmarshal(res.body, &env); jerr != nil {
		if res.status >= 200 && res.status < 300 {
			return badResponse(op, jerr)
		}
		plain := string(res.body)
		if len(plain) > 256 || !utf8.ValidString(plain) {
			plain = fmt.Sprintf("non-JSON body of %d bytes", len(res.body))
		}
		return classify(op, res.status, nil, nil, sent, plain)
	}
	return classify(op, res.status, env.Errors, env.Warnings, sent, "")
}

// baseJobStates are the job states that are not flags.
var baseJobStates = map[string]bool{
	"PENDING": true, "RUNNING": true, "SUSPENDED": true, "COMPLETED": true, "CANCELLED": true,
	"FAILED": true, "TIMEOUT": true, "NODE_FAIL": true, "PREEMPTED": true, "BOOT_FAIL": true,
	"DEADLINE": true, "OUT_OF_MEMORY": true,
}

// baseNodeStates are the node states that are not flags.
var baseNodeStates = map[string]bool{
	"IDLE": true, "MIXED": true, "ALLOCATED": true, "DOWN": true, "ERROR": true,
	"FUTURE": true, "UNKNOWN": true,
}

// splitState separates the base state from the flags of a state array.
// An unknown value is kept as a flag; an array with no base state gets
// "UNKNOWN".
func splitState(states []string, base map[string]bool) (string, []string) {
	st := ""
	var flags []string
	for _, s := range states {
		s = strings.ToUpper(strings.TrimSpace(s))
		if st == "" && base[s] {
			st = s
			continue
		}
		if s != "" {
			flags = append(flags, s)
		}
	}
	if st == "" {
		st = "UNKNOWN"
	}
	return st, flags
}

func strs[T ~string](p *[]T) []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(*p))
	for i, s := range *p {
		out[i] = string(s)
	}
	return out
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

func unix(sec int64) time.Time {
	if sec <= 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

func active(state string) bool { return state == "PENDING" || state == "RUNNING" }

func sortJobs(js []Job) {
	slices.SortFunc(js, func(a, b Job) int {
		if len(a.ID) != len(b.ID) {
			return len(a.ID) - len(b.ID)
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func sortNodes(ns []Node) {
	slices.SortFunc(ns, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
}

// nameRE matches node names and GPU types asrpt is willing to send.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

var jobIDRE = regexp.MustCompile(`^[0-9]{1,10}$`)

// validate checks every value of u before anything is sent (26.05 drops a
// job's GPU request after a rejected tres_per_node update, so a bad value
// must never reach slurmctld).
func validate(id string, u JobUpdate) error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("job %s: %s: %w: %s", id, field, ErrInvalid, fmt.Sprintf(format, a...))
	}
	if !jobIDRE.MatchString(id) {
		return bad("id", "%q is not a job id", id)
	}
	if u.Priority != nil && (*u.Priority == 0 || *u.Priority > 0xFFFFFFFD) {
		return bad("priority", "%d outside [1, 4294967293]", *u.Priority)
	}
	if u.RequiredNodes != nil {
		if len(u.RequiredNodes) > 4096 {
			return bad("required nodes", "need at most 4096 names, got %d", len(u.RequiredNodes))
		}
		for _, n := range u.RequiredNodes {
			if !nameRE.MatchString(n) {
				return bad("required nodes", "%q is not a node name", n)
			}
		}
	}
	if u.GPUsPerNode != nil && (*u.GPUsPerNode < 1 || *u.GPUsPerNode > 1024) {
		return bad("GPUs per node", "%d outside [1, 1024]", *u.GPUsPerNode)
	}
	if u.GPUType != "" {
		if u.GPUsPerNode == nil {
			return bad("GPU type", "set without GPUsPerNode")
		}
		if !nameRE.MatchString(u.GPUType) || strings.Contains(u.GPUType, ":") {
			return bad("GPU type", "%q is not a GRES type", u.GPUType)
		}
	}
	if u.Comment != nil {
		c := *u.Comment
		if len(c) > 1024 || !utf8.ValidString(c) || strings.IndexFunc(c, unicode.IsControl) >= 0 {
			return bad("comment", "must be at most 1024 bytes of UTF-8 without control characters")
		}
	}
	if u.Nice != nil && (*u.Nice < -2147483645 || *u.Nice > 2147483645) {
		return bad("nice", "%d outside [-2147483645, 2147483645]", *u.Nice)
	}
	if u.SiteFactor != nil && *u.SiteFactor > MaxSiteFactor {
		return bad("site factor", "%d outside [0, %d]", *u.SiteFactor, MaxSiteFactor)
	}
	if u.Guard && u.Hold != nil {
		return bad("guard", "holds and releases the job itself: no hold with it")
	}
	if u.Nice != nil && u.Priority != nil {
		// slurmctld resets nice to 0 when it sets an explicit priority.
		return bad("nice", "cannot be set together with priority (an explicit priority resets nice)")
	}
	return nil
}

// field is one step of an update: the key-value to send and a check of the
// re-read job.
type field struct {
	name   string
	body   map[string]any
	verify func(Job) bool
}

// plan orders the fields of u: release, required nodes, GPUs per node,
// comment, nice, site factor, priority, hold. enc builds the version's body
// per field.
func plan(u JobUpdate, enc encoder) []field {
	var fs []field
	if u.Hold != nil && !*u.Hold {
		fs = append(fs, field{"release", enc.hold(false), func(j Job) bool { return !j.Held }})
	}
	if u.RequiredNodes != nil {
		want := slices.Clone(u.RequiredNodes)
		slices.Sort(want)
		fs = append(fs, field{"required nodes", enc.requiredNodes(u.RequiredNodes), func(j Job) bool {
			got := slices.Clone(j.RequiredNodes)
			slices.Sort(got)
			return slices.Equal(got, want)
		}})
	}
	if u.GPUsPerNode != nil {
		n, typ := *u.GPUsPerNode, u.GPUType
		fs = append(fs, field{"GPUs per node", enc.gpusPerNode(n, typ), func(j Job) bool {
			return j.GPUs.PerNode == n && (typ == "" || j.GPUs.Type == typ)
		}})
	}
	if u.Comment != nil {
		c := *u.Comment
		fs = append(fs, field{"comment", map[string]any{"comment": c}, func(j Job) bool { return j.Comment == c }})
	}
	if u.Nice != nil {
		n := *u.Nice
		fs = append(fs, field{"nice", map[string]any{"nice": n}, func(j Job) bool { return j.Nice == n }})
	}
	if u.SiteFactor != nil {
		// No API version reports the site factor back: the re-read only
		// shows that the job is still there.
		fs = append(fs, field{"site factor", enc.siteFactor(*u.SiteFactor), func(Job) bool { return true }})
	}
	if u.Priority != nil {
		p := *u.Priority
		fs = append(fs, field{"priority", enc.priority(p), func(j Job) bool { return j.Priority == p }})
	}
	if u.Hold != nil && *u.Hold {
		fs = append(fs, field{"hold", enc.hold(true), func(j Job) bool { return j.Held }})
	}
	return fs
}

// encoder builds the per-version request bodies that differ.
type encoder interface {
	priority(p uint32) map[string]any
	requiredNodes(names []string) map[string]any
	gpusPerNode(n int, typ string) map[string]any
	hold(h bool) map[string]any
	// siteFactor is the body that sets site factor f (f in priority
	// points); nil where the version cannot (SupportsSiteFactor false).
	siteFactor(f uint32) map[string]any
	// remainder is the path element that addresses an array's pending
	// remainder j and none of its started tasks.
	remainder(j Job) string
}

// jobAdapter is what update needs of a version's adapter.
type jobAdapter interface {
	encoder
	Job(context.Context, string) (Job, error)
	SupportsSiteFactor() bool
	APIVersion() string
}

// update runs plan(u) against one job: one POST per field, the job re-read
// after each (also after a refusal, to detect a change that was dropped).
func update(ctx context.Context, r *rest, a jobAdapter, jobPath, id string, u JobUpdate) error {
	if err := validate(id, u); err != nil {
		return err
	}
	if u.SiteFactor != nil && !a.SupportsSiteFactor() {
		return fmt.Errorf("job %s: site factor: %w: the job update of REST API %s has no site_factor (asrpt writes it through v0.0.42 and v0.0.44: Slurm 24.11 and later)",
			id, ErrUnsupported, a.APIVersion())
	}
	before, err := a.Job(ctx, id)
	if err != nil {
		return err
	}
	if err := Writable(before, u); err != nil {
		return err
	}
	if u.Guard && (len(u.RequiredNodes) > 0 || u.GPUsPerNode != nil) {
		return guarded(ctx, r, a, jobPath, id, u, before)
	}
	target := id
	if before.Shape() == ShapeArrayRemainder {
		target = a.remainder(before)
	}
	steps := plan(u, a)
	var applied []string // fields Slurm refused but applied
	var refusal error
	for _, f := range steps {
		keys := make([]string, 0, len(f.body))
		for k := range f.body {
			keys = append(keys, k)
		}
		werr := r.call(ctx, "POST", jobPath+target, nil, f.body, keys, nil)
		after, rerr := a.Job(ctx, id)
		if rerr != nil {
			return errors.Join(werr, fmt.Errorf("job %s: re-reading after %s: %w", id, f.name, rerr))
		}
		if before.GPUs.Total > 0 && after.GPUs.Total == 0 && after.State == "PENDING" {
			// Slurm 26.05 drops the GPU request after a rejected GRES update.
			return errors.Join(werr, fmt.Errorf("job %s: %w: GPU request lost after %s update (was %d GPUs)",
				id, ErrNotApplied, f.name, before.GPUs.Total))
		}
		switch {
		case werr != nil && f.verify(after) && !f.verify(before) && !errors.Is(werr, ErrNotPersistent):
			// The re-read decides, not the status line: Slurm 22.05 answers
			// an update of an array's pending tasks with "job array update
			// failed" and applies it. (A priority Slurm calls not
			// persistent is in effect too, but will not last: that answer
			// stays ErrNotPersistent.)
			applied = append(applied, f.name)
			refusal = werr
		case werr != nil:
			return fmt.Errorf("job %s: %s: %w", id, f.name, werr)
		case !f.verify(after):
			return fmt.Errorf("job %s: %w: %s", id, ErrNotApplied, f.name)
		}
		before = after
	}
	// A later field may undo an earlier one: check them all on the last read.
	for _, f := range steps {
		if !f.verify(before) {
			return fmt.Errorf("job %s: %w: %s undone by a later change", id, ErrNotApplied, f.name)
		}
	}
	if applied != nil {
		return fmt.Errorf("job %s: %s: %w (Slurm answered: %v)", id, strings.Join(applied, ", "), ErrAppliedDespiteError, refusal)
	}
	return nil
}

// accountRE matches the Slurm account names a guarded update sends back
// (sacctmgr makes them lower case; the check keeps odd bytes out).
var accountRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// guarded sends every field of u in one request with the job's own
// account (see JobUpdate.Guard), re-reads the job and verifies each field.
// before is the job as read just before.
func guarded(ctx context.Context, r *rest, a jobAdapter, jobPath, id string, u JobUpdate, before Job) error {
	if !accountRE.MatchString(before.Account) {
		return fmt.Errorf("job %s: guard: %w: the job shows no account to guard the write with (%q)", id, ErrInvalid, before.Account)
	}
	inner := u
	inner.Guard = false
	steps := plan(inner, a)
	body := map[string]any{"account": before.Account}
	keys := []string{"account"}
	names := make([]string, 0, len(steps))
	for _, f := range steps {
		for k, v := range f.body {
			body[k] = v
			keys = append(keys, k)
		}
		names = append(names, f.name)
	}
	slices.Sort(keys)
	werr := r.call(ctx, "POST", jobPath+id, nil, body, keys, nil)
	after, rerr := a.Job(ctx, id)
	if rerr != nil {
		return errors.Join(werr, fmt.Errorf("job %s: re-reading after the guarded update: %w", id, rerr))
	}
	if before.GPUs.Total > 0 && after.GPUs.Total == 0 && after.State == "PENDING" {
		return errors.Join(werr, fmt.Errorf("job %s: %w: GPU request lost after the guarded update (was %d GPUs)",
			id, ErrNotApplied, before.GPUs.Total))
	}
	var missing []string
	for _, f := range steps {
		if !f.verify(after) {
			missing = append(missing, f.name)
		}
	}
	switch {
	case werr != nil && len(missing) == 0 && after.State == "PENDING" && !errors.Is(werr, ErrNotPersistent):
		return fmt.Errorf("job %s: %s: %w (Slurm answered: %v)", id, strings.Join(names, ", "), ErrAppliedDespiteError, werr)
	case werr != nil:
		return fmt.Errorf("job %s: guarded %s: %w", id, strings.Join(names, ", "), werr)
	case len(missing) > 0:
		return fmt.Errorf("job %s: %w: %s", id, ErrNotApplied, strings.Join(missing, ", "))
	}
	return nil
}

// Writable is the check UpdateJob makes on the job's own record, re-read
// just before it sends anything: it refuses an update of a job that is not
// pending (a node list sent to a running job resizes it on 22.05) and the
// updates that would reach more than the record: a node list or GPU count
// of an array record applies to every task that starts later (and, on
// 22.05, to the running ones), one of a heterogeneous job to every
// component; and Slurm takes a heterogeneous job's updates at its leader,
// except a site factor, which each component takes itself.
func Writable(j Job, u JobUpdate) error {
	if j.State != "PENDING" {
		return fmt.Errorf("job %s: %w: it is %s", j.ID, ErrNotPending, j.State)
	}
	placing := len(u.RequiredNodes) > 0 || u.GPUsPerNode != nil
	switch sh := j.Shape(); {
	case sh == ShapeArrayRemainder && placing, sh == ShapeArrayTask && placing:
		return fmt.Errorf("job %s: %w: part of array %s: a node list or GPU count would apply to every task",
			j.ID, ErrInvalid, j.Array.JobID)
	case sh == ShapeHetLeader && placing:
		return fmt.Errorf("job %s: %w: heterogeneous job: a node list or GPU count would apply to every component",
			j.ID, ErrInvalid)
	case sh == ShapeHetComponent && !siteFactorOnly(u):
		return fmt.Errorf("job %s: %w: component %d of heterogeneous job %s: write to the leader",
			j.ID, ErrInvalid, j.Het.Offset, j.Het.LeaderID)
	}
	return nil
}

// siteFactorOnly reports whether u sets a site factor and nothing else: the
// one write a heterogeneous job's component takes itself, since slurmctld
// applies a site factor written to the leader to the leader only (24.11,
// 26.05: "setting AdinPrioFactor … JobId=212+0(212)"), where it applies a
// priority, a hold or a release to every component.
func siteFactorOnly(u JobUpdate) bool {
	return u.SiteFactor != nil && u.Priority == nil && u.RequiredNodes == nil && u.GPUsPerNode == nil &&
		u.Comment == nil && u.Nice == nil && u.Hold == nil && !u.Guard
}

// checkAuth proves the token with the cheapest authenticated slurmctld
// call: nodes changed after 2100-01-01, which a good token answers with
// 304 Not Modified and no body. Needed from v0.0.40 on, where a ping with a
// bad token is 200 with "responding": false rather than an auth error.
func (r *rest) checkAuth(ctx context.Context, nodesPath string) error {
	q := url.Values{"update_time": {"4102444800"}}
	res, err := r.t.do(ctx, "GET", nodesPath, q, nil)
	if err != nil {
		return err
	}
	if res.status == 304 {
		return nil
	}
	var env envelope
	plain := ""
	if json.Unmarshal(res.body, &env) != nil {
		plain = fmt.Sprintf("non-JSON body of %d bytes", len(res.body))
	}
	return classify("GET "+nodesPath, res.status, env.Errors, env.Warnings, nil, plain)
}
