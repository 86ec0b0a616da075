package policy

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	edge := DefaultParams()
	edge.CommHeavy, edge.Tau, edge.Slack, edge.Depth, edge.Reservations = MaxCommHeavy, MaxTau, MaxSlack, 0, 0
	edge.WaitLimit, edge.WaitFactor = MaxWaitLimit, MaxWaitFactor
	if err := edge.Validate(); err != nil {
		t.Fatalf("limits: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(*Params)
		param string
		want  string
	}{
		{"tau NaN", func(p *Params) { p.Tau = math.NaN() }, "tau", "policy tau NaN: want a finite number in 0..1000"},
		{"tau +Inf", func(p *Params) { p.Tau = math.Inf(1) }, "tau", "+Inf"},
		{"tau negative", func(p *Params) { p.Tau = -0.5 }, "tau", "-0.5"},
		{"slack -1", func(p *Params) { p.Slack = -1 }, "slack", "policy slack -1: want a finite number in 0..1000"},
		{"slack past MaxSlack", func(p *Params) { p.Slack = 1001 }, "slack", "1001"},
		{"comm_heavy 0.1", func(p *Params) { p.CommHeavy = 0.1 }, "comm_heavy", "policy comm_heavy 0.1: want a finite number in 1..1000"},
		{"comm_heavy NaN", func(p *Params) { p.CommHeavy = math.NaN() }, "comm_heavy", "NaN"},
		{"depth -7", func(p *Params) { p.Depth = -7 }, "depth", "policy depth -7: want an integer ≥ 0 (0: no bound)"},
		{"reservations -1", func(p *Params) { p.Reservations = -1 }, "reservations", "(0: none)"},
		{"unseen out of range", func(p *Params) { p.Unseen = 5 }, "unseen", "first or fallback"},
		{"rank out of range", func(p *Params) { p.Rank = -1 }, "rank", "median or expected"},
		{"wait_limit negative", func(p *Params) { p.WaitLimit = -1 }, "wait_limit", "policy wait_limit -1: want a finite number in 0..3.1536e+08"},
		{"wait_limit +Inf", func(p *Params) { p.WaitLimit = math.Inf(1) }, "wait_limit", "+Inf"},
		{"wait_factor NaN", func(p *Params) { p.WaitFactor = math.NaN() }, "wait_factor", "NaN"},
		{"wait_factor past max", func(p *Params) { p.WaitFactor = 2e6 }, "wait_factor", "2e+06"},
		{"wait_scale negative", func(p *Params) { p.WaitScale = -2 }, "wait_scale", "-2"},
		{"overdue_share past 1", func(p *Params) { p.OverdueShare = 1.5 }, "overdue_share", "policy overdue_share 1.5: want a finite number in 0..1"},
		{"overdue_share NaN", func(p *Params) { p.OverdueShare = math.NaN() }, "overdue_share", "NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := DefaultParams()
			tc.edit(&p)
			err := p.Validate()
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Name != tc.param || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a ParamError for %s mentioning %q", err, tc.param, tc.want)
			}
		})
	}
}
