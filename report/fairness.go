package report

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/asrpt/asrpt/sim"
)

// NoName is the group name of the jobs without a user or an account.
const NoName = "(none)"

// Where a FairnessReport's target shares come from (FairnessReport.Targets).
const (
	// TargetsEqual: equal shares among the accounts of the replay.
	TargetsEqual = "equal"
	// TargetsShares: the shares given (a --shares file), normalized over the
	// accounts of the replay.
	TargetsShares = "shares"
)

// FairnessReport says who waited and who got the cluster when it was
// short, for one replay. Times are seconds. The JSON names are part of the
// output of `asrpt replay --json` (each policy's "fairness").
type FairnessReport struct {
	// Targets is TargetsEqual or TargetsShares.
	Targets string `json:"targets"`
	// ContendedSeconds is how long the cluster was contended: at least one
	// job of the replay waiting (submitted and not yet started).
	ContendedSeconds float64 `json:"contended_s"`
	// ContendedGPUHours are the GPU-hours delivered, to all jobs, while the
	// cluster was contended.
	ContendedGPUHours float64 `json:"contended_gpu_hours"`
	// MaxWait, P99Wait and P99Slowdown are over every job of the replay;
	// a job's slowdown is its JCT / max(run time, 1 s).
	MaxWait     float64 `json:"max_wait_s"`
	P99Wait     float64 `json:"p99_wait_s"`
	P99Slowdown float64 `json:"p99_slowdown"`
	// Accounts and Users are every account and every user of the replay,
	// sorted by name (Account and User look one up).
	Accounts []Group `json:"accounts"`
	Users    []Group `json:"users"`
	// Longest are the jobs that waited longest, longest first, ties by job
	// id (numbers in ids compared as numbers); at most the top asked for.
	Longest []WaitingJob `json:"longest"`
}

// Group is one account's or one user's figures in a replay.
type Group struct {
	// Name is the account or user name, NoName for the jobs without one.
	Name string `json:"name"`
	Jobs int    `json:"jobs"`
	// GPUHours are the GPU-hours the group's jobs received: GPUs × run
	// time / 3600, summed.
	GPUHours float64 `json:"gpu_hours"`
	// ContendedGPUHours are the GPU-hours the group received while the
	// cluster was contended, and ContendedShare their share of the
	// report's ContendedGPUHours (0 when the cluster never was).
	ContendedGPUHours float64 `json:"contended_gpu_hours"`
	ContendedShare    float64 `json:"contended_share"`
	// TargetShare is the share the group is entitled to: an account's
	// share from the report's Targets; a user's is, for each account it ran
	// under, that account's share divided equally among the account's
	// users, summed.
	TargetShare float64 `json:"target_share"`
	AvgWait     float64 `json:"avg_wait_s"`
	MaxWait     float64 `json:"max_wait_s"`
	P99Wait     float64 `json:"p99_wait_s"`
	P99Slowdown float64 `json:"p99_slowdown"`
}

// WaitingJob is one of the longest-waiting jobs of a replay.
type WaitingJob struct {
	ID string `json:"id"`
	// User and Account are NoName when the job has none.
	User    string  `json:"user"`
	Account string  `json:"account"`
	GPUs    int     `json:"gpus"`
	Submit  float64 `json:"submit_s"`
	Wait    float64 `json:"wait_s"`
	RunTime float64 `json:"run_time_s"`
}

// Account returns the figures of the named account ("" or NoName for the
// jobs without one), and whether the replay had it.
func (f *FairnessReport) Account(name string) (Group, bool) { return lookup(f.Accounts, name) }

// User returns the figures of the named user ("" or NoName for the jobs
// without one), and whether the replay had it.
func (f *FairnessReport) User(name string) (Group, bool) { return lookup(f.Users, name) }

func lookup(groups []Group, name string) (Group, bool) {
	name = groupName(name)
	i, ok := slices.BinarySearchFunc(groups, name, func(g Group, n string) int { return strings.Compare(g.Name, n) })
	if !ok {
		return Group{}, false
	}
	return groups[i], true
}

func groupName(s string) string {
	if s == "" {
		return NoName
	}
	return s
}

