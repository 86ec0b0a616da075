package decision

import (
	"slices"
	"testing"

	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

func u32(v uint32) *uint32 { return &v }

// TestRecord feeds outcomes, one after another, to one job's entry and
// checks what the state then knows the job holds and when it may be
// written again (interval 30 s, clock 1,000 s).
func TestRecord(t *testing.T) {
	gpn := 2
	release := false
	type step struct {
		o    Outcome
		want Recorded
	}
	tests := []struct {
		name  string
		steps []step
		check func(t *testing.T, st *State, e *Entry)
	}{
		{
			name: "written values are known and clear the backoff",
			steps: []step{
				{o: Outcome{Kind: "priority", Update: slurmclient.JobUpdate{Priority: u32(7)}, Result: Failed, Reason: "server"},
					want: Recorded{Wait: 30, FirstOfReason: true}},
				{o: Outcome{Kind: "priority", Update: slurmclient.JobUpdate{Priority: u32(7)}}},
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1", "n2"}, GPUsPerNode: &gpn, SiteFactor: u32(9)}}},
			},
			check: func(t *testing.T, st *State, e *Entry) {
				if e.Prio != 7 || e.MayPrio || e.Factor != 9 || !slices.Equal(e.Nodes, []string{"n1", "n2"}) || e.GPUsPerNode != 2 || !e.WroteNodes {
					t.Errorf("entry prio %d mayPrio %v factor %d nodes %v gpn %d wroteNodes %v", e.Prio, e.MayPrio, e.Factor, e.Nodes, e.GPUsPerNode, e.WroteNodes)
				}
				if e.Fails["priority"] != nil || !e.Due("priority", st.Clock) {
					t.Errorf("a written priority still backs off: %+v", e.Fails["priority"])
				}
			},
		},
		{
			name: "a release without a priority leaves the plugin's value",
			steps: []step{
				{o: Outcome{Kind: "priority", Update: slurmclient.JobUpdate{Priority: u32(7)}}},
				{o: Outcome{Kind: "site_factor", Update: slurmclient.JobUpdate{SiteFactor: u32(3), Hold: &release}}},
			},
			check: func(t *testing.T, _ *State, e *Entry) {
				if e.Prio != 0 || e.Factor != 3 {
					t.Errorf("prio %d factor %d, want 0 and 3", e.Prio, e.Factor)
				}
			},
		},
		{
			name: "the backoff doubles and the same reason is first once",
			steps: []step{
				{o: Outcome{Kind: "priority", Result: Failed, Reason: "server"}, want: Recorded{Wait: 30, FirstOfReason: true}},
				{o: Outcome{Kind: "priority", Result: Failed, Reason: "server"}, want: Recorded{Wait: 60}},
				{o: Outcome{Kind: "priority", Result: Failed, Reason: "timeout"}, want: Recorded{Wait: 120, FirstOfReason: true}},
			},
			check: func(t *testing.T, st *State, e *Entry) {
				if e.Due("priority", st.Clock) || !e.Due("site_factor", st.Clock) {
					t.Errorf("due priority %v site_factor %v, want false and true", e.Due("priority", st.Clock), e.Due("site_factor", st.Clock))
				}
				st.Clock += 120
				if !e.Due("priority", st.Clock) {
					t.Error("not due once its backoff ran")
				}
			},
		},
		{
			name: "the backoff is capped",
			steps: func() []step {
				var s []step
				for i, w := range []float64{30, 60, 120, 240, 480, 900, 900} {
					s = append(s, step{o: Outcome{Kind: "priority", Result: Failed, Reason: "server"}, want: Recorded{Wait: w, FirstOfReason: i == 0}})
				}
				return s
			}(),
		},
		{
			name: "node lists stop after three failures",
			steps: []step{
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1"}}, Result: Failed, Reason: "server"}, want: Recorded{Wait: 30, FirstOfReason: true}},
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1"}}, Result: Failed, Reason: "server"}, want: Recorded{Wait: 60}},
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1"}}, Result: Failed, Reason: "server"}, want: Recorded{Wait: 120, GiveUp: true}},
			},
			check: func(t *testing.T, _ *State, e *Entry) {
				if !e.NoNodes || !e.WroteNodes {
					t.Errorf("noNodes %v wroteNodes %v, want both", e.NoNodes, e.WroteNodes)
				}
			},
		},
		{
			name: "a node list refused for good stops at once",
			steps: []step{
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1"}}, Result: Failed, Reason: "invalid", NodesFinal: true},
					want: Recorded{Wait: 30, GiveUp: true, FirstOfReason: true}},
			},
			check: func(t *testing.T, _ *State, e *Entry) {
				if !e.NoNodes {
					t.Error("a final refusal left node lists on")
				}
			},
		},
		{
			name: "a value not applied is not relied on",
			steps: []step{
				{o: Outcome{Kind: "priority", Update: slurmclient.JobUpdate{Priority: u32(7)}}},
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1"}}}},
				{o: Outcome{Kind: "priority", Update: slurmclient.JobUpdate{Priority: u32(8)}, Result: Failed, Reason: "not_applied", NotApplied: true},
					want: Recorded{Wait: 30, FirstOfReason: true}},
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n2"}}, Result: Failed, Reason: "not_applied", NotApplied: true},
					want: Recorded{Wait: 30, FirstOfReason: true}},
			},
			check: func(t *testing.T, _ *State, e *Entry) {
				if e.Prio != 0 || e.Nodes != nil {
					t.Errorf("prio %d nodes %v, want both forgotten", e.Prio, e.Nodes)
				}
			},
		},
		{
			name: "a lost write marks its node list only",
			steps: []step{
				{o: Outcome{Kind: "nodes", Update: slurmclient.JobUpdate{RequiredNodes: []string{"n1"}, Priority: u32(7)}, Result: Lost}},
			},
			check: func(t *testing.T, st *State, e *Entry) {
				if !e.WroteNodes || e.Nodes != nil || e.Prio != 0 || e.Fails != nil || !st.Dirty {
					t.Errorf("wroteNodes %v nodes %v prio %d fails %v dirty %v", e.WroteNodes, e.Nodes, e.Prio, e.Fails, st.Dirty)
				}
			},
		},
		{
			name: "a component's factor is marked on its leader",
			steps: []step{
				{o: Outcome{Target: "41+1", Kind: "site_factor", Update: slurmclient.JobUpdate{SiteFactor: u32(5)}}},
				{o: Outcome{Target: "41+1", Kind: "site_factor", Update: slurmclient.JobUpdate{SiteFactor: u32(5)}}},
				{o: Outcome{Target: "41+2", Kind: "site_factor", Update: slurmclient.JobUpdate{SiteFactor: u32(5)}, Result: Failed, Reason: "server"},
					want: Recorded{Wait: 30, FirstOfReason: true}},
			},
			check: func(t *testing.T, _ *State, e *Entry) {
				if !slices.Equal(e.HetFactor, []string{"41+1"}) || e.Factor != 0 || e.Fails["site_factor"] == nil {
					t.Errorf("hetFactor %v factor %d fails %v", e.HetFactor, e.Factor, e.Fails)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newTestState(t, WritePriority)
			st.Clock = 1000
			e := &Entry{ID: "41"}
			for i, s := range tt.steps {
				s.o.Entry = e
				if s.o.Target == "" {
					s.o.Target = e.ID
				}
				if got := st.Record(s.o); got != s.want {
					t.Errorf("step %d: Record = %+v, want %+v", i, got, s.want)
				}
			}
			if tt.check != nil {
				tt.check(t, st, e)
			}
		})
	}
}

