package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

func getStatus(t *testing.T, s *Sidecar) Status {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
	var st Status
	if rec.Code != 200 {
		t.Fatalf("/status: %d", rec.Code)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatalf("/status: %v\n%s", err, rec.Body.String())
	}
	return st
}

// TestStatus: /status shows the daemon's view after each cycle: stages,
// jobs left alone with the reason, a failed read as slurmrestd down with
// the incident, and the recovery.
func TestStatus(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil)
	if st := getStatus(t, h.s); st.LastCycle != nil || st.Version == "" {
		t.Fatalf("before any cycle: %+v", st)
	}
	h.fake.Submit(pend("1", "mid", 1, t0))
	h.fake.Submit(pend("2", "mid", 1, t0))
	h.cycle(t0)
	h.fake.Edit("2", func(j *slurmclient.Job) { j.Priority = 777 }) // an admin
	h.cycle(t0.Add(h.cfg.Interval))
	st := getStatus(t, h.s)
	if st.LastCycle == nil || !st.LastCycle.OK || !st.SlurmrestdUp || st.Stages["queued"] != 1 || st.Stages["left_alone"] != 1 {
		t.Fatalf("status %+v (cycle %+v)", st, st.LastCycle)
	}
	if len(st.LeftAlone) != 1 || st.LeftAlone[0].JobID != "2" || st.LeftAlone[0].Reason != "priority set by an admin" {
		t.Errorf("left alone %+v", st.LeftAlone)
	}
	if got := testutil.ToFloat64(h.s.m.handsOff); got != 1 {
		t.Errorf("asrpt_hands_off_jobs = %v", got)
	}
	h.fake.SetInterceptor(sidecartest.FailOnce("Jobs", "", errors.New("connection refused")))
	if _, err := h.s.RunOnce(t.Context(), t0.Add(2*h.cfg.Interval)); err == nil {
		t.Fatal("the failing read did not fail the cycle")
	}
	st = getStatus(t, h.s)
	if st.LastCycle.OK || st.SlurmrestdUp || st.LastCycle.Error == "" || testutil.ToFloat64(h.s.m.slurmUp) != 0 {
		t.Errorf("after a failed read: %+v (cycle %+v)", st, st.LastCycle)
	}
	h.cycle(t0.Add(3 * h.cfg.Interval))
	if st = getStatus(t, h.s); !st.SlurmrestdUp || testutil.ToFloat64(h.s.m.slurmUp) != 1 {
		t.Errorf("after recovery: %+v", st)
	}
}

// TestHealthzStateFile: /healthz turns 503, with the reason, while the
// state file cannot be saved, and back to 200 once it is.
func TestHealthzStateFile(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil)
	health := func() (int, string) {
		rec := httptest.NewRecorder()
		h.s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		return rec.Code, rec.Body.String()
	}
	h.fake.Submit(pend("1", "mid", 1, t0))
	h.cycle(t0)
	if code, body := health(); code != 200 {
		t.Fatalf("healthy: %d %q", code, body)
	}
	good := h.s.cfg.StateFile
	h.s.cfg.StateFile = "/dev/null/state.json" // its directory is not one
	h.fake.Submit(pend("2", "mid", 1, t0))
	h.cycle(t0.Add(time.Second))
	if code, body := health(); code != 503 || !strings.Contains(body, "the state file cannot be saved") {
		t.Errorf("state file unsaveable: %d %q", code, body)
	}
	h.s.cfg.StateFile = good
	h.fake.Submit(pend("3", "mid", 1, t0))
	h.cycle(t0.Add(2 * time.Second))
	if code, body := health(); code != 200 {
		t.Errorf("saved again: %d %q", code, body)
	}
}

// TestServedPlan: /plan serves the last cycle's decisions, the head of the
// queue first, also when the cycle wrote them (not a dry run).
func TestServedPlan(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil)
	rec := httptest.NewRecorder()
	h.s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/plan", nil))
	if rec.Code != 503 {
		t.Fatalf("/plan before a cycle: %d", rec.Code)
	}
	h.fake.Submit(pend("1", "long", 1, t0))
	h.fake.Submit(pend("2", "short", 1, t0))
	h.cycle(t0)
	rec = httptest.NewRecorder()
	h.s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/plan", nil))
	var p ServedPlan
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != 200 {
		t.Fatalf("/plan: %d %v", rec.Code, err)
	}
	if p.DryRun || len(p.Rows) != 2 || p.Rows[0].JobID != "2" || p.Rows[0].Rank != 1 || !p.Time.Equal(t0) {
		t.Errorf("served plan %+v", p)
	}
	j, _ := h.fake.Job("2")
	if p.Rows[0].PriorityNew != j.Priority {
		t.Errorf("plan says priority %d, Slurm has %d", p.Rows[0].PriorityNew, j.Priority)
	}
}

// TestHeadless: a headless sidecar (the closed-loop replay's) publishes no
// status and no plan, and makes the same cycles and writes as one that
// does.
func TestHeadless(t *testing.T) {
	var reps [2][]CycleReport
	var writes [2][]sidecartest.Write
	for i, headless := range []bool{false, true} {
		h := newHarness(t, 2, 4, false, nil)
		nodes, _ := h.fake.Nodes(context.Background())
		s, err := New(h.cfg, Options{Cluster: cluster.Uniform(len(nodes), nodes[0].GPUs), Slurm: h.fake, Predictor: h.pred,
			Log: zerolog.Nop(), Headless: headless})
		if err != nil {
			t.Fatal(err)
		}
		h.s = s
		for k, name := range []string{"long", "short", "mid", "day", "short"} {
			h.fake.Submit(pend(fmt.Sprint(k+1), name, 4, t0.Add(time.Duration(k)*time.Second)))
		}
		for c := range 3 {
			rep := h.cycle(t0.Add(time.Duration(c+1) * time.Minute))
			rep.Duration = 0
			reps[i] = append(reps[i], rep)
		}
		writes[i] = h.fake.Writes()
		if got := s.status.Load() != nil || s.lastPlan.Load() != nil; got == headless {
			t.Errorf("headless %v: status or plan published: %v", headless, got)
		}
	}
	if !reflect.DeepEqual(reps[0], reps[1]) {
		t.Errorf("reports differ:\n%+v\n%+v", reps[0], reps[1])
	}
	if len(writes[0]) == 0 || !reflect.DeepEqual(writes[0], writes[1]) {
		t.Errorf("writes differ (or none):\n%+v\n%+v", writes[0], writes[1])
	}
}
