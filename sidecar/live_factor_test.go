//go:build integration

package sidecar

// Factor mode on the real labs, with fair share switched on: the sidecar
// writes site factors, which the REST API's priority and sprio's SITE
// column show; the fair-share factor keeps counting (a job of an
// over-served account ranks below equal jobs of an under-served one, while
// the site factors order the jobs of one account); and the giveback sets
// the factors back to 0. On 22.05, whose REST API cannot write a site
// factor, factor mode refuses to start unless priority_fallback is set.
//
//	bash test/slurmlab/lab.sh up 24.11
//	SLURMLAB_LABS=24.11 go test -tags integration -count=1 -run LiveFactor -v ./sidecar/

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/slurmclient"
	"github.com/asrpt/asrpt/slurmconf"
	"github.com/asrpt/asrpt/test/slurmlab"
)

// The accounts of the fair-share test, under root with equal shares: the
// blockers run in overServed (so it has usage), the jobs of underServed
// never run.
const (
	overServed  = "asrpt-fs-over"
	underServed = "asrpt-fs-under"
)

// fairShareAccounts creates overServed (alice) and underServed (bob) once;
// they stay in the lab's accounting database.
func fairShareAccounts(ctx context.Context, t *testing.T, lab *slurmlab.Lab) {
	t.Helper()
	have, err := lab.Run(ctx, "sacctmgr", "-n", "-P", "show", "assoc", "format=account,user")
	if err != nil {
		t.Fatal(err)
	}
	for acct, user := range map[string]string{overServed: "alice", underServed: "bob"} {
		if strings.Contains(have, acct+"|"+user+"\n") {
			continue
		}
		if _, err := lab.Run(ctx, "sacctmgr", "-i", "add", "account", acct, "parent=root", "fairshare=100"); err != nil &&
			!strings.Contains(err.Error(), "Nothing new added") {
			t.Fatal(err)
		}
		if _, err := lab.Run(ctx, "sacctmgr", "-i", "add", "user", user, "account="+acct); err != nil {
			t.Fatal(err)
		}
	}
}

// sprioRow is one job's line of sprio: the priority and its weighted
// fair-share and site parts.
type sprioRow struct{ prio, fairshare, site int64 }

// sprio returns the rows of the jobs ids (every pending job's, filtered:
// sprio -j with several ids answers "Invalid job id" on 24.11).
func sprio(ctx context.Context, t *testing.T, lab *slurmlab.Lab, ids ...string) map[string]sprioRow {
	t.Helper()
	out, err := lab.Run(ctx, "sprio", "-h", "-o", "%i %Y %F %S")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]sprioRow{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 0 || !slices.Contains(ids, f[0]) {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("sprio line %q", line)
		}
		var r sprioRow
		for i, dst := range []*int64{&r.prio, &r.fairshare, &r.site} {
			if *dst, err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
				t.Fatalf("sprio line %q: %v", line, err)
			}
		}
		rows[f[0]] = r
	}
	if len(rows) != len(ids) {
		t.Fatalf("sprio shows %v of jobs %v:\n%s", rows, ids, out)
	}
	return rows
}

func TestLiveFactor(t *testing.T) {
	forLabsParallel(t, func(t *testing.T, lab *slurmlab.Lab) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		if lab.Version == "22.05" {
			liveFactorRefused(ctx, t, lab)
			return
		}
		liveFactor(ctx, t, lab)
	})
}

