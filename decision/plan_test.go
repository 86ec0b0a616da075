package decision

import (
	"testing"
	"time"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/slurmclient"
)

// TestPlanRowsOnePerJob: under asrpt-preempt a job that Slurm started
// before its turn, still ranked by the policy for StartedCycles lists,
// has its ranked row only, not a second "running" row saying that the
// policy does not hold it; the jobs the policy runs get their running row.
func TestPlanRowsOnePerJob(t *testing.T) {
	st := testState(t, "asrpt-preempt", cluster.Uniform(2, 4), predictor.NewMean())
	nodes := testNodes(2, 4)
	jobs := []slurmclient.Job{pending("1", "a", 4, epoch), pending("2", "b", 4, epoch), pending("3", "c", 4, epoch)}
	at := epoch.Add(time.Minute)
	p := Decide(&Snapshot{Nodes: nodes, Jobs: jobs}, st, unixSeconds(at))
	if p.Dispatched != 2 {
		t.Fatalf("dispatched %d of 3 jobs of 4 GPUs on 8 GPUs, want 2", p.Dispatched)
	}
	var first, last string
	for _, d := range p.Decisions {
		switch d.Entry.Phase {
		case PhDispatched:
			first = d.Entry.ID
		case PhQueued:
			last = d.Entry.ID
		}
	}
	// Slurm runs one dispatched job and, before its turn, the queued one.
	jobs = append([]slurmclient.Job(nil), jobs...)
	for i := range jobs {
		if jobs[i].ID == first || jobs[i].ID == last {
			jobs[i].State, jobs[i].Start = "RUNNING", at
		}
	}
	at = at.Add(30 * time.Second)
	p = Decide(&Snapshot{Nodes: nodes, Jobs: jobs}, st, unixSeconds(at))
	rows := st.PlanRows(p.Decisions, jobs, 0)
	stages := map[string][]string{}
	for _, r := range rows {
		stages[r.JobID] = append(stages[r.JobID], r.Stage)
	}
	if len(rows) != 3 {
		t.Errorf("%d rows for 3 jobs: %v", len(rows), stages)
	}
	if s := stages[first]; len(s) != 1 || s[0] != "running" {
		t.Errorf("job %s, dispatched and run: rows %v, want one running row", first, s)
	}
	if s := stages[last]; len(s) != 1 || s[0] == "running" {
		t.Errorf("job %s, started before its turn: rows %v, want its ranked row only", last, s)
	}
}
