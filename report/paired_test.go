package report

import (
	"strings"
	"testing"

	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/sim"
)

// pairedResults builds a policy's and a baseline's results of the same
// jobs from (gpus, run, wait, base wait) rows.
func pairedResults(t *testing.T, rows [][4]float64) (r, base *sim.Result) {
	t.Helper()
	jobs := make([]job.Job, len(rows))
	res, bres := make([]sim.JobResult, len(rows)), make([]sim.JobResult, len(rows))
	for i, row := range rows {
		g, run, wait, bwait := int(row[0]), row[1], row[2], row[3]
		acct := "small"
		if g > 8 {
			acct = "wide"
		}
		jobs[i] = job.Job{ID: string(rune('a' + i)), User: "u", Account: acct, GPUs: g, RunTime: run}
		res[i] = sim.JobResult{GPUs: int32(g), Start: wait, End: wait + run, RunTime: run}
		bres[i] = sim.JobResult{GPUs: int32(g), Start: bwait, End: bwait + run, RunTime: run}
	}
	var err error
	if r, err = sim.NewResult(jobs, res, 64); err != nil {
		t.Fatal(err)
	}
	if base, err = sim.NewResult(jobs, bres, 64); err != nil {
		t.Fatal(err)
	}
	r.Policy, base.Policy = "asrpt", "multifactor"
	return r, base
}

func TestComparePaired(t *testing.T) {
	r, base := pairedResults(t, [][4]float64{
		{1, 100, 0, 0},        // a: unchanged
		{1, 100, 4000, 0},     // b: 4000 s later, past max(1 h, 100 s): harmed
		{16, 7200, 7000, 0},   // c: 7000 s later, within max(1 h, 7200 s): not harmed
		{16, 100, 0, 5000},    // d: 5000 s sooner: helped
		{32, 100, 20000, 100}, // e: 19900 s later: harmed, the worst
	})
	p, err := ComparePaired(r, base, nil, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.Against != "multifactor" || p.Jobs != 5 || p.Harmed != 2 || p.Helped != 1 || p.HarmedShare != 0.4 {
		t.Errorf("against %s, %d jobs, harmed %d (%.2f), helped %d; want multifactor, 5, 2 (0.40), 1", p.Against, p.Jobs, p.Harmed, p.HarmedShare, p.Helped)
	}
	if p.JCTDiff.Max != 19900 || p.JCTDiff.Min != -5000 || p.JCTDiff.P50 != 4000 || p.WaitDiff.Max != 19900 {
		t.Errorf("JCT diff %+v, wait diff %+v", p.JCTDiff, p.WaitDiff)
	}
	if len(p.Worst) != 2 || p.Worst[0].ID != "e" || p.Worst[1].ID != "c" || p.Worst[0].BaseWait != 100 || p.Worst[0].JCTDiff != 19900 {
		t.Errorf("worst %+v, want e then c", p.Worst)
	}
	sizes := map[string]PairedGroup{}
	for _, g := range p.Sizes {
		sizes[g.Name] = g
	}
	if g := sizes["1"]; g.Jobs != 2 || g.Harmed != 1 || g.MeanJCTDiff != 2000 {
		t.Errorf("size 1: %+v", g)
	}
	if g := sizes["9-32"]; g.Jobs != 3 || g.Harmed != 1 || g.Helped != 1 {
		t.Errorf("size 9-32: %+v", g)
	}
	if len(p.Accounts) != 2 || p.Accounts[0].Name != "small" || p.Accounts[1].Harmed != 1 {
		t.Errorf("accounts %+v", p.Accounts)
	}
	// The accounts' shares come from the fairness reports.
	fr, bfr := Fairness(r, nil, 0), Fairness(base, nil, 0)
	if p, err = ComparePaired(r, base, &fr, &bfr, 0); err != nil {
		t.Fatal(err)
	}
	if p.ShareAccount == "" || p.Worst != nil {
		t.Errorf("share change %v of %q, worst %v: want an account, no worst jobs", p.ShareChange, p.ShareAccount, p.Worst)
	}
	// Replays of other jobs are refused.
	other, _ := pairedResults(t, [][4]float64{{1, 1, 0, 0}})
	if _, err := ComparePaired(r, other, nil, nil, 1); err == nil {
		t.Error("different lengths: no error")
	}
}

func TestSizeClass(t *testing.T) {
	for g, want := range map[int]string{1: "1", 2: "2-4", 4: "2-4", 8: "5-8", 9: "9-32", 64: "33-128", 256: "129+"} {
		if got := SizeClass(g); got != want {
			t.Errorf("SizeClass(%d) = %s, want %s", g, got, want)
		}
	}
}

// TestWritePaired: the table names the baseline and every compared
// policy, escapes what users wrote, and says nothing without a baseline.
func TestWritePaired(t *testing.T) {
	r, base := pairedResults(t, [][4]float64{{1, 100, 4000, 0}, {16, 100, 0, 0}})
	p, err := ComparePaired(r, base, nil, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.Worst[0].User = "evil\x1b[2J"
	rep := &Report{Against: "multifactor", Policies: []Summary{{Policy: "asrpt", Paired: p}, {Policy: "multifactor"}}}
	var b strings.Builder
	if err := rep.writePaired(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"paired with multifactor", "asrpt against multifactor", "harmed / jobs", `evil\x1b[2J`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("raw escape in the output")
	}
	b.Reset()
	rep.Against = ""
	if err := rep.writePaired(&b); err != nil || b.Len() != 0 {
		t.Errorf("no baseline: %q, %v", b.String(), err)
	}
}
