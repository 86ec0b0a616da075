package sidecar

import (
	"fmt"
	"slices"
	"strings"

	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/predictor"
)

// ruleList reads v, a [[key]] list of at most max tables whose values are
// all strings named by fields, for a rule section of the configuration
// (profiles.rule, preemption.rule). For each table without a problem it
// calls each with the values by field name (a family reduced to its
// predictor.Family) and a function reporting a problem of that rule. Each
// problem names the rule by its position and carries its header's line.
func ruleList(v any, key string, max int, fields []string, name string, lines map[string]int,
	each func(vals map[string]string, add func(format string, args ...any))) Problems {
	tables, ok := v.([]map[string]any)
	if !ok {
		return Problems{{File: name, Line: lines[key], Key: key,
			Msg: fmt.Sprintf("want [[%s]] tables, have %s", key, tomlType(v))}}
	}
	if len(tables) > max {
		return Problems{{File: name, Line: lines[key], Key: key, Msg: fmt.Sprintf("%d rules: at most %d", len(tables), max)}}
	}
	var ps Problems
	for i, tbl := range tables {
		rk := fmt.Sprintf("%s[%d]", key, i+1)
		add := func(format string, args ...any) {
			ps = append(ps, Problem{File: name, Line: lines[rk], Key: rk, Msg: fmt.Sprintf(format, args...)})
		}
		vals := map[string]string{}
		bad := false
		for _, k := range sortedKeys(tbl) {
			if !slices.Contains(fields, k) {
				add("%s: unknown key (want %s)", k, strings.Join(fields, ", "))
				bad = true
				continue
			}
			var s string
			if err := str(&s)(tbl[k]); err != nil {
				add("%s: %v", k, err)
				bad = true
			}
			vals[k] = s
		}
		if bad {
			continue
		}
		if f := vals["family"]; f != "" {
			if vals["family"] = predictor.Family(f); vals["family"] == "" {
				add("family: a name of numbers, dates and hashes only has no family")
				continue
			}
		}
		each(vals, add)
	}
	return ps
}

// maxPreemptRules bounds [[preemption.rule]] entries.
const maxPreemptRules = 1000

// parsePreemptRules reads the [[preemption.rule]] list v (ruleList).
func parsePreemptRules(p *PreemptionConfig, v any, name string, lines map[string]int) Problems {
	p.Rules = []PreemptRule{}
	return ruleList(v, "preemption.rule", maxPreemptRules, []string{"family", "account", "qos", "stop"}, name, lines,
		func(vals map[string]string, add func(string, ...any)) {
			r := PreemptRule{Family: vals["family"], Account: vals["account"], QOS: vals["qos"]}
			if r.Family == "" && r.Account == "" && r.QOS == "" {
				add("a rule needs a family, an account or a qos to match")
				return
			}
			if vals["stop"] == "" {
				add("stop: missing: how the jobs stop, e.g. stop = \"USR1@120\" ([B:|F:]SIGNAL@SECONDS)")
				return
			}
			st, err := jobword.ParseStop(vals["stop"])
			if err != nil {
				add("stop: %v", err)
				return
			}
			r.Stop = st
			p.Rules = append(p.Rules, r)
		})
}
