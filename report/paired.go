package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/asrpt/asrpt/sim"
)

// HarmFloor is the least delay, seconds, that counts as harm in a paired
// comparison: a job is harmed when its JCT grows by more than
// max(HarmFloor, its own run time) against the baseline (an hour, or as
// long again as it runs).
const HarmFloor = 3600

// MinPairedShare is the share of the GPU-hours an account needs for its
// share change to be reported (Paired.ShareChange): smaller accounts move
// by large fractions of almost nothing.
const MinPairedShare = 0.02

// Spread is a distribution of per-job differences, seconds.
type Spread struct {
	P50 float64 `json:"p50_s"`
	P90 float64 `json:"p90_s"`
	P99 float64 `json:"p99_s"`
	Max float64 `json:"max_s"`
	Min float64 `json:"min_s"`
}

// PairedGroup is the harm of one account or one size class.
type PairedGroup struct {
	Name string `json:"name"`
	Jobs int    `json:"jobs"`
	// Harmed and Helped count its jobs whose JCT grew, or shrank, by more
	// than max(HarmFloor, their run time).
	Harmed int `json:"harmed"`
	Helped int `json:"helped"`
	// MeanJCTDiff is the mean of its jobs' JCT differences, seconds.
	MeanJCTDiff float64 `json:"mean_jct_diff_s"`
	// Share and BaseShare are, for an account, its share of the GPU-hours
	// delivered while the cluster was contended under the policy and under
	// the baseline (FairnessReport); 0 for a size class.
	Share     float64 `json:"contended_share,omitempty"`
	BaseShare float64 `json:"base_contended_share,omitempty"`
}

// PairedJob is one job's outcome under the policy and the baseline.
type PairedJob struct {
	ID       string  `json:"id"`
	User     string  `json:"user"`
	Account  string  `json:"account"`
	GPUs     int     `json:"gpus"`
	RunTime  float64 `json:"run_time_s"`
	Wait     float64 `json:"wait_s"`
	BaseWait float64 `json:"base_wait_s"`
	JCTDiff  float64 `json:"jct_diff_s"`
}

// Paired compares a policy's replay with a baseline's on the same jobs,
// job by job: who would wait longer than under the baseline, by how much,
// and whose jobs they are.
type Paired struct {
	// Against is the baseline policy.
	Against string `json:"against"`
	Jobs    int    `json:"jobs"`
	// WaitDiff and JCTDiff are the distributions of each job's wait and
	// JCT under the policy minus under the baseline, seconds (> 0: later).
	WaitDiff Spread `json:"wait_diff"`
	JCTDiff  Spread `json:"jct_diff"`
	// Harmed and Helped count the jobs whose JCT grew, or shrank, by more
	// than max(HarmFloor, their run time); HarmedShare is Harmed / Jobs.
	Harmed      int     `json:"harmed"`
	Helped      int     `json:"helped"`
	HarmedShare float64 `json:"harmed_share"`
	// Accounts are every account, by name; Sizes the GPU size classes
	// (SizeClass), smallest first.
	Accounts []PairedGroup `json:"accounts"`
	Sizes    []PairedGroup `json:"sizes"`
	// ShareChange is the largest relative change of an account's
	// contended share against the baseline's (Share/BaseShare − 1, signed),
	// among the accounts with at least MinPairedShare of the GPU-hours
	// under the baseline, and ShareAccount that account ("" when none).
	ShareChange  float64 `json:"share_change"`
	ShareAccount string  `json:"share_account,omitempty"`
	// Worst are the jobs whose JCT grew most, worst first, ties by id; at
	// most the number asked for.
	Worst []PairedJob `json:"worst"`
}

// SizeClass names the GPU size class of a job of g GPUs: 1, 2-4, 5-8,
// 9-32, 33-128, 129+.
func SizeClass(g int) string {
	switch {
	case g <= 1:
		return "1"
	case g <= 4:
		return "2-4"
	case g <= 8:
		return "5-8"
	case g <= 32:
		return "9-32"
	case g <= 128:
		return "33-128"
	}
	return "129+"
}

var sizeClasses = []string{"1", "2-4", "5-8", "9-32", "33-128", "129+"}