// Fairness computes the fairness figures of replay r, whose jobs have all
// finished (as sim returns them). shares maps account names to their share
// (a --shares file, ReadShares); they are normalized again over the
// accounts of the replay, and an account missing from them has target 0.
// With nil shares every account of the replay has an equal target. Longest
// holds the top longest-waiting jobs (none when top ≤ 0).
//
// The cluster is contended while at least one job of the replay waits.
// A job that ran once ([Start, End]) waits from its submit to its start.
// A preempted job (Preemptions > 0) is taken to have run in one piece,
// [End − RunTime, End], and to have waited from its submit to then: the
// result keeps neither its runs nor its waits between them, so its
// contended GPU-seconds, and the contention its waits make, are an
// approximation. (Its wait in the figures is Start − Submit, as in
// Summary: with LAS, which starts every job at once, all waits are 0.)
// The GPU-seconds each job receives while contended are found by one
// sweep over the start and end of the waits, which merges them into
// disjoint spans, and a binary search in those spans for each job's run.
//
// The work is O(n log n) for n jobs; the memory O(n) besides the report,
// which holds one Group per account and per user and at most top jobs.
func Fairness(r *sim.Result, shares map[string]float64, top int) FairnessReport {
	f := FairnessReport{Targets: TargetsEqual, Accounts: []Group{}, Users: []Group{}, Longest: []WaitingJob{}}
	if shares != nil {
		f.Targets = TargetsShares
	}
	jobs := r.Jobs
	n := len(jobs)
	if n == 0 {
		return f
	}
	spans := contention(jobs, runStart)
	f.ContendedSeconds = spans.upTo(math.Inf(1))

	wait := make([]float64, n)
	slow := make([]float64, n)
	acct := make([]int32, n)
	user := make([]int32, n)
	var accounts, users []Group
	acctIdx, userIdx := map[string]int32{}, map[string]int32{}
	index := func(name string, idx map[string]int32, groups *[]Group) int32 {
		k, ok := idx[name]
		if !ok {
			k = int32(len(*groups))
			idx[name] = k
			*groups = append(*groups, Group{Name: groupName(name)})
		}
		return k
	}
	// pairs are the (account, user) pairs in order of first appearance,
	// for the users' targets.
	type pair struct{ a, u int32 }
	seen := map[pair]bool{}
	var pairs []pair
	var contended float64
	for i := range jobs {
		j := &jobs[i]
		wait[i] = j.Wait()
		slow[i] = j.JCT() / math.Max(j.RunTime, 1)
		acct[i] = index(r.Account(i), acctIdx, &accounts)
		user[i] = index(r.User(i), userIdx, &users)
		if p := (pair{acct[i], user[i]}); !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
		begin := runStart(j)
		gpuSec := float64(j.GPUs) * j.RunTime
		contSec := float64(j.GPUs) * math.Max(spans.upTo(j.End)-spans.upTo(begin), 0)
		contended += contSec
		for _, g := range []*Group{&accounts[acct[i]], &users[user[i]]} {
			g.Jobs++
			g.GPUHours += gpuSec
			g.ContendedGPUHours += contSec
			g.AvgWait += wait[i]
		}
	}
	f.ContendedGPUHours = contended / 3600
	for _, groups := range [][]Group{accounts, users} {
		for k := range groups {
			g := &groups[k]
			if contended > 0 {
				g.ContendedShare = g.ContendedGPUHours / contended
			}
			g.GPUHours /= 3600
			g.ContendedGPUHours /= 3600
			g.AvgWait /= float64(g.Jobs)
		}
	}

	// Targets: the accounts' first, then each user's part of them.
	var total float64
	for k := range accounts {
		t := 1.0
		if shares != nil {
			t = shares[acctName(accounts[k].Name)]
			if !(t > 0) || math.IsInf(t, 1) {
				t = 0
			}
		}
		accounts[k].TargetShare = t
		total += t
	}
	for k := range accounts {
		if total > 0 {
			accounts[k].TargetShare /= total
		}
	}
	members := make([]int, len(accounts))
	for _, p := range pairs {
		members[p.a]++
	}
	for _, p := range pairs {
		users[p.u].TargetShare += accounts[p.a].TargetShare / float64(members[p.a])
	}

	buf := make([]float64, n)
	groupQuantiles(accounts, acct, wait, slow, buf)
	groupQuantiles(users, user, wait, slow, buf)
	byName := func(a, b Group) int { return strings.Compare(a.Name, b.Name) }
	slices.SortFunc(accounts, byName)
	slices.SortFunc(users, byName)
	f.Accounts, f.Users = accounts, users

	copy(buf, wait)
	slices.Sort(buf)
	f.MaxWait, f.P99Wait = buf[n-1], Quantile(buf, 0.99)
	if top > 0 {
		f.Longest = longest(r, wait, buf[max(n-top, 0)], top)
	}
	copy(buf, slow)
	slices.Sort(buf)
	f.P99Slowdown = Quantile(buf, 0.99)
	return f
}

