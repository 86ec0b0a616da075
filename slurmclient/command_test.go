package slurmclient

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	api38 "github.com/asrpt/asrpt/slurmclient/internal/api/v0038"
	api42 "github.com/asrpt/asrpt/slurmclient/internal/api/v0042"
	api44 "github.com/asrpt/asrpt/slurmclient/internal/api/v0044"
)

// commandUsesSubmitLine says, per REST API version, whether a job's
// Command hashes the submit line besides the working directory: only where
// both the job list and accounting report it, so that a pending job and its
// later accounting record get the same key.
var commandUsesSubmitLine = map[string]bool{"v0.0.38": false, "v0.0.42": false, "v0.0.44": true}

// TestCommandSubmitLineFollowsTheSchemas: commandUsesSubmitLine (and so
// the -submitline of adapters.go) is true exactly where the version's job
// list and accounting job schemas both have a submit_line.
func TestCommandSubmitLineFollowsTheSchemas(t *testing.T) {
	has := func(v any) bool {
		_, ok := reflect.TypeOf(v).FieldByName("SubmitLine")
		return ok
	}
	for _, c := range []struct {
		api           string
		jobList, acct any
	}{
		// dbv0.0.38 jobs are decoded into the hand-written dbJob38.
		{"v0.0.38", api38.V0038JobResponseProperties{}, dbJob38{}},
		{"v0.0.42", api42.V0042JobInfo{}, api42.V0042Job{}},
		{"v0.0.44", api44.V0044JobInfo{}, api44.V0044Job{}},
	} {
		if got := has(c.jobList) && has(c.acct); got != commandUsesSubmitLine[c.api] {
			t.Errorf("%s: job list and accounting both have submit_line: %t; commandUsesSubmitLine says %t",
				c.api, got, commandUsesSubmitLine[c.api])
		}
	}
	if !has(api38.Dbv0038Job{}) && has(dbJob38{}) {
		t.Error("dbJob38 reads a submit_line the dbv0.0.38 schema lacks")
	}
}

// TestCommandMatchesAccounting replays each lab's recorded job list and
// accounting answer: every job recorded in both gets the same Command from
// Client.Job (the job-list record) as from AccountingJobs: a non-empty one
// where both report the submit line (v0.0.44), none elsewhere (a directory
// alone is no command). 24.11's accounting records a submit_line its job
// list lacks: the keys match only because neither side hashes it.
func TestCommandMatchesAccounting(t *testing.T) {
	for _, r := range releases {
		t.Run(r.rel, func(t *testing.T) {
			acct, list := fixture(t, r.rel, "accounting"), fixture(t, r.rel, "jobs")
			f := newFake(t)
			p, db := prefixes(r.api)
			f.set("GET", db+"/jobs", 200, acct)
			c := f.client(t, r.api)
			finished, err := c.AccountingJobs(ctxT(t), time.Unix(0, 0), time.Unix(1<<40, 0))
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			for _, j := range rawList(raw(t, list), "jobs") {
				listed[fmt.Sprint(j["job_id"])] = true
			}
			matched := 0
			for _, a := range finished {
				if !listed[a.ID] {
					continue
				}
				f.set("GET", p+"/job/"+a.ID, 200, list)
				j, err := c.Job(ctxT(t), a.ID)
				if err != nil {
					t.Fatalf("job %s: %v", a.ID, err)
				}
				if j.Command != a.Command || (j.Command != 0) != commandUsesSubmitLine[r.api] {
					t.Errorf("job %s: job list Command %x, accounting %x", a.ID, j.Command, a.Command)
				}
				matched++
			}
			if matched == 0 {
				t.Fatal("no job recorded in both the job list and accounting")
			}
		})
	}
}
