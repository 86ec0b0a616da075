package decision

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

var epoch = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// testNodes are n nodes of g GPUs named as cluster.Uniform names them,
// all idle.
func testNodes(n, g int) []slurmclient.Node {
	cl := cluster.Uniform(n, g)
	out := make([]slurmclient.Node, n)
	for i, nd := range cl.Nodes {
		out[i] = slurmclient.Node{Name: nd.Name, State: "IDLE", GPUs: g, Partitions: []string{"gpu"}}
	}
	return out
}

func pending(id, name string, gpus int, submit time.Time) slurmclient.Job {
	return slurmclient.Job{ID: id, Name: name, User: "u", Account: "a", Partition: "gpu", QOS: "normal",
		State: "PENDING", Submit: submit, Eligible: submit, TimeLimit: 4 * time.Hour, Priority: 1000,
		GPUs: slurmclient.GPURequest{PerNode: gpus, Total: gpus}}
}

func newTestState(t *testing.T, mode WriteMode) *State {
	t.Helper()
	var givenBack atomic.Bool
	st, err := NewState(Settings{Policy: "asrpt", Params: policy.DefaultParams(), Scope: Scope{Partitions: []string{"gpu"}},
		Interval: 30 * time.Second, DispatchGrace: 2 * time.Minute, SiteFactorMax: 64000, RequiredNodes: true},
		cluster.Uniform(2, 4), predictor.NewMean(), mode, nil, func(slurmclient.Delivery) bool { return true }, &givenBack)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// snapshots is a short queue's life: jobs arrive, the head starts, more
// arrive.
func snapshots() []Snapshot {
	nodes := testNodes(2, 4)
	var jobs []slurmclient.Job
	var out []Snapshot
	for k, name := range []string{"long", "short", "mid", "short", "long", "mid"} {
		jobs = append(jobs, pending(fmt.Sprint(100+k), name, 1+k%4, epoch.Add(time.Duration(k)*time.Minute)))
		out = append(out, Snapshot{Nodes: nodes, Jobs: append([]slurmclient.Job(nil), jobs...)})
	}
	return out
}

// render is a plan in words: each decision's job and values, then the
// counts.
func render(p Plan) string {
	var b strings.Builder
	for _, d := range p.Decisions {
		fmt.Fprintf(&b, "%s prio=%d factor=%d set=%v nodes=%v gpn=%d why=%s\n", d.Entry.ID, d.Priority, d.Factor, d.SetFactor,
			d.Nodes, d.GPUsPerNode, d.Why.Code)
	}
	fmt.Fprintf(&b, "jobs=%v arrived=%d released=%d dispatched=%d virtual=%d stops=%d suspect=%v\n",
		p.Jobs, p.Arrived, p.Released, p.Dispatched, p.Virtual, len(p.Stops), p.Suspect)
	return b.String()
}

// TestDecideDeterministic: the same snapshots given to two fresh states
// give the same plans, step by step, in both write modes.
func TestDecideDeterministic(t *testing.T) {
	for _, mode := range []WriteMode{WriteFactor, WritePriority} {
		a, b := newTestState(t, mode), newTestState(t, mode)
		for i, snap := range snapshots() {
			at := float64(epoch.Unix()) + float64(i)*60 + 10
			sa, sb := snap, snap
			pa, pb := render(Decide(&sa, a, at)), render(Decide(&sb, b, at))
			if pa != pb {
				t.Fatalf("%s, step %d: plans differ\n%s\n%s", mode, i, pa, pb)
			}
			if !strings.Contains(pa, fmt.Sprintf("arrived=%d", 1)) {
				t.Errorf("%s, step %d: want one arrival per step:\n%s", mode, i, pa)
			}
		}
	}
}

// TestDecideSuspect: a job list that shows fewer than half of the
// tracked jobs plans nothing and keeps every job; the next whole list
// plans them all again.
func TestDecideSuspect(t *testing.T) {
	st := newTestState(t, WriteFactor)
	snaps := snapshots()
	last := snaps[len(snaps)-1]
	at := float64(epoch.Unix()) + 600
	first := Decide(&last, st, at)
	n := len(first.Decisions)
	if first.Suspect != nil || n != len(last.Jobs) {
		t.Fatalf("whole list: suspect %v, %d decisions, want %d", first.Suspect, n, len(last.Jobs))
	}
	tracked := len(st.Entries)
	short := Snapshot{Nodes: last.Nodes, Jobs: last.Jobs[:1]}
	p := Decide(&short, st, at+30)
	if p.Suspect == nil || len(p.Decisions) != 0 || p.Arrived != 0 {
		t.Fatalf("list of 1 of %d jobs: suspect %v, %d decisions, %d arrivals", tracked, p.Suspect, len(p.Decisions), p.Arrived)
	}
	if len(st.Entries) != tracked {
		t.Errorf("a suspect list dropped jobs: %d tracked, want %d", len(st.Entries), tracked)
	}
	if p := Decide(&last, st, at+60); p.Suspect != nil || len(p.Decisions) != n {
		t.Errorf("whole list again: suspect %v, %d decisions, want %d", p.Suspect, len(p.Decisions), n)
	}
}
