package decision

import (
	"github.com/asrpt/asrpt/jobword"
)

// PreemptionConfig is the [[preemption.rule]] list: the site's opt-in to
// preemption for jobs whose comment declares no stop (docs/design.md,
// "Preempting the jobs that can resume"). A job's own asrpt:preempt word
// wins over a rule; the first rule a job matches gives its stop.
type PreemptionConfig struct {
	Rules []PreemptRule
}

// PreemptRule opts in the jobs of a job-name family, an account and/or a
// QOS (every key given must match; at least one is given), stopped by
// Stop.
type PreemptRule struct {
	// Family is normalised as the predictor does (predictor.Family).
	Family, Account, QOS string
	Stop                 jobword.Stop
}

// Matches reports whether the rule opts in a job of family, account and
// qos.
func (r *PreemptRule) Matches(family, account, qos string) bool {
	return (r.Family != "" || r.Account != "" || r.QOS != "") &&
		(r.Family == "" || r.Family == family) && (r.Account == "" || r.Account == account) && (r.QOS == "" || r.QOS == qos)
}

// rule returns the 1-based number and the stop of the first rule matching
// a job of family, account and qos; 0 when none does.
func (p *PreemptionConfig) rule(family, account, qos string) (int, jobword.Stop) {
	for i := range p.Rules {
		if p.Rules[i].Matches(family, account, qos) {
			return i + 1, p.Rules[i].Stop
		}
	}
	return 0, jobword.Stop{}
}
