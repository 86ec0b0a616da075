package policy

import (
	"fmt"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// TestMultifactorOrder checks the multifactor model's order: an account
// that has used the cluster ranks below one that has not (fair share), a
// higher partition tier ranks first whatever the priority, and under
// asrpt-factor the A-SRPT rank, added as the site factor, decides between
// jobs when its range outweighs fair share and does not when it is 0.
func TestMultifactorOrder(t *testing.T) {
	mk := func(id, account string, submit, run float64, partition string) *job.Job {
		return &job.Job{ID: id, User: "u-" + account, Account: account, Submit: submit, GPUs: 8,
			RunTime: run, TimeLimit: run, Partition: partition}
	}
	setup := func(name string, siteMax uint32) (Policy, []*Task) {
		site := ExampleSite()
		site.SiteFactorMax = siteMax
		site.Priority.Partitions = []multifactor.Partition{{Name: "gpu", JobFactor: 1, Tier: 1, Default: true},
			{Name: "urgent", JobFactor: 1, Tier: 2}}
		env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
		env.Site = site
		pol, err := New(name, env)
		if err != nil {
			t.Fatal(err)
		}
		jobs := []*job.Job{
			mk("warm", "over", 0, 1000, ""),   // gives account "over" usage
			mk("long", "under", 10, 5000, ""), // under-served, long
			mk("short", "over", 20, 50, ""),   // over-served, short
			mk("tier", "over", 30, 5000, "urgent"),
		}
		var ts []*Task
		for i, j := range jobs {
			task, err := env.NewTask(j, i, prediction.Estimate{Seconds: j.RunTime, Known: true})
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, task)
		}
		free := placement.NewFree(env.Cluster)
		pol.Arrive(0, ts[0])
		if ds := pol.Schedule(0, free); len(ds) != 1 {
			t.Fatalf("%s: warm-up job did not start: %v", name, ds)
		}
		for _, task := range ts[1:] {
			pol.Arrive(task.Submit, task)
			pol.Schedule(task.Submit, free)
		}
		if err := free.Give(&ts[0].Placement); err != nil {
			t.Fatal(err)
		}
		pol.Finish(1000, ts[0])
		return pol, ts
	}
	tests := []struct {
		name    string
		siteMax uint32
		want    []string
	}{
		{"multifactor", 0, []string{"tier", "long", "short"}},
		{"asrpt-factor", 0, []string{"tier", "long", "short"}},
		{"asrpt-factor", 100000, []string{"tier", "short", "long"}},
	}
	for _, tc := range tests {
		pol, _ := setup(tc.name, tc.siteMax)
		free := fullFree(t, pol.(*multifactorPolicy).env)
		pol.Schedule(1400, free) // past a PriorityCalcPeriod: fair share counts the warm-up
		if got := ids(pol.Pending()); !equal(got, tc.want) {
			t.Errorf("%s, site factor range %d: pending %v, want %v", tc.name, tc.siteMax, got, tc.want)
		}
	}
}

// TestSiteFactorsWriteBound: asrpt-factor's site factors are what the
// sidecar would have written under its write bound (multifactor.FactorDue):
// exact in the head region, within site_factor_max/FactorTolerance of the
// rank's factor elsewhere, and left alone there when they moved less.
func TestSiteFactorsWriteBound(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	site := ExampleSite()
	site.SiteFactorMax = 6400
	env.Site = site
	pol, err := New("asrpt-factor", env)
	if err != nil {
		t.Fatal(err)
	}
	m := pol.(*multifactorPolicy)
	tol := int64(site.SiteFactorMax / multifactor.FactorTolerance)
	stale := 0
	for i := range 300 {
		// Run times spread so that arrivals land all over the order.
		run := float64(100 + (i*7919)%5000)
		j := &job.Job{ID: fmt.Sprint(i), User: "u", Account: "a", Submit: float64(i), GPUs: 1 + i%8, RunTime: run, TimeLimit: run}
		task, err := env.NewTask(j, i, prediction.Estimate{Seconds: run, Known: true})
		if err != nil {
			t.Fatal(err)
		}
		pol.Arrive(j.Submit, task)
		pol.Pending()
		order := m.inner.appendPending(nil)
		want := multifactor.SiteFactors(len(order), site.SiteFactorMax, nil)
		for r, o := range order {
			d := int64(o.site) - int64(want[r])
			switch {
			case (r < multifactor.FactorHead || o.released) && d != 0:
				t.Fatalf("after %d arrivals: job %s at rank %d (head region) holds %d, want %d", i+1, o.ID, r, o.site, want[r])
			case d > tol || -d > tol:
				t.Fatalf("after %d arrivals: job %s at rank %d holds %d, %d from its rank's %d (tolerance %d)", i+1, o.ID, r, o.site, d, want[r], tol)
			case d != 0:
				stale++
			}
		}
	}
	if stale == 0 {
		t.Error("no job ever kept a factor within the tolerance: the bound was not exercised")
	}
}

// TestMultifactorInsertKeepsOrder: a job arriving in a sorted queue is
// put at its place, so the queue is always what a full sort would make of
// it, through arrivals between and across PriorityCalcPeriods, partitions
// of two tiers, equal submit times and scheduling passes.
func TestMultifactorInsertKeepsOrder(t *testing.T) {
	site := ExampleSite()
	site.Priority.Partitions = []multifactor.Partition{{Name: "gpu", JobFactor: 1, Tier: 1, Default: true},
		{Name: "urgent", JobFactor: 1, Tier: 2}}
	env := NewEnv(cluster.Uniform(2, 8), DefaultParams())
	env.Site = site
	pol, err := New("multifactor", env)
	if err != nil {
		t.Fatal(err)
	}
	m := pol.(*multifactorPolicy)
	free := placement.NewFree(env.Cluster)
	inserted := 0
	for i := range 400 {
		submit := float64(i/3) * 70 // three jobs at each instant
		j := &job.Job{ID: fmt.Sprint(i), User: fmt.Sprintf("u%d", i%5), Account: fmt.Sprintf("a%d", i%3), Submit: submit,
			GPUs: 1 << (i % 4), RunTime: 3000, TimeLimit: 3600}
		if i%7 == 0 {
			j.Partition = "urgent"
		}
		task, err := env.NewTask(j, i, prediction.Estimate{Seconds: j.RunTime, Known: true})
		if err != nil {
			t.Fatal(err)
		}
		if !m.unsorted {
			inserted++
		}
		pol.Arrive(submit, task)
		if m.unsorted {
			pol.Schedule(submit, free) // may start jobs (the queue stays in order)
			pol.Pending()              // sorts
			continue
		}
		got := append([]*Task{}, m.pend...)
		m.unsorted = true
		m.sort()
		if !equal(ids(got), ids(m.pend)) {
			t.Fatalf("after job %d arrived: queue %v, a full sort gives %v", i, ids(got), ids(m.pend))
		}
	}
	if inserted < 100 {
		t.Errorf("only %d of 400 arrivals found the queue sorted: the insertion path went untested", inserted)
	}
}
