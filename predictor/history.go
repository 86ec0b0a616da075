package predictor

import (
	"math"
	"strings"

	"github.com/asrpt/asrpt/job"
)

// Window is the number of most recent finished runs of a group over which
// the mean, median and trimmed maximum are taken. Count covers all runs.
const Window = 64

// GroupStats summarises the finished runs of one group (a (user, family)
// pair, a user, a partition) as known at some instant. Run times are
// natural logarithms of seconds (at least 1 s); every float is NaN when the
// group has no finished run.
type GroupStats struct {
	// Count is the number of finished runs (all of them, not only the window).
	Count int
	// Last is the log run time of the run that finished last.
	Last float64
	// LastEnd is the end time, Unix seconds, of the run that finished last.
	LastEnd float64
	// Mean, Median and P90 are the mean, median and 90th percentile (the
	// "trimmed maximum") of the log run times of the last Window runs.
	Mean, Median, P90 float64
	// FailShare is the share of all runs that ended in a failure state.
	FailShare float64
	// OKMedian is the median log run time of the last Window runs that did
	// not fail (COMPLETED, TIMEOUT or unknown state).
	OKMedian float64
	// MeanSeconds is the mean run time in seconds (not its log; each run
	// at least 1 s) of the last Window runs, failed ones included: the
	// group's expected run time. It is not a feature.
	MeanSeconds float64
}

// groupAcc accumulates one group's runs.
type groupAcc struct {
	n, nFail      int
	last, lastEnd float64
	all, ok       window
	// secSum is the sum of exp(x) over all's window: kept incrementally
	// and summed afresh once per lap of the ring, so rounding errors do
	// not build up.
	secSum float64
}

// window keeps the last Window values both in arrival order (a ring) and
// sorted, so that median and quantiles are O(1) and an insert is O(Window).
type window struct {
	ring   []float64
	next   int
	sorted []float64
	sum    float64
}

// add adds x and returns the value it pushed out of the window, if any.
// An eviction moves only the sorted values between the old value's place
// and the new one's.
func (w *window) add(x float64) (old float64, evicted bool) {
	if len(w.ring) < Window {
		w.ring = append(w.ring, x)
		w.sum += x
		i := lowerBound(w.sorted, x)
		w.sorted = append(w.sorted, 0)
		copy(w.sorted[i+1:], w.sorted[i:])
		w.sorted[i] = x
		return 0, false
	}
	old = w.ring[w.next]
	w.ring[w.next] = x
	w.next = (w.next + 1) % Window
	w.sum -= old
	w.sum += x
	s := w.sorted
	i := lowerBound(s, old) // s[i] == old
	if j := lowerBound(s, x); j > i {
		// x goes after old: shift s[i+1:j] down by one.
		copy(s[i:j-1], s[i+1:j])
		s[j-1] = x
	} else {
		// x goes at j ≤ i: shift s[j:i] up by one.
		copy(s[j+1:i+1], s[j:i])
		s[j] = x
	}
	return old, true
}

// lowerBound returns the first index i with s[i] ≥ x (len(s) if none),
// as sort.SearchFloat64s does for x not NaN. Its steps do not depend on
// the comparisons, which the compiler turns into conditional moves: no
// branch to mispredict.
func lowerBound(s []float64, x float64) int {
	if len(s) == 0 {
		return 0
	}
	base, n := 0, len(s)
	for n > 1 {
		half := n / 2
		if s[base+half] < x {
			base += half
		}
		n -= half
	}
	if s[base] < x {
		base++
	}
	return base
}

// quantile returns the q-quantile (linear interpolation) of the window, NaN
// when empty.
func (w *window) quantile(q float64) float64 {
	return quantileSorted(w.sorted, q)
}

func (w *window) mean() float64 {
	if len(w.ring) == 0 {
		return math.NaN()
	}
	return w.sum / float64(len(w.ring))
}

// quantileSorted returns the q-quantile of sorted values with linear
// interpolation, NaN for none.
func quantileSorted(s []float64, q float64) float64 {
	switch len(s) {
	case 0:
		return math.NaN()
	case 1:
		return s[0]
	}
	p := q * float64(len(s)-1)
	i := int(p)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	f := p - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}

func (g *groupAcc) add(logRun, end float64, failed bool) {
	g.n++
	if failed {
		g.nFail++
	} else {
		g.ok.add(logRun)
	}
	// The most recently finished run; ties on end time keep the later call.
	if g.n == 1 || end >= g.lastEnd {
		g.last, g.lastEnd = logRun, end
	}
	switch old, evicted := g.all.add(logRun); {
	case !evicted:
		g.secSum += math.Exp(logRun)
	case g.all.next == 0:
		g.secSum = 0
		for _, v := range g.all.ring {
			g.secSum += math.Exp(v)
		}
	default:
		g.secSum += math.Exp(logRun) - math.Exp(old)
	}
}

func (g *groupAcc) stats() GroupStats {
	if g == nil || g.n == 0 {
		return emptyStats()
	}
	return GroupStats{
		Count:     g.n,
		Last:      g.last,
		LastEnd:   g.lastEnd,
		Mean:      g.all.mean(),
		Median:    g.all.quantile(0.5),
		P90:       g.all.quantile(0.9),
		FailShare: float64(g.nFail) / float64(g.n),
		OKMedian:  g.ok.quantile(0.5),
		// At least 1 s, as every run is, whatever the rounding.
		MeanSeconds: math.Max(1, g.secSum/float64(len(g.all.ring))),
	}
}

