package multifactor

import (
	"math"
	"slices"
	"strings"
)

// Assoc names a Slurm association of a user in an account.
type Assoc struct{ Account, User string }

// usage is decayed GPU-seconds of service, kept exactly in continuous time:
// between updates it decays by 2^(−Δ/halfLife) while running GPUs add to
// it, so that U(t) = Σ ∫ g·2^(−(t−s)/halfLife) ds over past service.
// Slurm's decay thread applies the same decay in steps of
// PriorityCalcPeriod; usage is counted in GPU-seconds, as a site whose
// TRESBillingWeights bill GPUs only counts it.
type usage struct {
	value   float64 // GPU-seconds, decayed, as of at
	at      float64 // seconds
	running int     // GPUs in use now
}

// advance brings u to now under halfLife seconds (≤ 0: no decay).
func (u *usage) advance(now, halfLife float64) {
	dt := now - u.at
	if dt <= 0 {
		return
	}
	u.at = now
	if halfLife <= 0 {
		u.value += float64(u.running) * dt
		return
	}
	d := math.Exp2(-dt / halfLife)
	u.value = u.value*d + float64(u.running)*halfLife/math.Ln2*(1-d)
}

// FairShare keeps the usage of every association and account and derives
// each association's fair-share factor in [0, 1], by Fair Tree (Slurm's
// default since 19.05) or the classic formula (PriorityFlags=NO_FAIR_TREE),
// on a two-level tree: accounts under root, users under accounts.
type FairShare struct {
	params   *Params
	shares   Shares
	halfLife float64
	accounts map[string]*accountUsage
	assocs   map[Assoc]*Association
	dirty    bool // an association was added since the last compute
	order    []*accountUsage
}

// Shares are the raw shares of each account under root (Accounts) and of
// each user association in its account (Users), as sacctmgr's Share; an
// account or association not named has 1 (equal shares).
type Shares struct {
	Accounts map[string]float64
	Users    map[Assoc]float64
}

func (s Shares) account(name string) float64 {
	if v, ok := s.Accounts[name]; ok {
		return v
	}
	return 1
}

func (s Shares) user(a Assoc) float64 {
	if v, ok := s.Users[a]; ok {
		return v
	}
	return 1
}

type accountUsage struct {
	name   string
	shares float64
	usage
	users []*Association
	lf    float64
}

// Association is one user's association in an account: its shares, its
// decayed usage and its fair-share factor.
type Association struct {
	Assoc
	shares float64
	usage
	acct *accountUsage
	lf   float64
	// factor is the fair-share factor as of the last compute.
	factor float64
}

// Factor is the association's fair-share factor in [0, 1] as of the last
// Compute (0 before the first).
func (a *Association) Factor() float64 { return a.factor }

// NewFairShare returns an empty fair-share tree under p (its
// DecayHalfLife, and FairTree as of each Compute) and shares.
func NewFairShare(p *Params, shares Shares) *FairShare {
	return &FairShare{params: p, shares: shares, halfLife: p.DecayHalfLife,
		accounts: map[string]*accountUsage{}, assocs: map[Assoc]*Association{}}
}

// Dirty reports whether an association was added since the last Compute:
// the factors are stale until the next.
func (f *FairShare) Dirty() bool { return f.dirty }

// Association returns the association of a, creating it (and its account)
// with its shares, 1 where Shares names none.
func (f *FairShare) Association(now float64, a Assoc) *Association {
	if u, ok := f.assocs[a]; ok {
		return u
	}
	acct, ok := f.accounts[a.Account]
	if !ok {
		acct = &accountUsage{name: a.Account, shares: f.shares.account(a.Account)}
		acct.at = now
		f.accounts[a.Account] = acct
		f.order = append(f.order, acct)
	}
	u := &Association{Assoc: a, shares: f.shares.user(a), acct: acct}
	u.at = now
	acct.users = append(acct.users, u)
	f.assocs[a] = u
	f.dirty = true
	return u
}

// Run adds gpus (negative: removes them) to the service association u and
// its account receive from now on.
func (f *FairShare) Run(now float64, u *Association, gpus int) {
	u.advance(now, f.halfLife)
	u.acct.advance(now, f.halfLife)
	u.running += gpus
	u.acct.running += gpus
}

// Compute brings every usage to now and sets every association's factor.
func (f *FairShare) Compute(now float64) {
	f.dirty = false
	n := len(f.assocs)
	if n == 0 {
		return
	}
	var sharesTotal, usageTotal float64
	for _, a := range f.order {
		a.advance(now, f.halfLife)
		sharesTotal += a.shares
		usageTotal += a.value
		for _, u := range a.users {
			u.advance(now, f.halfLife)
		}
	}
	if !f.params.FairTree {
		f.classic(sharesTotal, usageTotal)
		return
	}
	// Fair Tree: siblings by level fair share S/U (no usage: +Inf), higher
	// first; users ranked depth-first, the first getting rank n; factor
	// rank/n. Equal level fair shares share a rank.
	for _, a := range f.order {
		a.lf = levelFS(a.shares, sharesTotal, a.value, usageTotal)
	}
	accts := slices.Clone(f.order)
	slices.SortStableFunc(accts, func(x, y *accountUsage) int { return byLevelFS(x.lf, y.lf, x.name, y.name) })
	rank := n
	users := make([]*Association, 0, n)
	for _, a := range accts {
		var st float64
		for _, u := range a.users {
			st += u.shares
		}
		users = append(users[:0], a.users...)
		for _, u := range users {
			u.lf = levelFS(u.shares, st, u.value, a.value)
		}
		slices.SortStableFunc(users, func(x, y *Association) int { return byLevelFS(x.lf, y.lf, x.User, y.User) })
		for i, u := range users {
			if i > 0 && u.lf == users[i-1].lf {
				u.factor = users[i-1].factor
			} else {
				u.factor = float64(rank) / float64(n)
			}
			rank--
		}
	}
}

// byLevelFS orders siblings by level fair share, higher first, then by
// name.
func byLevelFS(xl, yl float64, xn, yn string) int {
	if xl != yl {
		if xl > yl {
			return -1
		}
		return 1
	}
	return strings.Compare(xn, yn)
}

// levelFS is Fair Tree's level fair share: the normalised shares over the
// normalised usage among siblings; +Inf without usage, 0 without shares.
func levelFS(shares, sharesTotal, used, usedTotal float64) float64 {
	if shares <= 0 || sharesTotal <= 0 {
		return 0
	}
	if used <= 0 || usedTotal <= 0 {
		return math.Inf(1)
	}
	return (shares / sharesTotal) / (used / usedTotal)
}

// classic is the classic fair-share factor 2^(−U/S) of a two-level tree:
// S the association's normalised shares (its share of the account's times
// the account's share of root), U its usage over all usage.
func (f *FairShare) classic(sharesTotal, usageTotal float64) {
	for _, a := range f.order {
		var st float64
		for _, u := range a.users {
			st += u.shares
		}
		for _, u := range a.users {
			s := 0.0
			if st > 0 && sharesTotal > 0 {
				s = u.shares / st * a.shares / sharesTotal
			}
			norm := 0.0
			if usageTotal > 0 {
				norm = u.value / usageTotal
			}
			switch {
			case s <= 0:
				u.factor = 0
			default:
				u.factor = math.Exp2(-norm / s)
			}
		}
	}
}
