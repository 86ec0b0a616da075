package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/decision"
	"github.com/asrpt/asrpt/reason"
	"github.com/rs/zerolog"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/asrpt/asrpt/sidecar/sidecartest"
	"github.com/asrpt/asrpt/slurmclient"
)

// arrayRemainder returns the pending remainder of array id with the given
// task indices ("1-8") and throttle, each task asking gpus GPUs.
func arrayRemainder(id, name, tasks string, throttle, gpus int, submit time.Time) slurmclient.Job {
	j := pend(id, name, gpus, submit)
	j.Array = slurmclient.Array{JobID: id, TaskID: -1, Tasks: tasks, Throttle: throttle}
	return j
}

// startTask splits task k of array arr off its remainder as running job
// taskID on node, the way Slurm does, and sets the remainder's tasks to
// left ("" when none are left: the remainder is then the last task).
func startTask(t *testing.T, f *sidecartest.Fake, arr, taskID string, k int, node, left string) {
	t.Helper()
	rem, ok := f.Job(arr)
	if !ok {
		t.Fatalf("no array %s", arr)
	}
	task := rem
	task.ID, task.Array.TaskID, task.Array.Tasks, task.RequiredNodes = taskID, k, "", nil
	f.Submit(task)
	if err := f.Start(taskID, []string{node}, rem.GPUs.Total); err != nil {
		t.Fatal(err)
	}
	f.Edit(arr, func(j *slurmclient.Job) { j.Array.Tasks = left })
}

// submitHet submits a pending heterogeneous job of two components, the
// leader lead (g0 GPUs) and the job after it (g1 GPUs).
func submitHet(f *sidecartest.Fake, lead, name string, g0, g1 int) {
	n, _ := strconv.Atoi(lead)
	comp := strconv.Itoa(n + 1)
	het := slurmclient.Het{LeaderID: lead, Components: []string{lead, comp}}
	for i, g := range []int{g0, g1} {
		j := pend(het.Components[i], name, g, t0)
		j.Het = het
		j.Het.Offset = i
		f.Submit(j)
	}
}

func planRow(t *testing.T, rep CycleReport, id string) decision.PlanRow {
	t.Helper()
	for _, r := range rep.Plan {
		if r.JobID == id {
			return r
		}
	}
	t.Fatalf("job %s not in the plan %+v", id, rep.Plan)
	return decision.PlanRow{}
}

func (h *harness) plan(at time.Time) CycleReport {
	h.t.Helper()
	rep, err := h.s.Plan(context.Background(), at)
	if err != nil {
		h.t.Fatal(err)
	}
	return rep
}

// TestArrayRankedAsOneUnitWithoutNodeList: an array's remainder is ranked
// by the prediction of one task and gets priorities only, also when its
// turn has come; its running tasks are never written to.
func TestArrayRankedAsOneUnitWithoutNodeList(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	h.fake.Submit(arrayRemainder("10", "short", "1-8", 2, 1, t0))
	h.fake.Submit(pend("11", "long", 4, t0.Add(time.Second)))
	h.cycle(t0)
	pl := h.plan(t0.Add(time.Second))
	r := planRow(t, pl, "10")
	if r.Shape != "array_remainder" || r.GPUs != 1 || r.Predicted != 60 || r.Stage != "dispatched" || r.Nodes != nil ||
		r.Reason != reason.NodeListShape || !strings.Contains(r.Note, "array") {
		t.Errorf("array row %+v: want a dispatched array_remainder of 1 GPU, 60 s, no nodes, a note", r)
	}
	for _, w := range h.fake.Writes() {
		if w.JobID == "10" && (w.Update.RequiredNodes != nil || w.Update.GPUsPerNode != nil) {
			t.Errorf("node list written to an array: %v", w)
		}
	}
	if writesTo(h.fake.Writes(), "10") != 1 {
		t.Errorf("writes %v: want one priority write to the array", h.fake.Writes())
	}
	// Slurm starts task 1: the rest of the array arrives again as its next
	// task and is written to through the remainder only.
	startTask(t, h.fake, "10", "20", 1, "node0001", "2-8")
	h.fake.ResetWrites()
	rep := h.cycle(t0.Add(2 * time.Second))
	if rep.Arrived != 1 {
		t.Errorf("arrivals %d after a task started, want the remainder again", rep.Arrived)
	}
	if n := writesTo(h.fake.Writes(), "20"); n != 0 {
		t.Errorf("%d writes to a running task: %v", n, h.fake.Writes())
	}
	if e := h.s.state.Entries["20"]; e != nil {
		t.Errorf("running task tracked: %+v", e)
	}
}

