package policy

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// scripted is a Controller that runs one function per poll.
type scripted struct {
	interval float64
	polls    []float64
	do       func(now float64, q *Queue) error
	// next is the time Poll returns (0: now).
	next float64
}

func (s *scripted) Interval() float64 { return s.interval }

func (s *scripted) Poll(now float64, q *Queue) (float64, error) {
	s.polls = append(s.polls, now)
	next := now
	if s.next != 0 {
		next = s.next
	}
	if s.do != nil {
		return next, s.do(now, q)
	}
	return next, nil
}

// TestControllerWrites: the closed loop's model polls its Controller on
// the interval's grid while jobs wait, and honours what it writes: an
// explicit priority puts a job first until it is released, a site factor
// adds to multifactor's priority, a node list binds a job to its nodes;
// the ended jobs are reported once; a poll's error reaches the Env.
func TestControllerWrites(t *testing.T) {
	ctl := &scripted{interval: 30}
	env := NewEnv(cluster.Uniform(2, 8), DefaultParams())
	env.Controller = ctl
	pol, err := New("asrpt-sidecar", env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New("asrpt-sidecar", NewEnv(cluster.Uniform(2, 8), DefaultParams())); err == nil {
		t.Fatal("asrpt-sidecar built without a Controller")
	}
	mk := func(seq int, id string, submit float64, gpus int) *Task {
		task, err := env.NewTask(&job.Job{ID: id, User: "u", Account: "a", Submit: submit, GPUs: gpus, RunTime: 100, TimeLimit: 100},
			seq, prediction.Estimate{Seconds: 100, Known: true})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	free := placement.NewFree(env.Cluster)
	// Two 16-GPU jobs fill the cluster; a and b wait behind them.
	fill, fill2 := mk(0, "fill", 5, 8), mk(1, "fill2", 5, 8)
	pol.Arrive(5, fill)
	pol.Arrive(5, fill2)
	if got := pol.NextEvent(5); got != 30 {
		t.Fatalf("first poll at %v, want 30 (the grid point after the first arrival)", got)
	}
	if ds := pol.Schedule(5, free); len(ds) != 2 {
		t.Fatalf("the filling jobs did not start: %v", ds)
	}
	a, b := mk(2, "a", 10, 8), mk(3, "b", 20, 8)
	pol.Arrive(10, a)
	pol.Arrive(20, b)
	var ended []Ended
	ctl.do = func(now float64, q *Queue) error {
		ended = append(ended, q.Ended()...)
		if now == 30 {
			if got := q.Waiting(); len(got) != 2 || got[0] != a || got[1] != b {
				t.Errorf("waiting %v, want a, b", got)
			}
			if len(q.Running()) != 2 {
				t.Errorf("running %d, want 2", len(q.Running()))
			}
			q.SetPriority(b, math.MaxInt32)
			q.Require(b, []int{1}, 8)
			if nodes, gpn := q.Required(b); !slices.Equal(nodes, []int{1}) || gpn != 8 {
				t.Errorf("b bound to %v×%d", nodes, gpn)
			}
		}
		return nil
	}
	pol.Schedule(30, free)
	if got := pol.Pending(); got[0] != b {
		t.Fatalf("after b's explicit priority the order is %s first, want b", got[0].ID)
	}
	// fill ends: b, bound to node 1, cannot use node 0; a, next, takes it.
	if err := free.Give(&fill.Placement); err != nil {
		t.Fatal(err)
	}
	pol.Finish(40, fill)
	ds := pol.Schedule(40, free)
	if len(ds) != 1 || ds[0].Task != a {
		t.Fatalf("started %v, want a alone (b is bound to the busy node 1)", ds)
	}
	if got := pol.NextEvent(40); got != 60 {
		t.Fatalf("next poll at %v, want 60", got)
	}
	pol.Schedule(60, free)
	if len(ended) != 1 || ended[0].Job.ID != "fill" || ended[0].Start != 5 || ended[0].End != 40 {
		t.Fatalf("ended %+v, want fill from 5 to 40", ended)
	}
	ctl.do = func(now float64, q *Queue) error { return errors.New("slurmrestd down") }
	pol.Schedule(90, free)
	if err := env.ControllerErr(); err == nil {
		t.Fatal("the poll's error did not reach the Env")
	}
	if !slices.Equal(ctl.polls, []float64{30, 60, 90}) {
		t.Fatalf("polls at %v, want 30, 60, 90", ctl.polls)
	}
}

// TestValidateSidecar: the closed loop's names are valid without a
// Controller, except with the oracle suffix.
func TestValidateSidecar(t *testing.T) {
	env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
	for name, ok := range map[string]bool{"asrpt-sidecar": true, "asrpt-sidecar-priority": true,
		"asrpt-sidecar-oracle": false, "asrpt": true, "nope": false} {
		if err := Validate(name, env); (err == nil) != ok {
			t.Errorf("Validate(%q) = %v", name, err)
		}
	}
}

// TestRecalculationWakesTheController: once the queue is quiet and the
// Controller asks for no poll (+Inf), polls stop after settlePolls; the
// PriorityCalcPeriod still recalculates on time and the Controller polls
// at the next grid point after it, reading the priorities of that
// recalculation — the same it reads when no poll is skipped.
func TestRecalculationWakesTheController(t *testing.T) {
	run := func(next float64) (polls []float64, seen map[float64]uint32) {
		ctl := &scripted{interval: 30, next: next}
		env := NewEnv(cluster.Uniform(1, 8), DefaultParams())
		env.Controller = ctl
		pol, err := New("asrpt-sidecar", env)
		if err != nil {
			t.Fatal(err)
		}
		mk := func(seq int, id string, gpus int) *Task {
			task, err := env.NewTask(&job.Job{ID: id, User: "u", Account: "a", Submit: 0, GPUs: gpus, RunTime: 5000, TimeLimit: 5000},
				seq, prediction.Estimate{Seconds: 5000, Known: true})
			if err != nil {
				t.Fatal(err)
			}
			return task
		}
		free := placement.NewFree(env.Cluster)
		fill, w := mk(0, "fill", 8), mk(1, "w", 8)
		pol.Arrive(0, fill)
		pol.Arrive(0, w)
		seen = map[float64]uint32{}
		ctl.do = func(now float64, q *Queue) error {
			seen[now] = q.Priority(w)
			return nil
		}
		now := 0.0
		for now < 1000 {
			pol.Schedule(now, free)
			now = pol.NextEvent(now)
		}
		return ctl.polls, seen
	}
	every, strict := run(0)
	skipped, quiet := run(math.Inf(1))
	period := ExampleSite().Priority.CalcPeriod
	if len(skipped) >= len(every) {
		t.Fatalf("%d polls with nothing to do, %d polling every interval", len(skipped), len(every))
	}
	for _, p := range []float64{period, 2 * period, 3 * period} {
		if !slices.Contains(skipped, p) {
			t.Errorf("no poll at the recalculation %v s (polls at %v)", p, skipped)
		}
	}
	for at, prio := range quiet {
		if strict[at] != prio {
			t.Errorf("at %v s the controller read priority %d skipping polls, %d polling every interval", at, prio, strict[at])
		}
	}
}