// TestIntend checks the marks set before a cycle's writes: what each mode
// may write to a pending job, none to one not pending, and no new mark the
// second time.
func TestIntend(t *testing.T) {
	het := pending("50", "het", 1, epoch)
	het.Het = slurmclient.Het{LeaderID: "50", Components: []string{"50", "51"}}
	tests := []struct {
		name  string
		mode  WriteMode
		job   slurmclient.Job
		d     Decision
		check func(e *Entry) bool
	}{
		{"priority", WritePriority, pending("41", "a", 1, epoch), Decision{Priority: 5}, func(e *Entry) bool { return e.MayPrio && !e.MayFactor && !e.WroteNodes }},
		{"nodes", WritePriority, pending("41", "a", 1, epoch), Decision{Nodes: []string{"n1"}}, func(e *Entry) bool { return e.MayPrio && e.WroteNodes }},
		{"factor", WriteFactor, pending("41", "a", 1, epoch), Decision{Factor: 4, SetFactor: true}, func(e *Entry) bool { return e.MayFactor && !e.MayPrio }},
		{"het factor", WriteFactor, het, Decision{Factor: 4, SetFactor: true}, func(e *Entry) bool {
			return e.MayFactor && slices.Equal(e.HetFactor, []string{"51"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newTestState(t, tt.mode)
			e := &Entry{ID: tt.job.ID, Record: &tt.job, shape: tt.job.Shape()}
			tt.d.Entry = e
			ds := []Decision{tt.d}
			if !st.Intend(ds) || !st.Dirty || !tt.check(e) {
				t.Fatalf("first Intend: dirty %v entry %+v", st.Dirty, e)
			}
			st.Dirty = false
			if st.Intend(ds) || st.Dirty {
				t.Error("a second Intend marked again")
			}
			running := tt.job
			running.State = "RUNNING"
			e2 := &Entry{ID: "99", Record: &running}
			if st.Intend([]Decision{{Entry: e2, Priority: 5, Factor: 4, SetFactor: true, Nodes: []string{"n1"}}}) {
				t.Error("a running job was marked")
			}
		})
	}
}

// TestHandedBack checks that a giveback's job holds nothing of asrpt's
// afterwards.
func TestHandedBack(t *testing.T) {
	st := newTestState(t, WriteFactor)
	e := &Entry{ID: "41", Prio: 7, Factor: 9, Nodes: []string{"n1"}, GPUsPerNode: 2, MayFactor: true, MayPrio: true, WroteNodes: true}
	st.Entries["41"] = e
	st.Record(Outcome{Entry: e, Target: "41", Kind: KindGiveback})
	if e.Prio != 0 || e.Factor != 0 || e.Nodes != nil || e.GPUsPerNode != 0 || e.MayFactor || e.MayPrio || !st.Dirty {
		t.Errorf("after a giveback: %+v dirty %v", e, st.Dirty)
	}
	if !e.WroteNodes {
		t.Error("the node-list mark, which giveback reads, was cleared")
	}
}

// TestRecordSignal checks a stop signal's two ends: sent, the job is
// marked signalled; not sent, it leaves the policy for good with the reason.
func TestRecordSignal(t *testing.T) {
	st := newTestState(t, WritePriority)
	sent := &Entry{ID: "41", Phase: PhStopping, StopFrom: "comment"}
	st.Record(Outcome{Entry: sent, Target: "41", Kind: KindSignal})
	if !sent.SignalSent || sent.Phase != PhStopping || !st.Dirty {
		t.Errorf("sent: signalSent %v phase %v dirty %v", sent.SignalSent, sent.Phase, st.Dirty)
	}
	lost := &Entry{ID: "42", Phase: PhStopping, StopFrom: "comment"}
	st.Record(Outcome{Entry: lost, Target: "42", Kind: KindSignal, Result: Failed, Reason: "the signal could not be sent"})
	if lost.SignalSent || lost.Phase != PhIdle || lost.StopFrom != "" || lost.StopWhy.Code != reason.PreemptFailed ||
		lost.Why.Detail != "preemption not sent: the signal could not be sent" || lost.CanStop() {
		t.Errorf("not sent: %+v", lost)
	}
}
