package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// factorMode sets factor mode with a site-factor range of max.
func factorMode(max uint32) func(*Config) {
	return func(c *Config) { c.WriteMode, c.SiteFactorMax = WriteFactor, max }
}

// factors returns the site factors of the given jobs in the fake.
func (h *harness) factors(ids ...string) []uint32 {
	out := make([]uint32, len(ids))
	for i, id := range ids {
		out[i] = h.fake.SiteFactor(id)
	}
	return out
}

// TestFactorModeWritesSiteFactors: in factor mode the order becomes site
// factors (head max, tail 0) and no priority is written; the priority
// plugin's value (base + factor in the fake) then follows the order.
func TestFactorModeWritesSiteFactors(t *testing.T) {
	h := newHarness(t, 2, 4, true, factorMode(1000))
	h.fake.Submit(pend("1", "long", 1, t0))
	h.fake.Submit(pend("2", "short", 1, t0.Add(time.Second)))
	h.fake.Submit(pend("3", "mid", 1, t0.Add(2*time.Second)))
	rep := h.cycle(t0.Add(time.Minute))
	for _, w := range h.fake.Writes() {
		if w.Update.Priority != nil || w.Update.SiteFactor == nil || w.Update.Hold != nil {
			t.Errorf("write %v: want a site factor alone", w)
		}
	}
	if f := h.factors("2", "3", "1"); !slices.Equal(f, []uint32{1000, 500, 0}) {
		t.Errorf("site factors short, mid, long = %v, want [1000 500 0]", f)
	}
	// The tail's 0 is Slurm's default: not written.
	if rep.Writes["site_factor"] != 2 || writesTo(h.fake.Writes(), "1") != 0 {
		t.Errorf("writes %v (%v), want 2 site factors", rep.Writes, h.fake.Writes())
	}
	if p := h.priorities("2", "3", "1"); !strictlyDecreasing(p) {
		t.Errorf("priorities %v, want strictly decreasing in the order", p)
	}
	if got := testutil.ToFloat64(h.s.m.writes.WithLabelValues("site_factor")); got != 2 {
		t.Errorf("asrpt_writes_total{kind=site_factor} = %v, want 2", got)
	}
	if testutil.ToFloat64(h.s.m.writeMode.WithLabelValues("factor")) != 1 || testutil.ToFloat64(h.s.m.fallback) != 0 {
		t.Error("asrpt_write_mode does not say factor")
	}
	// Nothing moved: nothing is written again.
	h.fake.ResetWrites()
	h.cycle(t0.Add(time.Minute))
	if w := h.fake.Writes(); len(w) != 0 {
		t.Errorf("same time again: writes %v", w)
	}
	p := decision.Decide(&decision.Snapshot{Jobs: mustJobs(t, h.fake), Nodes: mustNodes(t, h.fake)}, h.s.state, unixSeconds(t0.Add(time.Minute)))
	rows := h.s.state.PlanRows(p.Decisions, nil, 0)
	if len(rows) != 3 || rows[0].SiteFactorNew == nil || *rows[0].SiteFactorNew != 1000 || *rows[0].SiteFactorNow != 1000 ||
		rows[0].PriorityNew != rows[0].PriorityNow {
		t.Errorf("plan rows %+v", rows)
	}
}

