// Package preemptrule decides which jobs of a replayed trace opted in to
// preemption: the replay's --preemptible rule (docs/design.md,
// "Preempting the jobs that can resume"). A site opts in the jobs that
// checkpoint and requeue themselves on a signal; in a trace that is known
// by account or by job family, and the long families are the ones that
// checkpoint, so the rule names those, never a random share of jobs.
package preemptrule

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/predictor"
)

// Kind is the form of a rule.
type Kind int

const (
	// None: no job opted in (the default).
	None Kind = iota
	// All: every job opted in.
	All
	// Longest: the job families (user and name family, predictor.GroupKey)
	// with the longest mean run time, taken longest first until they hold
	// Share of the trace's jobs.
	Longest
	// Accounts: the jobs of the named accounts.
	Accounts
	// Families: the jobs whose name's family (predictor.Family, as the
	// sidecar's [[preemption.rule]] family matches) is named.
	Families
	// Comment: the jobs whose comment declares how they stop, an
	// "asrpt:preempt=SIGNAL@SECONDS" word (job.Job.Preemptible; the sacct
	// reader fills it from the Comment field).
	Comment
)

// MaxAccounts bounds the accounts (or families) one rule may name.
const MaxAccounts = 256

// Rule is a parsed --preemptible value.
type Rule struct {
	Kind Kind
	// Share is Longest's share of jobs, in (0, 1].
	Share float64
	// Accounts are Accounts' account names, or Families' families
	// (normalised by predictor.Family).
	Accounts []string
}

// Parse reads a rule: "none", "all", "comment" (the jobs whose comment
// opted in), "longest:SHARE" (0 < SHARE ≤ 1, the
// share of jobs in the longest families), "accounts:A,B,…" or
// "families:F,G,…" (job names, reduced to their families). The error names
// what is wrong.
func Parse(s string) (Rule, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch {
	case kind == "none" && !hasArg:
		return Rule{Kind: None}, nil
	case kind == "all" && !hasArg:
		return Rule{Kind: All}, nil
	case kind == "comment" && !hasArg:
		return Rule{Kind: Comment}, nil
	case kind == "longest" && hasArg:
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(f > 0 && f <= 1) {
			return Rule{}, fmt.Errorf("preemptible rule %q: longest:SHARE wants a share in (0, 1], got %q", s, arg)
		}
		return Rule{Kind: Longest, Share: f}, nil
	case (kind == "accounts" || kind == "families") && hasArg:
		names := strings.Split(arg, ",")
		if len(names) > MaxAccounts {
			return Rule{}, fmt.Errorf("preemptible rule: %s: %d names, at most %d", kind, len(names), MaxAccounts)
		}
		for i, n := range names {
			if kind == "families" {
				if names[i] = predictor.Family(n); names[i] == "" {
					return Rule{}, fmt.Errorf("preemptible rule %q: families: %q has no family (empty, or numbers, dates and hashes only)", s, n)
				}
			}
			if n == "" {
				return Rule{}, fmt.Errorf("preemptible rule %q: %s: an empty name", s, kind)
			}
		}
		if kind == "families" {
			return Rule{Kind: Families, Accounts: names}, nil
		}
		return Rule{Kind: Accounts, Accounts: names}, nil
	}
	return Rule{}, fmt.Errorf("preemptible rule %q: want none, all, comment, longest:SHARE, accounts:A,B or families:F,G", s)
}

// String returns the rule as Parse reads it.
func (r Rule) String() string {
	switch r.Kind {
	case All:
		return "all"
	case Comment:
		return "comment"
	case Longest:
		return "longest:" + strconv.FormatFloat(r.Share, 'g', -1, 64)
	case Accounts:
		return "accounts:" + strings.Join(r.Accounts, ",")
	case Families:
		return "families:" + strings.Join(r.Accounts, ",")
	}
	return "none"
}

// Set implements flag.Value.
func (r *Rule) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Jobs is a trace the rule reads: a *job.Table, or Slice.
type Jobs interface {
	Len() int
	Job(i int) job.Job
}

// Selector returns the function that tells whether a job of jobs opted
// in, or nil for None. Longest reads the whole trace once (O(n log n) in
// its families); the others look at the job alone.
func (r Rule) Selector(jobs Jobs) func(*job.Job) bool {
	switch r.Kind {
	case All:
		return func(*job.Job) bool { return true }
	case Comment:
		return func(j *job.Job) bool { return j.Preemptible }
	case Accounts:
		set := make(map[string]bool, len(r.Accounts))
		for _, a := range r.Accounts {
			set[a] = true
		}
		return func(j *job.Job) bool { return set[j.Account] }
	case Families:
		set := make(map[string]bool, len(r.Accounts))
		for _, f := range r.Accounts {
			set[f] = true
		}
		return func(j *job.Job) bool { return set[predictor.Family(j.Name)] }
	case Longest:
		set := LongestFamilies(jobs, r.Share)
		return func(j *job.Job) bool { return set[predictor.GroupKey(j)] }
	}
	return nil
}

// LongestFamilies returns the keys (predictor.GroupKey) of the families
// with the longest mean run time, longest first (ties by key), until they
// hold at least share of the jobs.
func LongestFamilies(jobs Jobs, share float64) map[string]bool {
	type family struct {
		key   string
		n     int
		total float64
	}
	index := make(map[string]int)
	var fams []family
	n := jobs.Len()
	for i := range n {
		j := jobs.Job(i)
		k := predictor.GroupKey(&j)
		f, ok := index[k]
		if !ok {
			f = len(fams)
			index[k] = f
			fams = append(fams, family{key: k})
		}
		fams[f].n++
		fams[f].total += j.RunTime
	}
	slices.SortFunc(fams, func(a, b family) int {
		if c := cmp.Compare(b.total/float64(b.n), a.total/float64(a.n)); c != 0 {
			return c
		}
		return cmp.Compare(a.key, b.key)
	})
	want := share * float64(n)
	set := make(map[string]bool)
	covered := 0
	for _, f := range fams {
		if float64(covered) >= want {
			break
		}
		set[f.key] = true
		covered += f.n
	}
	return set
}