// TestArrayAtThrottleParked: an array running as many tasks as its
// throttle allows is left alone (it cannot start another) and rejoins with
// its virtual work when a task ends.
func TestArrayAtThrottleParked(t *testing.T) {
	h := newHarness(t, 2, 4, true, nil)
	h.fake.Submit(arrayRemainder("10", "mid", "3-8", 2, 1, t0))
	h.fake.Submit(pend("11", "short", 1, t0))
	rem := arrayRemainder("10", "mid", "", 2, 1, t0)
	for k, id := range []string{"21", "22"} {
		task := rem
		task.ID, task.Array.TaskID, task.State = id, k+1, "RUNNING"
		h.fake.Submit(task)
	}
	rep := h.plan(t0)
	r := planRow(t, rep, "10")
	if r.Stage != "left_alone" || r.Reason != reason.ArrayThrottled || !strings.Contains(r.Note, "task limit") {
		t.Errorf("array at its throttle: %+v, want left alone at its task limit", r)
	}
	h.cycle(t0)
	if n := writesTo(h.fake.Writes(), "10"); n != 0 {
		t.Errorf("%d writes to a throttled array", n)
	}
	h.fake.Finish("21", 1, 0)
	rep = h.cycle(t0.Add(30 * time.Second))
	if rep.Arrived != 1 || h.s.state.Entries["10"].Phase != decision.PhQueued {
		t.Errorf("arrived %d, array phase %v: want the array back in the policy", rep.Arrived, h.s.state.Entries["10"].Phase)
	}
}

// TestHetJobRankedAtLeader: a heterogeneous job is one unit with the GPUs
// of all its components, written to at its leader only, without a node
// list; with a component no longer pending it is left alone.
func TestHetJobRankedAtLeader(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	submitHet(h.fake, "30", "short", 1, 2)
	rep := h.plan(t0)
	r := planRow(t, rep, "30")
	if r.Shape != "het_leader" || r.GPUs != 3 || r.Nodes != nil {
		t.Errorf("het leader row %+v: want 3 GPUs, no node list", r)
	}
	if c := planRow(t, rep, "31"); c.Stage != "left_alone" || c.Reason != reason.HetComponent || !strings.Contains(c.Note, "leader") {
		t.Errorf("component row %+v: want left alone, ranked through its leader", c)
	}
	h.cycle(t0)
	ws := h.fake.Writes()
	if writesTo(ws, "31") != 0 || writesTo(ws, "30") != 1 || ws[0].Update.Priority == nil {
		t.Errorf("writes %v: want one priority write to the leader", ws)
	}
	if j, _ := h.fake.Job("31"); j.Priority != *ws[0].Update.Priority {
		t.Errorf("component priority %d, want the leader's %d", j.Priority, *ws[0].Update.Priority)
	}
	h.fake.Edit("31", func(j *slurmclient.Job) { j.State = "RUNNING" })
	if r := planRow(t, h.plan(t0.Add(time.Second)), "30"); r.Stage != "left_alone" {
		t.Errorf("het job with a running component: %+v, want left alone", r)
	}
}

// TestPlacedOnItsPartitionsOnly: a job is placed on nodes of its own
// partitions, never pinned to free nodes it cannot use.
func TestPlacedOnItsPartitionsOnly(t *testing.T) {
	h := newHarness(t, 4, 4, false, func(c *Config) { c.Scope.Partitions = nil })
	for i, parts := range [][]string{{"gpu"}, {"gpu"}, {"gpu", "urgent"}, {"gpu", "urgent"}} {
		name := fmt.Sprintf("node%04d", i+1)
		h.fake.EditNode(name, func(n *slurmclient.Node) { n.Partitions = parts })
	}
	// node0001 is busy, so the best fit for a 4-GPU job in "gpu" alone
	// would be node0002; the urgent job may only use node0003 and node0004.
	h.fake.EditNode("node0001", func(n *slurmclient.Node) { n.GPUsUsed, n.State = 4, "ALLOCATED" })
	urgent := pend("40", "short", 4, t0)
	urgent.Partition = "urgent"
	multi := pend("41", "short", 4, t0.Add(time.Second))
	multi.Partition = "urgent,gpu"
	multi.ExcludedNodes = []string{"node0003"}
	h.fake.Submit(urgent)
	h.fake.Submit(multi)
	h.cycle(t0)
	for _, id := range []string{"40", "41"} {
		j, _ := h.fake.Job(id)
		if len(j.RequiredNodes) != 1 {
			t.Fatalf("job %s: node list %v, want one node", id, j.RequiredNodes)
		}
	}
	if j, _ := h.fake.Job("40"); !slices.Contains([]string{"node0003", "node0004"}, j.RequiredNodes[0]) {
		t.Errorf("urgent job pinned to %v, outside its partition", j.RequiredNodes)
	}
	if j, _ := h.fake.Job("41"); j.RequiredNodes[0] == "node0003" || j.RequiredNodes[0] == "node0001" {
		t.Errorf("multi-partition job pinned to %v (excluded or busy)", j.RequiredNodes)
	}
}

