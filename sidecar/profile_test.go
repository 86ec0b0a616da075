package sidecar

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/placement"
)

// TestProfilesPlaceLiveJobs: a job that names its model in its comment is placed by
// that model's profile (Heavy-Edge, α reported), a rule gives a family its
// model, a bad comment word is reported and the job falls to the default
// data-parallel profile, and the node list written is the placement's.
func TestProfilesPlaceLiveJobs(t *testing.T) {
	h := newHarness(t, 4, 4, false, func(c *Config) {
		c.Profiles.Rules = []jobprofile.Rule{{Family: "train-bert", Model: "bert-large"}}
	})
	named := pend("1", "mid", 4, t0)
	named.GPUs.Total = 8 // two nodes of four
	named.Comment = "lr=3e-4 asrpt:model=gpt2-1.5b"
	h.fake.Submit(named)
	bad := pend("2", "short", 2, t0)
	bad.Comment = "asrpt:model=gpt-17"
	h.fake.Submit(bad)
	h.fake.Submit(pend("3", "train-bert-run3", 4, t0))
	plain := pend("4", "long", 1, t0)
	h.fake.Submit(plain)

	rep := h.plan(t0)
	for _, tc := range []struct {
		id, profile, source, problem string
		heavy                        bool
	}{
		{"1", "gpt2-1.5b", "comment", "", true},
		{"2", placement.DataParallelModel, "default", "unknown model", false},
		{"3", "bert-large", "rule", "", false},
		{"4", placement.DataParallelModel, "default", "", false},
	} {
		r := planRow(t, rep, tc.id)
		if r.Profile != tc.profile || r.ProfileSource != tc.source || !strings.Contains(r.ProfileProblem, tc.problem) ||
			(tc.problem == "") != (r.ProfileProblem == "") {
			t.Errorf("job %s: profile %s from %s (problem %q), want %s from %s (%q)", tc.id, r.Profile, r.ProfileSource, r.ProfileProblem, tc.profile, tc.source, tc.problem)
		}
		if r.AlphaMin <= 0 {
			t.Errorf("job %s: alpha_min %v", tc.id, r.AlphaMin)
		}
		if tc.id == "1" && r.Heavy != tc.heavy || tc.id != "1" && tc.id != "3" && r.Heavy {
			t.Errorf("job %s: heavy %v", tc.id, r.Heavy)
		}
	}
	r := planRow(t, rep, "1")
	if r.Stage != "dispatched" || len(r.Nodes) != 2 {
		t.Fatalf("job 1: %+v, want dispatched on two nodes", r)
	}
	if !(r.Alpha > 0 && r.Alpha <= r.AlphaMin*(1+h.cfg.Params.Slack)) {
		t.Errorf("job 1: α %v on %v, α_min %v: not consolidated", r.Alpha, r.Nodes, r.AlphaMin)
	}
	if got := testutil.ToFloat64(h.s.m.profileProblems.WithLabelValues("comment")); got != 1 {
		t.Errorf("asrpt_profile_problems_total{kind=comment} = %v, want 1", got)
	}
	for src, want := range map[string]float64{"comment": 1, "rule": 1, "default": 2} {
		if got := testutil.ToFloat64(h.s.m.profiles.WithLabelValues(src)); got != want {
			t.Errorf("asrpt_profiles_total{source=%s} = %v, want %v", src, got, want)
		}
	}

	// The live cycle writes the same node list, and a restart keeps the
	// profiles.
	h.cycle(t0)
	j, _ := h.fake.Job("1")
	if strings.Join(j.RequiredNodes, ",") != strings.Join(r.Nodes, ",") {
		t.Errorf("job 1: node list %v written, plan %v", j.RequiredNodes, r.Nodes)
	}
	h.s = h.newSidecar()
	rep = h.plan(t0)
	for id, want := range map[string]string{"1": "gpt2-1.5b", "3": "bert-large", "4": placement.DataParallelModel} {
		if r := planRow(t, rep, id); r.Profile != want {
			t.Errorf("after a restart job %s has profile %s, want %s", id, r.Profile, want)
		}
	}
}