// liveFactorRefused: factor mode against a REST API without site_factor
// refuses to start, naming the release; with priority_fallback it runs in
// priority mode.
func liveFactorRefused(ctx context.Context, t *testing.T, lab *slurmlab.Lab) {
	l := newLive(t, lab, "", func(c *Config) { c.WriteMode, c.PriorityFallback = WritePriority, false })
	c, err := slurmconf.LoadCluster(lab.ConfDir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := l.s.cfg
	cfg.WriteMode = WriteFactor
	version := "Slurm " + lab.Release + ", REST API v0.0.38"
	_, err = New(cfg, Options{Cluster: c, Slurm: l.probe, Log: zerolog.Nop(), SlurmVersion: version})
	if !errors.Is(err, ErrNoSiteFactor) || !strings.Contains(err.Error(), version) {
		t.Fatalf("factor mode on %s: %v", lab.Release, err)
	}
	t.Logf("refused: %v", err)
	cfg.PriorityFallback = true
	s, err := New(cfg, Options{Cluster: c, Slurm: l.probe, Log: zerolog.Nop(), SlurmVersion: version})
	if err != nil || s.state.Mode != WritePriority {
		t.Fatalf("with priority_fallback: %v (mode %s)", err, s.state.Mode)
	}
	if l.probe.SupportsSiteFactor() {
		t.Error("the v0.0.38 client claims site factors")
	}
}

func liveFactor(ctx context.Context, t *testing.T, lab *slurmlab.Lab) {
	fairShareAccounts(ctx, t, lab)
	// Registered first, so that it runs after the jobs are cancelled (a
	// restart waits for the nodes, which pending jobs may hold planned).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := lab.SetPriorityWeights(ctx, "zero"); err != nil {
			t.Errorf("restoring the weights: %v", err)
		}
	})
	// The cluster filled by alice's jobs in overServed; they run across
	// the restart below, whose decay pass charges their usage.
	blockers := newLive(t, lab, "", nil)
	for range lab.Nodes {
		blockers.submit("alice", "asrpt-factor-blocker", lab.GPUsPerNode, 600, "-A", overServed)
	}
	blockers.waitFor("the blockers running", time.Minute, func() bool {
		out, err := lab.Run(ctx, "squeue", "-h", "-t", "R", "-A", overServed, "-o", "%i")
		return err == nil && len(strings.Fields(out)) == lab.Nodes
	})
	time.Sleep(2 * time.Second)
	if err := lab.SetPriorityWeights(ctx, "fairshare"); err != nil {
		t.Fatal(err)
	}
	// Equal jobs: one of alice in overServed, then two of bob in
	// underServed, pending for resources (sprio shows only jobs that may
	// start: not those waiting for a begin time).
	over := blockers.submitNow("alice", "asrpt-factor", 1, 60, "-A", overServed)
	u1 := blockers.submitNow("bob", "asrpt-factor", 1, 60, "-A", underServed)
	u2 := blockers.submitNow("bob", "asrpt-factor", 1, 60, "-A", underServed)
	ids := []string{over, u1, u2}
	before := sprio(ctx, t, lab, ids...)
	gap := before[u1].fairshare - before[over].fairshare
	if gap <= 0 || before[u2].fairshare != before[u1].fairshare || before[over].site != 0 {
		t.Fatalf("fair share before the sidecar: %+v (over-served %s, under-served %s %s)", before, over, u1, u2)
	}
	t.Logf("sprio before: %+v; fair-share gap %d", before, gap)

	// A site-factor range of half the gap: enough to order the jobs of one
	// account, not to undo fair share between the two.
	l := newLive(t, lab, "", func(c *Config) {
		c.WriteMode, c.SiteFactorMax = WriteFactor, uint32(max(gap/2, 2))
		c.Scope.Partitions, c.Scope.Accounts = []string{lab.Partition}, []string{overServed, underServed}
	})
	l.start()
	l.waitFor("site factors written", 30*time.Second, func() bool {
		p := l.s.lastPlan.Load()
		if p == nil || len(p.Rows) < len(ids) {
			return false
		}
		for _, r := range p.Rows[:len(ids)] {
			if r.SiteFactorNow == nil || r.SiteFactorNew == nil || *r.SiteFactorNow != *r.SiteFactorNew {
				return false
			}
		}
		return true
	})
	l.stop()
	factor := map[string]int64{}
	for _, r := range l.s.lastPlan.Load().Rows[:len(ids)] {
		factor[r.JobID] = int64(*r.SiteFactorNow)
	}
	if len(factor) != len(ids) || factor[over]+factor[u1]+factor[u2] == 0 {
		t.Fatalf("the plan's head %v is not jobs %v", factor, ids)
	}
	after := sprio(ctx, t, lab, ids...)
	cl := l.probe.inner.(slurmclient.Client)
	for _, id := range ids {
		j, err := cl.Job(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// The site factor as Slurm holds it (sprio) and in the priority the
		// REST API reports (±1: the age factor grows meanwhile); fair share
		// unchanged and still counting.
		d := int64(j.Priority) - before[id].prio - factor[id]
		if after[id].site != factor[id] || d < -1 || d > 1 || after[id].fairshare != before[id].fairshare {
			t.Errorf("job %s: asrpt wrote site factor %d; sprio %+v (before %+v), REST priority %d",
				id, factor[id], after[id], before[id], j.Priority)
		}
	}
	if !(after[over].prio < after[u1].prio && after[over].prio < after[u2].prio) {
		t.Errorf("over-served job %s (site factor %d) ranks %d, not below the under-served %s (%d, factor %d) and %s (%d, factor %d)",
			over, factor[over], after[over].prio, u1, after[u1].prio, factor[u1], u2, after[u2].prio, factor[u2])
	}
	if d := after[u1].prio - after[u2].prio - (factor[u1] - factor[u2]); d < -1 || d > 1 || factor[u1] == factor[u2] {
		t.Errorf("jobs of one account %s, %s: priorities differ by %d, site factors by %d", u1, u2, d, factor[u1]-factor[u2])
	}
	t.Logf("sprio after: %+v; site factors %v", after, factor)

	// What asrpt giveback does, from the state file.
	rep, err := GivebackFile(ctx, cl, l.s.cfg.StateFile, l.s.cfg.Scope, false, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	back := sprio(ctx, t, lab, ids...)
	for _, id := range ids {
		if d := back[id].prio - before[id].prio; back[id].site != 0 || d < 0 || d > 1 {
			t.Errorf("job %s after giveback: sprio %+v, want site 0 and priority %d", id, back[id], before[id].prio)
		}
	}
	if want := len(ids) - 1; len(rep.Returned) != want { // the tail's factor is 0: never written
		t.Errorf("giveback returned %v, want %d jobs", rep.Returned, want)
	}
	t.Logf("giveback: %+v; sprio %+v", rep, back)
}
