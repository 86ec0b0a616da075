package sidecar

import (
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/reason"

	dto "github.com/prometheus/client_model/go"

	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// histogramCount returns how many values a histogram has observed.
func histogramCount(t *testing.T, h interface{ Write(*dto.Metric) error }) uint64 {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

// TestLifecycleThroughFake follows jobs through the fake Slurm: submit,
// dispatch (node list written), start, finish, accounting; the finished
// job's prediction error is measured, the predictor learns it and the
// waiting job of the same family is predicted again; a requeued job
// re-enters the policy; a dispatched job that is held leaves it.
func TestLifecycleThroughFake(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	h.pred = predictor.NewMean()
	h.s = h.newSidecar()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

	// Job 1 and a long job of another family take both nodes; job 2 (of
	// job 1's family, both nodes) waits.
	h.fake.Submit(pend("1", "train", 4, at(0)))
	h.fake.Submit(pend("9", "other", 4, at(0)))
	h.cycle(at(0))
	for _, id := range []string{"1", "9"} {
		if e := h.s.state.Entries[id]; e == nil || e.Phase != decision.PhDispatched {
			t.Fatalf("job %s not dispatched: %+v", id, e)
		}
		j, _ := h.fake.Job(id)
		if len(j.RequiredNodes) != 1 {
			t.Fatalf("job %s: node list %v", id, j.RequiredNodes)
		}
		if err := h.fake.Start(id, j.RequiredNodes, 4); err != nil {
			t.Fatal(err)
		}
	}
	two := pend("2", "train", 4, at(5))
	two.GPUs.Total = 8
	h.fake.Submit(two)
	h.cycle(at(10))
	if e := h.s.state.Entries["1"]; e.Phase != decision.PhRunning {
		t.Fatalf("job 1 in phase %v, want running", e.Phase)
	}
	before := planRow(t, h.plan(at(11)), "2")
	if before.Known || before.Stage != "waiting" && before.Stage != "released" {
		t.Fatalf("job 2 before any train job finished: %+v", before)
	}

	// Job 1 ends after 600 s; accounting shows it 30 s later. Missing
	// from one list, it is still tracked; the accounting record ends it.
	h.fake.Finish("1", 4, 600*time.Second)
	h.cycle(at(605))
	if _, ok := h.s.state.Entries["1"]; !ok {
		t.Fatal("job 1 forgotten after one list without it, before accounting showed its end")
	}
	h.cycle(at(700))
	if _, ok := h.s.state.Entries["1"]; ok {
		t.Fatal("job 1 still tracked after accounting showed its end")
	}
	if n := histogramCount(t, h.s.m.predRatio); n != 1 {
		t.Errorf("asrpt_prediction_ratio observed %d times, want 1", n)
	}
	// The prediction is not kept once reported: the same record again
	// notes no second prediction error (a kept one would).
	h.s.state.Learn([]job.Job{{ID: "1", Name: "train", User: "u", RunTime: 600, State: "COMPLETED"}})
	for _, ev := range h.s.state.TakeEvents() {
		if ev.Kind == decision.EvPredictionError {
			t.Error("job 1's prediction kept after its accounting record")
		}
	}
	after := planRow(t, h.plan(at(701)), "2")
	if !after.Known || after.Predicted != 600 {
		t.Errorf("job 2 after job 1 finished: predicted %v known %v, want 600 s, known", after.Predicted, after.Known)
	}

	// Job 9 ends (without accounting): job 2's turn; it starts and Slurm
	// requeues it.
	h.fake.Finish("9", 4, 0)
	h.cycle(at(705))
	if e := h.s.state.Entries["2"]; e.Phase != decision.PhDispatched {
		t.Fatalf("job 2 in phase %v, want dispatched", e.Phase)
	}
	j, _ := h.fake.Job("2")
	if err := h.fake.Start("2", j.RequiredNodes, 4); err != nil {
		t.Fatal(err)
	}
	h.cycle(at(710))
	h.fake.Edit("2", func(j *slurmclient.Job) { j.State, j.Nodes = "PENDING", nil })
	for _, n := range j.RequiredNodes {
		h.fake.EditNode(n, func(n *slurmclient.Node) { n.GPUsUsed, n.State = 0, "IDLE" })
	}
	h.cycle(at(720))
	if e := h.s.state.Entries["2"]; e.Phase != decision.PhDispatched || e.Task == nil {
		t.Fatalf("requeued job 2 in phase %v (task %v), want dispatched again", e.Phase, e.Task != nil)
	}

	// Held while dispatched: it leaves the policy and is left alone.
	h.fake.Edit("2", func(j *slurmclient.Job) { j.Held, j.Priority = true, 0 })
	h.cycle(at(730))
	if e := h.s.state.Entries["2"]; e.Phase != decision.PhIdle || e.Task != nil || e.Why != reason.Of(reason.Held, "held") {
		t.Errorf("held job 2: phase %v, task %v, why %q", e.Phase, e.Task != nil, e.Why)
	}
	if r := planRow(t, h.plan(at(731)), "2"); r.Stage != "left_alone" || r.Reason != reason.Held || r.Note != "held" {
		t.Errorf("held job 2 in the plan: %+v", r)
	}
}

func TestBuildInfoMetric(t *testing.T) {
	h := newHarness(t, 1, 1, false, nil)
	mfs, err := h.s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "asrpt_build_info" && len(mf.GetMetric()) == 1 && mf.GetMetric()[0].GetGauge().GetValue() == 1 {
			return
		}
	}
	t.Error("no asrpt_build_info gauge of 1")
}
