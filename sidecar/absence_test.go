package sidecar

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/job/jobstate"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// filteredSlurm is the fake Slurm whose job list passes through keep
// (nil: unchanged): a slurmrestd that answers a list without some jobs.
// The records of the jobs in unreadable are skipped as the REST client
// skips a record it cannot use (slurmclient.RecordErrors).
type filteredSlurm struct {
	*sidecartest.Fake
	mu         sync.Mutex
	keep       func(slurmclient.Job) bool
	unreadable []string
}

func (f *filteredSlurm) Jobs(ctx context.Context) ([]slurmclient.Job, error) {
	js, err := f.Fake.Jobs(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		return js, err
	}
	bad := &slurmclient.RecordErrors{Op: "GET /jobs"}
	js = slices.DeleteFunc(js, func(j slurmclient.Job) bool {
		if slices.Contains(f.unreadable, j.ID) {
			bad.IDs = append(bad.IDs, j.ID)
			bad.Errs = append(bad.Errs, fmt.Errorf("job %s: %w: array fields out of range", j.ID, slurmclient.ErrBadResponse))
			return true
		}
		return f.keep != nil && !f.keep(j)
	})
	if len(bad.IDs) > 0 {
		return js, bad
	}
	return js, nil
}

func (f *filteredSlurm) set(keep func(slurmclient.Job) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keep = keep
}

// filtered gives h a sidecar reading the job list through a filter, and
// logging to the returned buffer.
func (h *harness) filtered() (*filteredSlurm, *syncBuffer) {
	h.t.Helper()
	f := &filteredSlurm{Fake: h.fake}
	nodes, _ := h.fake.Nodes(context.Background())
	logs := &syncBuffer{}
	s, err := New(h.cfg, Options{Cluster: cluster.Uniform(len(nodes), nodes[0].GPUs), Slurm: f, Predictor: h.pred, Log: zerolog.New(logs)})
	if err != nil {
		h.t.Fatal(err)
	}
	h.s = s
	return f, logs
}

// tracked is what must survive a bad job list: each job's sequence number
// and phase.
func tracked(s *Sidecar) map[string]string {
	out := map[string]string{}
	for id, e := range s.state.Entries {
		out[id] = fmt.Sprintf("seq %d %v", e.Seq, e.Phase)
	}
	return out
}