// acctName is the account name of a group name, as shares are keyed.
func acctName(group string) string {
	if group == NoName {
		return ""
	}
	return group
}

// groupQuantiles sets each group's maximum and p99 wait and p99 slowdown;
// idx gives each job's group, and buf has room for every job.
func groupQuantiles(groups []Group, idx []int32, wait, slow, buf []float64) {
	start := make([]int, len(groups)+1)
	for k := range groups {
		start[k+1] = start[k] + groups[k].Jobs
	}
	pos := make([]int, len(groups))
	// sorted lays out values group by group in buf, each group's sorted,
	// and returns the segment of group k.
	sorted := func(values []float64) func(k int) []float64 {
		copy(pos, start)
		for i, k := range idx {
			buf[pos[k]] = values[i]
			pos[k]++
		}
		for k := range groups {
			slices.Sort(buf[start[k]:start[k+1]])
		}
		return func(k int) []float64 { return buf[start[k]:start[k+1]] }
	}
	seg := sorted(wait)
	for k := range groups {
		w := seg(k)
		groups[k].MaxWait, groups[k].P99Wait = w[len(w)-1], Quantile(w, 0.99)
	}
	seg = sorted(slow)
	for k := range groups {
		groups[k].P99Slowdown = Quantile(seg(k), 0.99)
	}
}

// longest returns the top jobs by wait, longest first, ties by id; every
// job among them waited at least least.
func longest(r *sim.Result, wait []float64, least float64, top int) []WaitingJob {
	jobs := r.Jobs
	var cand []int
	for i, w := range wait {
		if w >= least {
			cand = append(cand, i)
		}
	}
	slices.SortFunc(cand, func(a, b int) int {
		if c := cmp.Compare(wait[b], wait[a]); c != 0 {
			return c
		}
		if c := compareIDs(r.ID(a), r.ID(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	out := make([]WaitingJob, 0, min(top, len(cand)))
	for _, i := range cand[:min(top, len(cand))] {
		j := &jobs[i]
		out = append(out, WaitingJob{ID: r.ID(i), User: groupName(r.User(i)), Account: groupName(r.Account(i)), GPUs: int(j.GPUs),
			Submit: j.Submit, Wait: wait[i], RunTime: j.RunTime})
	}
	return out
}

// compareIDs orders job ids with the runs of digits in them compared as
// numbers ("9" < "10", "12_9" < "12_10"), and the rest byte by byte; ids
// equal that way ("7", "07") fall back to plain string order.
func compareIDs(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			da, db := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Compare(len(da), len(db)); c != 0 {
				return c
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// spans are disjoint time spans in order, with the total length of the
// spans before each.
type spans struct {
	lo, hi, before []float64
}

// runStart returns the start of a job's run as Fairness counts it: its
// start, or End − RunTime for a preempted job.
func runStart(j *sim.JobResult) float64 {
	if j.Preemptions > 0 {
		return j.End - j.RunTime
	}
	return j.Start
}

// contention returns the spans during which at least one job waited: the
// union of the jobs' [Submit, start), by one sweep in submit order.
func contention(jobs []sim.JobResult, start func(*sim.JobResult) float64) spans {
	type span struct{ lo, hi float64 }
	waits := make([]span, 0, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		if s := start(j); s > j.Submit {
			waits = append(waits, span{j.Submit, s})
		}
	}
	slices.SortFunc(waits, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var s spans
	for _, w := range waits {
		if k := len(s.hi) - 1; k >= 0 && w.lo <= s.hi[k] {
			s.hi[k] = math.Max(s.hi[k], w.hi)
			continue
		}
		s.lo = append(s.lo, w.lo)
		s.hi = append(s.hi, w.hi)
	}
	s.before = make([]float64, len(s.lo)+1)
	for k := range s.lo {
		s.before[k+1] = s.before[k] + (s.hi[k] - s.lo[k])
	}
	return s
}

// upTo returns the total length of the spans before time t.
func (s *spans) upTo(t float64) float64 {
	k := sort.Search(len(s.hi), func(i int) bool { return s.hi[i] > t }) // spans [0, k) end by t
	m := s.before[k]
	if k < len(s.lo) && s.lo[k] < t {
		m += t - s.lo[k]
	}
	return m
}
