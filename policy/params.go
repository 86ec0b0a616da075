package policy

import (
	"fmt"
	"strconv"
)

// Upper bounds of the Params values that Validate accepts. Past them a
// setting changes nothing more (every job light, every placement
// consolidated, every heavy job waiting for ever) or products of it with
// times leave the range the simulator resolves.
const (
	// MaxCommHeavy is the largest CommHeavy: 1000 (no catalogue job's
	// α_max/α_min comes near it, so every job is light).
	MaxCommHeavy = 1000
	// MaxTau is the largest Tau: 1000 (a heavy job may wait 1000 times
	// its virtual size for a consolidated placement).
	MaxTau = 1000
	// MaxSlack is the largest Slack: 1000 (every placement within
	// 1001·α_min counts as consolidated).
	MaxSlack = 1000
	// MaxWaitLimit is the largest WaitLimit: 10 years, seconds.
	MaxWaitLimit = 10 * 365 * 86400
	// MaxWaitFactor is the largest WaitFactor and WaitScale: 1e6.
	MaxWaitFactor = 1e6
	// MaxPreemptionsBound is the largest MaxPreemptions: 1000.
	MaxPreemptionsBound = 1000
)

// ParamError is a Params value out of range. Name is the tunable's
// snake_case name (comm_heavy, tau, slack, depth, reservations, unseen,
// rank, wait_limit, wait_factor, wait_scale, overdue_share, account_guard, shadow_wait, preempt_exempt, max_preemptions,
// preempt_budget, restart_cost, lost_work): the sidecar configuration's key under policy., and with '-' for
// '_' the replay's flag.
type ParamError struct {
	Name  string
	Value string // the value as given
	Want  string // the values allowed
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("policy %s %s: want %s", e.Name, e.Value, e.Want)
}

// Validate returns a *ParamError for the first tunable out of range, in
// the order of the Params fields, or nil:
//   - CommHeavy: a finite number in 1..MaxCommHeavy;
//   - Tau: a finite number in 0..MaxTau;
//   - Slack: a finite number in 0..MaxSlack;
//   - Depth: ≥ 0 (0: no bound);
//   - Reservations: ≥ 0 (0: none; the sidecar asks for ≥ 1);
//   - Unseen and Rank: one of their named values;
//   - WaitLimit: a finite number of seconds in 0..MaxWaitLimit (0: none);
//   - WaitFactor, WaitScale: a finite number in 0..MaxWaitFactor (0: none);
//   - OverdueShare: a finite number in 0..1 (0: no cap);
//   - PreemptExempt, LASExempt, RestartCost, RequeueDelay, LostWork: seconds in 0..MaxWaitLimit;
//   - MaxPreemptions: 0..MaxPreemptionsBound; PreemptBudget: ≥ 0;
//   - PreemptMargin: a finite number in 1..MaxWaitFactor.
//
// NaN and infinities are out of every range.
func (p Params) Validate() error {
	num := func(name string, x, lo, hi float64) error {
		if x >= lo && x <= hi { // false for NaN
			return nil
		}
		return &ParamError{Name: name, Value: strconv.FormatFloat(x, 'g', -1, 64),
			Want: fmt.Sprintf("a finite number in %g..%g", lo, hi)}
	}
	if err := num("comm_heavy", p.CommHeavy, 1, MaxCommHeavy); err != nil {
		return err
	}
	if err := num("tau", p.Tau, 0, MaxTau); err != nil {
		return err
	}
	if err := num("slack", p.Slack, 0, MaxSlack); err != nil {
		return err
	}
	if p.Unseen != UnseenFirst && p.Unseen != UnseenFallback {
		return &ParamError{Name: "unseen", Value: strconv.Itoa(int(p.Unseen)), Want: "first or fallback"}
	}
	if p.Depth < 0 {
		return &ParamError{Name: "depth", Value: strconv.Itoa(p.Depth), Want: "an integer ≥ 0 (0: no bound)"}
	}
	if p.Reservations < 0 {
		return &ParamError{Name: "reservations", Value: strconv.Itoa(p.Reservations), Want: "an integer ≥ 0 (0: none)"}
	}
	if p.Rank != RankMedian && p.Rank != RankExpected {
		return &ParamError{Name: "rank", Value: strconv.Itoa(int(p.Rank)), Want: "median or expected"}
	}
	if err := num("wait_limit", p.WaitLimit, 0, MaxWaitLimit); err != nil {
		return err
	}
	if err := num("wait_factor", p.WaitFactor, 0, MaxWaitFactor); err != nil {
		return err
	}
	if err := num("wait_scale", p.WaitScale, 0, MaxWaitFactor); err != nil {
		return err
	}
	if err := num("overdue_share", p.OverdueShare, 0, 1); err != nil {
		return err
	}
	if err := num("account_guard", p.AccountGuard, 0, MaxWaitFactor); err != nil {
		return err
	}
	if err := num("shadow_wait", p.ShadowWait, 0, MaxWaitFactor); err != nil {
		return err
	}
	if err := num("preempt_exempt", p.PreemptExempt, 0, MaxWaitLimit); err != nil {
		return err
	}
	if p.MaxPreemptions < 0 || p.MaxPreemptions > MaxPreemptionsBound {
		return &ParamError{Name: "max_preemptions", Value: strconv.Itoa(p.MaxPreemptions), Want: fmt.Sprintf("an integer in 0..%d", MaxPreemptionsBound)}
	}
	if p.PreemptBudget < 0 {
		return &ParamError{Name: "preempt_budget", Value: strconv.Itoa(p.PreemptBudget), Want: "an integer ≥ 0"}
	}
	if err := num("las_exempt", p.LASExempt, 0, MaxWaitLimit); err != nil {
		return err
	}
	if err := num("preempt_margin", p.PreemptMargin, 1, MaxWaitFactor); err != nil {
		return err
	}
	if err := num("restart_cost", p.RestartCost, 0, MaxWaitLimit); err != nil {
		return err
	}
	if err := num("requeue_delay", p.RequeueDelay, 0, MaxWaitLimit); err != nil {
		return err
	}
	return num("lost_work", p.LostWork, 0, MaxWaitLimit)
}