func emptyStats() GroupStats {
	nan := math.NaN()
	return GroupStats{Last: nan, LastEnd: nan, Mean: nan, Median: nan, P90: nan, FailShare: nan, OKMedian: nan, MeanSeconds: nan}
}

// MaxCommands bounds the distinct commands (job.Command within a (user,
// family) group) a History keeps statistics of: 2^18. Past it, a command
// not seen yet gets none (its jobs are sized by their group, as without
// commands), so that a history in which every submit line differs stays
// bounded: about 290 bytes a command (BenchmarkHistoryAdd, commands=n),
// 77 MB at the bound.
const MaxCommands = 1 << 18

// groupKey identifies a (user, family) group.
type groupKey struct{ user, family string }

// commandKey identifies a command (job.Command) within a group.
type commandKey struct {
	group   groupKey
	command uint64
}

// History holds the finished jobs known at some instant, summarised per
// (user, family), user, partition, time limit and command, and over all
// jobs. The caller decides what "known" means: History itself never reads
// a clock.
// Not safe for concurrent use.
type History struct {
	group     map[groupKey]*groupAcc
	user      map[string]*groupAcc
	partition map[string]*groupAcc
	limit     map[float64]*groupAcc
	command   map[commandKey]*groupAcc
	all       groupAcc
}

// NewHistory returns an empty history.
func NewHistory() *History {
	return &History{
		group:     map[groupKey]*groupAcc{},
		user:      map[string]*groupAcc{},
		partition: map[string]*groupAcc{},
		limit:     map[float64]*groupAcc{},
		command:   map[commandKey]*groupAcc{},
	}
}

// Add records that j finished at end (Unix seconds) after j.RunTime
// seconds. Run times below 1 s count as 1 s.
func (h *History) Add(j *job.Job, end float64) { h.add(j, Family(j.Name), end) }

// add is Add with j's family already computed (fam == Family(j.Name)).
func (h *History) add(j *job.Job, fam string, end float64) {
	lr := logRun(j.RunTime)
	failed := Failed(j.State)
	get := func(m map[string]*groupAcc, k string) *groupAcc {
		g := m[k]
		if g == nil {
			g = &groupAcc{}
			m[k] = g
		}
		return g
	}
	gk := groupKey{j.User, fam}
	g := h.group[gk]
	if g == nil {
		g = &groupAcc{}
		h.group[gk] = g
	}
	g.add(lr, end, failed)
	get(h.user, j.User).add(lr, end, failed)
	get(h.partition, j.Partition).add(lr, end, failed)
	if j.TimeLimit > 0 {
		l := h.limit[j.TimeLimit]
		if l == nil {
			l = &groupAcc{}
			h.limit[j.TimeLimit] = l
		}
		l.add(lr, end, failed)
	}
	if ck := (commandKey{gk, j.Command}); j.Command != 0 {
		c := h.command[ck]
		if c == nil && len(h.command) < MaxCommands {
			c = &groupAcc{}
			h.command[ck] = c
		}
		if c != nil {
			c.add(lr, end, failed)
		}
	}
	h.all.add(lr, end, failed)
}

// Group returns the statistics of j's (user, family) group.
func (h *History) Group(j *job.Job) GroupStats { return h.groupStats(j.User, Family(j.Name)) }

func (h *History) groupStats(user, fam string) GroupStats {
	return h.group[groupKey{user, fam}].stats()
}

// User returns the statistics of j's user.
func (h *History) User(j *job.Job) GroupStats { return h.user[j.User].stats() }

// Partition returns the statistics of j's partition.
func (h *History) Partition(j *job.Job) GroupStats { return h.partition[j.Partition].stats() }

// Limit returns the statistics of the jobs with j's time limit (empty when
// j has none).
func (h *History) Limit(j *job.Job) GroupStats {
	if j.TimeLimit <= 0 {
		return emptyStats()
	}
	return h.limit[j.TimeLimit].stats()
}

// Command returns the statistics of the jobs of j's (user, family) group
// run by j's command (job.Command; empty when it is 0).
func (h *History) Command(j *job.Job) GroupStats {
	return h.commandStats(j.User, Family(j.Name), j.Command)
}

func (h *History) commandStats(user, fam string, command uint64) GroupStats {
	if command == 0 {
		return emptyStats()
	}
	return h.command[commandKey{groupKey{user, fam}, command}].stats()
}

// All returns the statistics over every finished job.
func (h *History) All() GroupStats { return h.all.stats() }

// logRun is the log of a run time in seconds, at least 1 s.
func logRun(s float64) float64 { return math.Log(math.Max(s, 1)) }

// Failed reports whether a final state is a failure whose run time says
// little about the next run: FAILED, CANCELLED, NODE_FAIL, OUT_OF_MEMORY,
// BOOT_FAIL, DEADLINE, PREEMPTED, and the Helios/Philly "Failed" and
// "Killed". COMPLETED, TIMEOUT (the job ran as long as it was allowed),
// "Pass" and an empty or unknown state are not failures.
func Failed(state string) bool {
	s := strings.ToUpper(state)
	for _, p := range []string{"FAIL", "CANCEL", "OUT_OF_ME", "DEADLINE", "PREEMPT", "KILL"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}