func savedIDs(t *testing.T, path string) []string {
	t.Helper()
	st, err := readState(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range st.Jobs {
		ids = append(ids, j.Job.ID)
	}
	return ids
}

// TestSuspectJobList: job lists that show fewer than half of the tracked
// jobs (an empty one, a shrunk one) between normal ones change nothing:
// no arrival renumbered, nothing dropped, no write, the state file keeps
// every job, the incident is logged once and each list counted; the jobs
// keep their sequence numbers and virtual progress, and a giveback
// afterwards returns every job. A queue that really emptied is accepted
// decision.AbsentCycles lists later and saved as "jobs": [], not null.
func TestSuspectJobList(t *testing.T) {
	for _, c := range []struct {
		name string
		keep func(slurmclient.Job) bool
	}{
		{"empty", func(slurmclient.Job) bool { return false }},
		{"shrunk to two of six", func(j slurmclient.Job) bool { return j.ID == "1" || j.ID == "6" }},
		{"shrunk, with a stranger", func(j slurmclient.Job) bool { return j.ID == "2" || j.ID == "99" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, 1, 4, true, factorMode(6400))
			f, logs := h.filtered()
			for i, n := range []string{"short", "mid", "long", "day", "week", "mid"} {
				h.fake.Submit(pend(fmt.Sprint(i+1), n, 1, t0.Add(time.Duration(i)*time.Second)))
			}
			at := func(i int) time.Time { return t0.Add(time.Duration(i) * h.cfg.Interval) }
			h.cycle(at(0))
			h.cycle(at(1))
			want := tracked(h.s)
			if len(want) != 6 {
				t.Fatalf("tracked %v", want)
			}
			remaining := map[string]float64{}
			for id, e := range h.s.state.Entries {
				remaining[id] = e.Task.VirtualRemaining()
			}
			h.fake.Submit(pend("99", "short", 1, t0)) // listed only by the bad lists
			f.set(c.keep)
			h.fake.ResetWrites()
			for i := range decision.AbsentCycles - 1 {
				rep := h.cycle(at(2 + i))
				if !rep.Suspect || rep.Arrived != 0 {
					t.Errorf("bad list %d: suspect %v, arrived %d", i, rep.Suspect, rep.Arrived)
				}
			}
			if w := h.fake.Writes(); len(w) != 0 {
				t.Errorf("writes on a suspect list: %v", w)
			}
			if got := tracked(h.s); !mapsEqual(got, want) {
				t.Errorf("tracked after the bad lists: %v, want %v", got, want)
			}
			if ids := savedIDs(t, h.cfg.StateFile); len(ids) != 6 {
				t.Errorf("state file lists %v, want the six jobs", ids)
			}
			if got := testutil.ToFloat64(h.s.m.suspectLists); got != decision.AbsentCycles-1 {
				t.Errorf("asrpt_suspect_job_lists_total = %v, want %d", got, decision.AbsentCycles-1)
			}
			if n := strings.Count(logs.String(), "job list much shorter"); n != 1 {
				t.Errorf("suspect list logged %d times, want once:\n%s", n, logs)
			}
			f.set(nil)
			h.fake.Cancel("99")
			rep := h.cycle(at(decision.AbsentCycles + 1))
			if rep.Suspect || rep.Arrived != 0 {
				t.Errorf("normal list again: suspect %v, arrived %d", rep.Suspect, rep.Arrived)
			}
			if got := tracked(h.s); !mapsEqual(got, want) {
				t.Errorf("tracked after the list came back: %v, want %v", got, want)
			}
			for id, e := range h.s.state.Entries {
				if r := e.Task.VirtualRemaining(); r > remaining[id] {
					t.Errorf("job %s: virtual work left %v, was %v before the bad lists (progress lost)", id, r, remaining[id])
				}
			}
			if !strings.Contains(logs.String(), `"incident":"job_list","occurrences":2,"message":"recovered"`) {
				t.Errorf("recovery not logged:\n%s", logs)
			}
			checkGiveback(t, h, h.cfg.StateFile, "1", "2", "3", "4", "5", "6")

			// The queue really empties (accounting shows the jobs ended):
			// accepted, with nothing kept. (Jobs holding asrpt's values
			// that vanish with no accounting record are kept for giveback:
			// TestJobMissingFromOneList.)
			for _, id := range []string{"1", "2", "3", "4", "5", "6"} {
				h.fake.Finish(id, 0, at(decision.AbsentCycles+1).Sub(t0)) // ended at the last cycle
			}
			for i := range decision.AbsentCycles {
				h.cycle(at(decision.AbsentCycles + 2 + i).Add(accountingLag + time.Second))
			}
			if len(h.s.state.Entries) != 0 {
				t.Errorf("still tracked after %d empty lists: %v", decision.AbsentCycles, tracked(h.s))
			}
			data, err := os.ReadFile(h.cfg.StateFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"jobs": []`) {
				t.Errorf("empty state saved as:\n%s", data)
			}
		})
	}
}

// checkGiveback runs a giveback from the state file at path and checks
// that it returns every job of ids holding a site factor, and that none
// keeps one.
func checkGiveback(t *testing.T, h *harness, path string, ids ...string) {
	t.Helper()
	var holding []string
	for _, id := range ids {
		if h.fake.SiteFactor(id) != 0 {
			holding = append(holding, id)
		}
	}
	if len(holding) < len(ids)-1 {
		t.Fatalf("only %v of %v hold a site factor", holding, ids)
	}
	rep, err := GivebackFile(context.Background(), h.fake, path, h.cfg.Scope, false, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range holding {
		if !slices.Contains(rep.Returned, id) {
			t.Errorf("giveback returned %v, not job %s, which holds a site factor", rep.Returned, id)
		}
	}
	for _, id := range ids {
		if f := h.fake.SiteFactor(id); f != 0 {
			t.Errorf("job %s keeps site factor %d after the giveback", id, f)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestJobMissingFromOneList: a job missing from a list (the rest of the
// list normal) is kept with its sequence number and gets no write until
// it has been missing from decision.AbsentCycles lists in a row; accounting
// reporting its end lets it go at once.
func TestJobMissingFromOneList(t *testing.T) {
	h := newHarness(t, 1, 4, true, factorMode(6400))
	f, _ := h.filtered()
	for i, n := range []string{"short", "mid", "long", "day", "week"} {
		h.fake.Submit(pend(fmt.Sprint(i+1), n, 1, t0))
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * h.cfg.Interval) }
	h.cycle(at(0))
	seq := h.s.state.Entries["3"].Seq
	f.set(func(j slurmclient.Job) bool { return j.ID != "3" })
	h.fake.ResetWrites()
	for i := range decision.AbsentCycles - 1 {
		if rep := h.cycle(at(1 + i)); rep.Suspect {
			t.Fatal("one job of five missing taken for a suspect list")
		}
		if e := h.s.state.Entries["3"]; e == nil || e.Seq != seq || e.Phase != decision.PhQueued {
			t.Fatalf("after %d lists without job 3: %+v", i+1, e)
		}
	}
	if n := writesTo(h.fake.Writes(), "3"); n != 0 {
		t.Errorf("%d writes to job 3 while it was missing: %v", n, h.fake.Writes())
	}
	f.set(nil)
	if rep := h.cycle(at(decision.AbsentCycles)); rep.Arrived != 0 || h.s.state.Entries["3"].Seq != seq {
		t.Errorf("job 3 back: arrived %d, seq %d (was %d)", rep.Arrived, h.s.state.Entries["3"].Seq, seq)
	}

	// Missing for decision.AbsentCycles lists while it holds asrpt's site factor:
	// out of the policy, parked, but kept for giveback (keepLost); back in
	// the list, it rejoins with its sequence number.
	f.set(func(j slurmclient.Job) bool { return j.ID != "3" })
	for i := range decision.AbsentCycles {
		h.cycle(at(decision.AbsentCycles + 1 + i))
	}
	if e := h.s.state.Entries["3"]; e == nil || e.Phase != decision.PhIdle || !e.Parked || e.Seq != seq {
		t.Fatalf("job 3 after %d lists without it, holding a site factor: %+v", decision.AbsentCycles, e)
	}
	st, err := readState(h.cfg.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(st.Jobs, func(j decision.SavedJob) bool { return j.Job.ID == "3" }); i < 0 || st.Jobs[i].SiteFactor == 0 && !st.Jobs[i].MayFactor {
		t.Errorf("the state file lost job 3's site factor: %+v", st.Jobs)
	}
	f.set(nil)
	if h.cycle(at(2*decision.AbsentCycles + 1)); h.s.state.Entries["3"].Phase != decision.PhQueued || h.s.state.Entries["3"].Seq != seq {
		t.Errorf("job 3 back after being lost: %+v", h.s.state.Entries["3"])
	}
	f.set(func(j slurmclient.Job) bool { return j.ID != "3" })
	h.fake.Cancel("3")

	// Accounting shows job 4 ended: let go on the first list without it.
	f.set(nil)
	end := at(2*decision.AbsentCycles + 1)
	h.fake.Finish("4", 0, end.Sub(t0))
	h.cycle(end.Add(accountingLag + time.Second))
	if e := h.s.state.Entries["4"]; e != nil {
		t.Errorf("job 4 kept after accounting showed its end: %+v", e)
	}
}

// TestUnreadableRecord: a job whose record the client skips (an
// array_task_id of 4e9) fails only itself: the cycles succeed, the other
// jobs are written, it is neither dropped (however long it lasts) nor
// written to; the records are counted and the incident logged once. A
// giveback meanwhile reports that job failed and returns the others.
func TestUnreadableRecord(t *testing.T) {
	h := newHarness(t, 1, 4, true, factorMode(6400))
	f, logs := h.filtered()
	for i, n := range []string{"short", "mid", "long", "day", "week"} {
		h.fake.Submit(pend(fmt.Sprint(i+1), n, 1, t0))
	}
	h.cycle(t0)
	seq := h.s.state.Entries["2"].Seq
	f.unreadable = []string{"2"}
	h.fake.ResetWrites()
	h.fake.Submit(pend("6", "short", 1, t0)) // an arrival the cycles must still see
	n := 2 * decision.AbsentCycles
	for i := range n {
		if rep := h.cycle(t0.Add(time.Duration(i+1) * h.cfg.Interval)); rep.Suspect {
			t.Fatal("suspect list")
		}
	}
	if e := h.s.state.Entries["2"]; e == nil || e.Seq != seq {
		t.Fatalf("job 2 with an unreadable record: %+v", e)
	}
	if writesTo(h.fake.Writes(), "2") != 0 || writesTo(h.fake.Writes(), "6") == 0 {
		t.Errorf("writes %v: want none to job 2, some to job 6", h.fake.Writes())
	}
	if got := testutil.ToFloat64(h.s.m.skippedRecords); got != float64(n) {
		t.Errorf("asrpt_job_records_skipped_total = %v, want %d", got, n)
	}
	if k := strings.Count(logs.String(), `"incident":"job_records","reason":"bad_record"`); k != 1 {
		t.Errorf("logged %d times, want once:\n%s", k, logs)
	}
	rep, err := h.s.Giveback(context.Background())
	if err == nil || rep.Failed["2"] == nil || !slices.Contains(rep.Returned, "1") {
		t.Errorf("giveback: %+v, %v; want job 2 failed, job 1 returned", rep, err)
	}
}

// TestFlappingJobKeepsItsPlace: a queued job that flaps between PENDING
// and RUNNING from one list to the next keeps its place: after the first
// cycle no site factor is written again, to it or to the jobs behind it.
func TestFlappingJobKeepsItsPlace(t *testing.T) {
	h := newHarness(t, 1, 4, true, factorMode(6400))
	for i, n := range []string{"short", "mid", "long", "day"} {
		h.fake.Submit(pend(fmt.Sprint(i+1), n, 1, t0))
	}
	h.cycle(t0)
	seq := h.s.state.Entries["1"].Seq
	h.fake.ResetWrites()
	for c := 1; c <= 6; c++ {
		st := jobstate.Pending
		if c%2 == 1 {
			st = jobstate.Running
		}
		h.fake.Edit("1", func(j *slurmclient.Job) { j.State = st })
		h.cycle(t0.Add(time.Duration(c) * h.cfg.Interval))
	}
	if w := h.fake.Writes(); len(w) != 0 {
		t.Errorf("a flapping job caused %d writes: %v", len(w), w)
	}
	if e := h.s.state.Entries["1"]; e.Seq != seq || e.Phase != decision.PhQueued {
		t.Errorf("flapping job: seq %d (was %d), phase %v", e.Seq, seq, e.Phase)
	}
}

// TestWritesNeedASavedState: while the state file cannot be saved (a full
// disk; here a path whose directory is not one) no write goes out, the
// cycles are counted and the incident logged once; once a save succeeds
// the writes resume. Every write reaches Slurm only after the state file
// records it: a giveback from the file then undoes it.
func TestWritesNeedASavedState(t *testing.T) {
	h := newHarness(t, 1, 4, true, factorMode(6400))
	_, logs := h.filtered()
	good := h.cfg.StateFile
	// Each write checks that the state file already says the job may hold
	// what is written.
	var unrecorded []string
	h.fake.SetInterceptor(func(c sidecartest.Call) error {
		if c.Method != "UpdateJob" {
			return nil
		}
		st, err := readState(good)
		if err != nil {
			unrecorded = append(unrecorded, c.JobID+": "+err.Error())
			return nil
		}
		for _, j := range st.Jobs {
			if j.Job.ID == c.JobID && (c.Update.SiteFactor == nil || *c.Update.SiteFactor == 0 || j.MayFactor) {
				return nil
			}
		}
		unrecorded = append(unrecorded, c.JobID)
		return nil
	})
	h.fake.Submit(pend("1", "mid", 1, t0))
	h.fake.Submit(pend("2", "short", 1, t0))
	h.cycle(t0)
	if len(h.fake.Writes()) == 0 {
		t.Fatal("no writes in the first cycle")
	}
	h.s.cfg.StateFile = "/dev/null/state.json" // the disk is full
	h.fake.ResetWrites()
	for i := 1; i <= 3; i++ {
		h.fake.Submit(pend(fmt.Sprint(10+i), "short", 1, t0))
		if rep := h.cycle(t0.Add(time.Duration(i) * h.cfg.Interval)); !rep.WritesHeld {
			t.Errorf("cycle %d: writes not held", i)
		}
	}
	if w := h.fake.Writes(); len(w) != 0 {
		t.Errorf("writes while the state could not be saved: %v", w)
	}
	if got := testutil.ToFloat64(h.s.m.writesHeld); got != 3 {
		t.Errorf("asrpt_writes_held_total = %v, want 3", got)
	}
	if n := strings.Count(logs.String(), "state file could not be saved"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs)
	}
	h.s.cfg.StateFile = good // space again
	rep := h.cycle(t0.Add(4 * h.cfg.Interval))
	if rep.WritesHeld || len(h.fake.Writes()) == 0 {
		t.Errorf("writes did not resume: held %v, writes %v", rep.WritesHeld, h.fake.Writes())
	}
	if len(unrecorded) > 0 {
		t.Errorf("written before the state recorded it: %v", unrecorded)
	}
	h.fake.SetInterceptor(nil)
	checkGiveback(t, h, good, "1", "2", "11", "12", "13")
}

// TestGivebackUndoesRecordedIntents: a state file that recorded a write
// whose outcome it never learnt (the sidecar died between the write and
// its save) is enough for a giveback to undo it.
func TestGivebackUndoesRecordedIntents(t *testing.T) {
	cases := []struct {
		name                        string
		sj                          decision.SavedJob
		wantOK, wantFactor, release bool
	}{
		{"site factor of unknown outcome", decision.SavedJob{MayFactor: true}, true, true, false},
		{"priority of unknown outcome", decision.SavedJob{MayPriority: true, Priority: 7}, true, false, true},
		{"nothing written", decision.SavedJob{}, false, false, true},
	}
	for _, c := range cases {
		m, ok := toHandBack(c.sj.Priority, c.sj.SiteFactor, c.sj.Nodes, c.sj.WroteNodes, c.sj.OwnNodes, c.sj.MayFactor, c.sj.MayPriority)
		if ok != c.wantOK || m.factor != c.wantFactor || m.release != c.release {
			t.Errorf("%s: %+v, %v", c.name, m, ok)
		}
		if c.sj.MayPriority && m.prio != 0 {
			t.Errorf("%s: checks priority %d, want any (the write's outcome is unknown)", c.name, m.prio)
		}
	}
}