// TestFailedWriteBacksOff: a priority Slurm keeps refusing is sent again
// after a backoff that doubles, not every cycle; every request, retry and
// failure is counted, and the job's failure is logged once.
func TestFailedWriteBacksOff(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil) // interval 30 s
	logs := &bytes.Buffer{}
	h.s.log = zerolog.New(logs)
	h.fake.Submit(pend("1", "short", 1, t0))
	refuse := fmt.Errorf("fake: %w", slurmclient.ErrIgnoredField)
	h.fake.SetInterceptor(func(c sidecartest.Call) error {
		if c.Method == "UpdateJob" {
			return refuse
		}
		return nil
	})
	var sent []int // cycle indices (30 s apart) in which a write was sent
	for i := range 20 {
		before := h.fake.Calls("UpdateJob")
		h.cycle(t0.Add(time.Duration(i) * 30 * time.Second))
		if h.fake.Calls("UpdateJob") > before {
			sent = append(sent, i)
		}
	}
	// Waits of 30, 60, 120, 240 s after failures at cycles 0, 1, 3, 7, 15.
	if want := []int{0, 1, 3, 7, 15}; !slices.Equal(sent, want) {
		t.Errorf("writes sent in cycles %v, want %v", sent, want)
	}
	req := testutil.ToFloat64(h.s.m.requests.WithLabelValues("priority"))
	retries := testutil.ToFloat64(h.s.m.retries.WithLabelValues("priority"))
	fails := testutil.ToFloat64(h.s.m.failures.WithLabelValues("priority", "ignored_field"))
	if req != 5 || retries != 4 || fails != 5 {
		t.Errorf("requests %v, retries %v, failures %v; want 5, 4, 5", req, retries, fails)
	}
	// One warning for the job's five failures of one reason, with the
	// first backoff.
	if n := strings.Count(logs.String(), `"message":"write failed; retrying after a backoff"`); n != 1 ||
		!strings.Contains(logs.String(), `"retry_in":30000`) || !strings.Contains(logs.String(), `"reason":"ignored_field"`) {
		t.Errorf("%d warnings, want 1 with reason ignored_field and retry_in 30 s:\n%s", n, logs)
	}
	h.fake.SetInterceptor(nil)
	h.cycle(t0.Add(31 * 30 * time.Second))
	if j, _ := h.fake.Job("1"); j.Priority == 1000 || len(h.s.state.Entries["1"].Fails) != 0 {
		t.Errorf("priority %d after the refusals ended, failures %v", j.Priority, h.s.state.Entries["1"].Fails)
	}
}

// TestJobGaugesReset: a state the last cycle did not see reads 0.
func TestJobGaugesReset(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil)
	held := pend("1", "short", 1, t0)
	held.Held = true
	h.fake.Submit(held)
	h.cycle(t0)
	if v := testutil.ToFloat64(h.s.m.jobs.WithLabelValues("held")); v != 1 {
		t.Fatalf("held gauge %v, want 1", v)
	}
	h.fake.Cancel("1")
	h.cycle(t0.Add(time.Minute))
	if v := testutil.ToFloat64(h.s.m.jobs.WithLabelValues("held")); v != 0 {
		t.Errorf("held gauge %v after the held job left, want 0", v)
	}
}

// TestGivebackArrayAndHet: giveback hands back an array through its
// remainder and a heterogeneous job through its leader.
func TestGivebackArrayAndHet(t *testing.T) {
	h := newHarness(t, 1, 4, true, nil)
	h.fake.Submit(arrayRemainder("10", "short", "1-4", 0, 1, t0))
	submitHet(h.fake, "30", "mid", 1, 1)
	h.cycle(t0)
	rep, err := h.s.Giveback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rep.Returned, decision.CompareID)
	if !slices.Equal(rep.Returned, []string{"10", "30"}) {
		t.Errorf("handed back %v, want the array and the het leader", rep.Returned)
	}
	for _, id := range []string{"10", "30", "31"} {
		if j, _ := h.fake.Job(id); j.Priority != 1000 || j.Held {
			t.Errorf("job %s after giveback: priority %d held %v, want Slurm's own and released", id, j.Priority, j.Held)
		}
	}
}

// TestGivebackClearsNodeList: giveback clears the node list asrpt wrote to
// a job still pending, and leaves one the job has from elsewhere.
func TestGivebackClearsNodeList(t *testing.T) {
	h := newHarness(t, 2, 4, false, nil)
	h.fake.Submit(pend("1", "short", 4, t0))
	h.cycle(t0)
	if j, _ := h.fake.Job("1"); len(j.RequiredNodes) != 1 {
		t.Fatalf("node list %v after dispatch, want one node", j.RequiredNodes)
	}
	rep, err := h.s.Giveback(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if j, _ := h.fake.Job("1"); len(j.RequiredNodes) != 0 || len(rep.NodesKept) != 0 || !slices.Equal(rep.Returned, []string{"1"}) {
		t.Errorf("after giveback: node list %v, report %+v", j.RequiredNodes, rep)
	}
}
