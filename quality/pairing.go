package quality

import (
	"fmt"

	"github.com/asrpt/asrpt/report"
	"github.com/asrpt/asrpt/sim"
)

// pairedWorst is how many of the worst-harmed jobs a case keeps in its
// paired comparison (report.Paired.Worst): the suite's JSON stays small.
const pairedWorst = 3

// pairing keeps, while a case runs, the replays of the factor-mode
// comparison (the candidate in both modes and FactorBaseline), and when
// the case is done compares the candidate's with the baseline's job by
// job (report.ComparePaired) for each seed. Other replays are not kept.
type pairing struct {
	ns       int                    // seeds per case
	base     int                    // FactorBaseline's index in the policies; -1 when not run
	compared []int                  // the candidate's and its factor mode's indexes
	results  map[[2]int]*sim.Result // by (case×seed entry, policy)
	// err is the first comparison that failed (replays of different
	// jobs: a bug, never an input problem).
	err error
}

func newPairing(cfg Config, ns int) *pairing {
	cand := cfg.Candidate
	if cand == "" {
		cand = DefaultCandidate
	}
	p := &pairing{ns: ns, base: -1, results: map[[2]int]*sim.Result{}}
	for i, name := range cfg.Policies {
		switch name {
		case FactorBaseline:
			p.base = i
		case cand, factorName(cfg.Policies, cand):
			p.compared = append(p.compared, i)
		}
	}
	return p
}

// keep holds the result of policy index pol for entry e when the
// comparison needs it.
func (p *pairing) keep(e, pol int, r *sim.Result) {
	if p.base < 0 || r == nil {
		return
	}
	if pol == p.base {
		p.results[[2]int{e, pol}] = r
		return
	}
	for _, c := range p.compared {
		if c == pol {
			p.results[[2]int{e, pol}] = r
		}
	}
}

// pair compares, for every seed of case c, the candidate's replays with
// the baseline's (replayed with the first seed: it reads no prediction),
// stores the comparisons in the summaries and lets the replays go.
func (p *pairing) pair(cases []CaseResult, c int) {
	if p.base < 0 {
		return
	}
	first := c * p.ns
	base := p.results[[2]int{first, p.base}]
	for e := first; e < first+p.ns; e++ {
		for _, pol := range p.compared {
			r := p.results[[2]int{e, pol}]
			delete(p.results, [2]int{e, pol})
			if r == nil || base == nil {
				continue
			}
			s, b := &cases[e].Policies[pol], &cases[first].Policies[p.base]
			pr, err := report.ComparePaired(r, base, s.FairnessReport, b.FairnessReport, pairedWorst)
			if err != nil && p.err == nil {
				p.err = fmt.Errorf("case %s: %w", cases[e].Name, err)
			}
			s.Paired = pr
		}
	}
	delete(p.results, [2]int{first, p.base})
}
