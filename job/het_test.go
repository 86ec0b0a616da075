package job

import "testing"

// TestMergeHet: the unit has every component's GPUs and nodes and the
// leader's identity, in whichever order the components come.
func TestMergeHet(t *testing.T) {
	lead := Job{ID: "8", Submit: 100, User: "ann", Name: "bert", Account: "nlp", Partition: "gpu", QOS: "normal",
		GPUs: 4, Nodes: 1, RunTime: 3600, TimeLimit: 7200, State: "COMPLETED", Preemptible: true, Command: 7}
	comp := Job{ID: "9", Submit: 101, User: "ann", Name: "bert-io", Partition: "cpu", QOS: "low",
		GPUs: 2, Nodes: 2, RunTime: 3601, TimeLimit: 3600, State: "FAILED"}
	want := lead
	want.GPUs, want.Nodes, want.RunTime = 6, 3, 3601
	for _, tc := range []struct {
		name   string
		first  Job
		second Job
		leader bool // second is the leader
	}{
		{"leader first", lead, comp, false},
		{"leader last", comp, lead, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unit := tc.first
			unit.ID = "8"
			MergeHet(&unit, &tc.second, tc.leader)
			if unit != want {
				t.Errorf("merged\n%+v\nwant\n%+v", unit, want)
			}
		})
	}
	// A third component merged after the leader keeps the leader's fields.
	unit := lead
	third := comp
	third.GPUs, third.Nodes, third.Submit = 1, 1, 99
	MergeHet(&unit, &third, false)
	if unit.GPUs != 5 || unit.Nodes != 2 || unit.Submit != 99 || unit.Name != "bert" || unit.State != "COMPLETED" || unit.ID != "8" {
		t.Errorf("after a component: %+v", unit)
	}
}