func mustJobs(t *testing.T, f *sidecartest.Fake) []slurmclient.Job {
	js, err := f.Jobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func mustNodes(t *testing.T, f *sidecartest.Fake) []slurmclient.Node {
	ns, err := f.Nodes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestFactorModeBoundsWrites: one arrival at the head of a long queue moves
// every job one rank, by less than the tolerance: only the head region is
// written again, and every job's factor stays within the tolerance of the
// one its rank gives.
func TestFactorModeBoundsWrites(t *testing.T) {
	const n, max = 300, 6400
	h := newHarness(t, 2, 4, true, func(c *Config) {
		factorMode(max)(c)
		c.WriteLimit = 1000
	})
	for i := range n {
		h.fake.Submit(pend(fmt.Sprint(i+1), []string{"day", "week"}[i%2], 1, t0))
	}
	rep := h.cycle(t0.Add(time.Minute))
	if w := rep.Writes["site_factor"]; w < n-n/multifactor.FactorTolerance-1 || w > n {
		t.Fatalf("first cycle: %d site factors written for %d jobs", w, n)
	}
	h.fake.ResetWrites()
	h.fake.Submit(pend("1001", "short", 1, t0.Add(90*time.Second)))
	rep = h.cycle(t0.Add(2 * time.Minute))
	if w := len(h.fake.Writes()); w == 0 || w > 20+rep.Released {
		t.Errorf("one arrival at the head: %d writes (%d released), want at most the head region", w, rep.Released)
	}
	ds := h.s.state.Decisions()
	want := multifactor.SiteFactors(len(ds), max, nil)
	for i, d := range ds {
		e := d.Entry
		got := h.fake.SiteFactor(e.ID)
		if d := int64(got) - int64(want[i]); d > max/multifactor.FactorTolerance || -d > max/multifactor.FactorTolerance ||
			(i < multifactor.FactorHead && got != want[i]) {
			t.Errorf("rank %d (job %s): site factor %d, its rank gives %d", i+1, e.ID, got, want[i])
		}
	}
}

// TestFactorModeNodeList: a job whose turn has come gets its node list
// through the guard, with its site factor written while it is held and no
// priority: the release leaves the priority plugin's value.
func TestFactorModeNodeList(t *testing.T) {
	h := newHarness(t, 2, 4, false, factorMode(1000))
	h.fake.Submit(pend("1", "short", 4, t0))
	h.cycle(t0.Add(time.Minute))
	ws := h.fake.Writes()
	if len(ws) != 1 || !ws[0].Update.Guard || len(ws[0].Update.RequiredNodes) != 1 || ws[0].Update.Priority != nil ||
		ws[0].Update.SiteFactor == nil || *ws[0].Update.SiteFactor != 1000 {
		t.Fatalf("writes %v, want one guarded node list with site factor 1000 and no priority", ws)
	}
	j, _ := h.fake.Job("1")
	if j.Held || j.Priority != 1000+1000 {
		t.Errorf("after the guarded write: held %v, priority %d", j.Held, j.Priority)
	}
}

// TestFactorModeAfterPriorityMode: a sidecar switched from priority mode to
// factor mode takes back the priorities it set (a release goes with each
// job's first site factor), remembers the factors across a restart, and
// writes nothing more while nothing moves.
func TestFactorModeAfterPriorityMode(t *testing.T) {
	h := newHarness(t, 2, 4, true, nil)
	h.fake.Submit(pend("1", "long", 1, t0))
	h.fake.Submit(pend("2", "short", 1, t0))
	h.cycle(t0.Add(time.Minute))
	if p := h.priorities("2"); !decision.LowBand.Contains(p[0]) {
		t.Fatalf("priority mode wrote %v", p)
	}
	h.cfg.WriteMode, h.cfg.SiteFactorMax = WriteFactor, 1000
	h.s = h.newSidecar()
	h.fake.ResetWrites()
	h.cycle(t0.Add(2 * time.Minute))
	for _, w := range h.fake.Writes() {
		if w.Update.SiteFactor == nil || w.Update.Hold == nil || *w.Update.Hold {
			t.Errorf("write %v: want a site factor with a release", w)
		}
	}
	if n := len(h.fake.Writes()); n != 2 {
		t.Errorf("%d writes, want both jobs' priorities taken back", n)
	}
	if p, f := h.priorities("2", "1"), h.factors("2", "1"); !slices.Equal(p, []uint32{2000, 1000}) || !slices.Equal(f, []uint32{1000, 0}) {
		t.Errorf("priorities %v, site factors %v after the switch", p, f)
	}
	st, err := readState(h.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range st.Jobs {
		if want := map[string]uint32{"1": 0, "2": 1000}[j.Job.ID]; j.Priority != 0 || j.SiteFactor != want {
			t.Errorf("state of job %s: priority %d, site factor %d (want %d)", j.Job.ID, j.Priority, j.SiteFactor, want)
		}
	}
	h.s = h.newSidecar()
	h.fake.ResetWrites()
	rep := h.cycle(t0.Add(2 * time.Minute))
	if len(h.fake.Writes()) != 0 || rep.Jobs["hands_off"] != 0 {
		t.Errorf("after a restart: writes %v, jobs %v", h.fake.Writes(), rep.Jobs)
	}
}

// TestWriteModeFallback: factor mode on a release whose REST API cannot
// write site factors refuses to start, naming the release and the
// settings; with priority_fallback it writes priorities and says so.
func TestWriteModeFallback(t *testing.T) {
	nodes := sidecartest.Nodes(2, 4)
	fake := sidecartest.NewFake(nodes)
	fake.NoSiteFactor = true
	cfg := DefaultConfig()
	cfg.Slurm.URL, cfg.StateFile, cfg.History = "unix:///s", "", 0
	cl := cluster.Uniform(2, 4)
	_, err := New(cfg, Options{Cluster: cl, Slurm: fake, Predictor: fixedPredictor{}, Log: zerolog.Nop(), SlurmVersion: "Slurm 22.05.8, REST API v0.0.38"})
	if !errors.Is(err, ErrNoSiteFactor) || !strings.Contains(err.Error(), "Slurm 22.05.8") ||
		!strings.Contains(err.Error(), "sidecar.priority_fallback = true") {
		t.Fatalf("factor mode on 22.05: %v", err)
	}
	cfg.PriorityFallback = true
	s, err := New(cfg, Options{Cluster: cl, Slurm: fake, Predictor: fixedPredictor{Runs: map[string]float64{"short": 60}}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if s.state.Mode != WritePriority || testutil.ToFloat64(s.m.fallback) != 1 || testutil.ToFloat64(s.m.writeMode.WithLabelValues("priority")) != 1 {
		t.Errorf("fallback: mode %s, metrics fallback %v", s.state.Mode, testutil.ToFloat64(s.m.fallback))
	}
	for i := range nodes {
		fake.EditNode(nodes[i].Name, func(n *slurmclient.Node) { n.GPUsUsed, n.State = 4, "ALLOCATED" })
	}
	fake.Submit(pend("1", "short", 1, t0))
	if _, err := s.RunOnce(context.Background(), t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ws := fake.Writes(); len(ws) != 1 || ws[0].Update.Priority == nil {
		t.Errorf("fallback writes %v, want one priority", ws)
	}
	// Priority mode asked for: no question of site factors.
	cfg.PriorityFallback, cfg.WriteMode = false, WritePriority
	if _, err := New(cfg, Options{Cluster: cl, Slurm: fake, Predictor: fixedPredictor{}, Log: zerolog.Nop()}); err != nil {
		t.Errorf("priority mode on 22.05: %v", err)
	}
}

// TestGivebackFactors: a giveback sets the site factors asrpt wrote back to
// 0 without holding the jobs (their priority was never set), from the
// running sidecar and from the state file; --in-band also resets every
// pending job in scope.
func TestGivebackFactors(t *testing.T) {
	h := newHarness(t, 2, 4, true, factorMode(1000))
	for i := range 3 {
		h.fake.Submit(pend(fmt.Sprint(i+1), []string{"short", "mid", "long"}[i], 1, t0))
	}
	h.cycle(t0.Add(time.Minute))
	h.fake.ResetWrites()
	rep, err := h.s.Giveback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rep.Returned, decision.CompareID)
	if !slices.Equal(rep.Returned, []string{"1", "2"}) || !slices.Equal(h.factors("1", "2", "3"), []uint32{0, 0, 0}) ||
		!slices.Equal(h.priorities("1", "2", "3"), []uint32{1000, 1000, 1000}) {
		t.Errorf("returned %v, factors %v, priorities %v", rep.Returned, h.factors("1", "2", "3"), h.priorities("1", "2", "3"))
	}
	for _, w := range h.fake.Writes() {
		if w.Update.Hold != nil || w.Update.SiteFactor == nil || *w.Update.SiteFactor != 0 {
			t.Errorf("giveback write %v, want site factor 0 alone", w)
		}
	}
	// From the state file, with the sidecar stopped; then in band.
	h2 := newHarness(t, 2, 4, true, factorMode(1000))
	h2.fake.Submit(pend("1", "short", 1, t0))
	h2.fake.Submit(pend("2", "long", 1, t0))
	h2.cycle(t0.Add(time.Minute))
	h2.fake.Submit(pend("7", "mid", 1, t0))
	h2.fake.UpdateJob(context.Background(), "7", slurmclient.JobUpdate{SiteFactor: ptr(uint32(55))})
	rep, err = GivebackFile(context.Background(), h2.fake, h2.cfg.StateFile, h2.cfg.Scope, false, zerolog.Nop())
	if err != nil || !slices.Equal(rep.Returned, []string{"1"}) || h2.fake.SiteFactor("1") != 0 || h2.fake.SiteFactor("7") != 55 {
		t.Errorf("from file: %v, returned %v, factors %v", err, rep.Returned, h2.factors("1", "7"))
	}
	st, err := readState(h2.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range st.Jobs {
		if j.SiteFactor != 0 {
			t.Errorf("job %s: state still records site factor %d", j.Job.ID, j.SiteFactor)
		}
	}
	if _, err := GivebackFile(context.Background(), h2.fake, h2.cfg.StateFile, h2.cfg.Scope, true, zerolog.Nop()); err != nil || h2.fake.SiteFactor("7") != 0 {
		t.Errorf("in band: %v, job 7's factor %d", err, h2.fake.SiteFactor("7"))
	}
	// A job gone meanwhile is skipped; a refusal is reported.
	h3 := newHarness(t, 2, 4, true, factorMode(1000))
	h3.fake.Submit(pend("1", "short", 1, t0))
	h3.fake.Submit(pend("2", "short", 1, t0.Add(time.Second)))
	h3.cycle(t0.Add(time.Minute))
	h3.fake.SetInterceptor(func(c sidecartest.Call) error {
		if c.JobID == "1" && c.Method == "UpdateJob" {
			return fmt.Errorf("fake: %w", slurmclient.ErrServer)
		}
		return nil
	})
	rep, err = h3.s.Giveback(context.Background())
	if err == nil || rep.Failed["1"] == nil || !errors.Is(rep.Failed["1"], slurmclient.ErrServer) {
		t.Errorf("refused site factor: err %v, report %+v", err, rep)
	}
}

func ptr[T any](v T) *T { return &v }

// TestFactorModeHetComponents: in factor mode a heterogeneous job's site
// factor reaches every component (each written by its own id, since Slurm
// applies a leader's factor to the leader only), so that no component
// trails the others; giveback sets every one back to 0.
func TestFactorModeHetComponents(t *testing.T) {
	h := newHarness(t, 2, 4, true, factorMode(6400))
	submitHet(h.fake, "30", "short", 1, 2)
	h.fake.Submit(pend("40", "long", 1, t0.Add(time.Second)))
	h.cycle(t0.Add(time.Minute))
	got := h.factors("30", "31", "40")
	if got[0] == 0 || got[0] != got[1] || got[0] <= got[2] {
		t.Fatalf("site factors leader, component, other = %v: want the component equal to its leader, ahead of the other", got)
	}
	if p := h.priorities("30", "31"); p[0] != p[1] {
		t.Errorf("het job's priorities %v differ", p)
	}
	rep, err := h.s.Giveback(context.Background())
	if err != nil {
		t.Fatalf("giveback: %v (%+v)", err, rep)
	}
	if got := h.factors("30", "31"); got[0] != 0 || got[1] != 0 {
		t.Errorf("site factors after giveback %v, want 0 on both", got)
	}
}
