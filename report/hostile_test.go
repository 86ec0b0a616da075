package report

import (
	"bytes"
	"flag"
	"path/filepath"
	"testing"

	"github.com/asrpt/asrpt/internal/golden"
	"github.com/asrpt/asrpt/internal/safetext/hostile"
)

var updateHostile = flag.Bool("update-hostile", false, "rewrite testdata/fairness-hostile.golden")

// TestFairnessHostileNames: user, account and job names from a trace with
// control characters, bidi overrides and invalid UTF-8 are printed as
// escapes in the fairness tables (issue 25).
func TestFairnessHostileNames(t *testing.T) {
	names := hostile.Names()
	var accounts, users []Group
	var longest []WaitingJob
	for i, n := range names {
		accounts = append(accounts, Group{Name: "acct-" + n, Jobs: 1, GPUHours: float64(len(names) - i)})
		users = append(users, Group{Name: n, Jobs: 1, GPUHours: float64(len(names) - i)})
		longest = append(longest, WaitingJob{ID: "1" + n, User: n, Account: "acct-" + n, GPUs: 1, Wait: float64(100 - i)})
	}
	r := &Report{Workload: "trace\x1b[2J.csv", TableAccounts: len(names), TableUsers: len(names),
		Policies: []Summary{{Policy: "asrpt", FairnessReport: &FairnessReport{Accounts: accounts, Users: users, Longest: longest}}}}
	var buf bytes.Buffer
	if err := r.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	hostile.CheckClean(t, buf.String())
	golden.Check(t, filepath.Join("testdata", "fairness-hostile.golden"), buf.Bytes(), *updateHostile)
}