// ComparePaired compares r with base, replays of the same jobs (in the
// same order), listing the worst top jobs; fair and baseFair are their
// fairness reports (Fairness), for the accounts' shares. It fails when the
// replays are not of the same jobs.
func ComparePaired(r, base *sim.Result, fair, baseFair *FairnessReport, top int) (*Paired, error) {
	n := len(r.Jobs)
	if len(base.Jobs) != n {
		return nil, fmt.Errorf("report: paired comparison of %d jobs with %d", n, len(base.Jobs))
	}
	p := &Paired{Against: base.Policy, Jobs: n}
	if n == 0 {
		return p, nil
	}
	waits, jcts := make([]float64, n), make([]float64, n)
	accounts := map[string]*PairedGroup{}
	sizes := map[string]*PairedGroup{}
	worst := make([]int, 0, n)
	for i := range n {
		if r.ID(i) != base.ID(i) {
			return nil, fmt.Errorf("report: paired comparison: job %d is %q in one replay, %q in the other", i, r.ID(i), base.ID(i))
		}
		a, b := &r.Jobs[i], &base.Jobs[i]
		waits[i], jcts[i] = a.Wait()-b.Wait(), a.JCT()-b.JCT()
		bound := math.Max(HarmFloor, b.RunTime)
		harmed, helped := jcts[i] > bound, jcts[i] < -bound
		name := r.Account(i)
		if name == "" {
			name = NoName
		}
		for _, g := range []*PairedGroup{group(accounts, name), group(sizes, SizeClass(int(a.GPUs)))} {
			g.Jobs++
			g.MeanJCTDiff += jcts[i]
			if harmed {
				g.Harmed++
			}
			if helped {
				g.Helped++
			}
		}
		if harmed {
			p.Harmed++
		}
		if helped {
			p.Helped++
		}
		if jcts[i] > 0 {
			worst = append(worst, i)
		}
	}
	p.HarmedShare = float64(p.Harmed) / float64(n)
	p.Accounts = groups(accounts, nil)
	p.Sizes = groups(sizes, sizeClasses)
	var total float64
	if baseFair != nil {
		for _, g := range baseFair.Accounts {
			total += g.GPUHours
		}
	}
	for i := range p.Accounts {
		g := &p.Accounts[i]
		if fair != nil && baseFair != nil {
			now, ok1 := fair.Account(g.Name)
			was, ok2 := baseFair.Account(g.Name)
			if ok1 && ok2 {
				g.Share, g.BaseShare = now.ContendedShare, was.ContendedShare
				if total > 0 && was.GPUHours/total >= MinPairedShare && was.ContendedShare > 0 {
					if c := g.Share/g.BaseShare - 1; math.Abs(c) > math.Abs(p.ShareChange) {
						p.ShareChange, p.ShareAccount = c, g.Name
					}
				}
			}
		}
	}
	slices.Sort(waits)
	slices.Sort(jcts)
	p.WaitDiff, p.JCTDiff = spread(waits), spread(jcts)
	slices.SortFunc(worst, func(x, y int) int {
		if c := cmp.Compare(r.Jobs[y].JCT()-base.Jobs[y].JCT(), r.Jobs[x].JCT()-base.Jobs[x].JCT()); c != 0 {
			return c
		}
		return compareIDs(r.ID(x), r.ID(y))
	})
	for _, i := range worst[:min(top, len(worst))] {
		a, b := &r.Jobs[i], &base.Jobs[i]
		p.Worst = append(p.Worst, PairedJob{ID: r.ID(i), User: r.User(i), Account: r.Account(i), GPUs: int(a.GPUs),
			RunTime: b.RunTime, Wait: a.Wait(), BaseWait: b.Wait(), JCTDiff: a.JCT() - b.JCT()})
	}
	return p, nil
}

// group returns m's group name, added when new.
func group(m map[string]*PairedGroup, name string) *PairedGroup {
	g := m[name]
	if g == nil {
		g = &PairedGroup{Name: name}
		m[name] = g
	}
	return g
}

// groups returns m's groups with their means, in order (by name when nil).
func groups(m map[string]*PairedGroup, order []string) []PairedGroup {
	out := make([]PairedGroup, 0, len(m))
	if order == nil {
		for _, g := range m {
			out = append(out, *g)
		}
		slices.SortFunc(out, func(a, b PairedGroup) int { return cmp.Compare(a.Name, b.Name) })
	} else {
		for _, name := range order {
			if g := m[name]; g != nil {
				out = append(out, *g)
			}
		}
	}
	for i := range out {
		out[i].MeanJCTDiff /= float64(out[i].Jobs)
	}
	return out
}

// spread returns the distribution of sorted values.
func spread(sorted []float64) Spread {
	return Spread{P50: Quantile(sorted, 0.5), P90: Quantile(sorted, 0.9), P99: Quantile(sorted, 0.99),
		Max: sorted[len(sorted)-1], Min: sorted[0]}
}
