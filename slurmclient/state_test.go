package slurmclient

import "testing"

func TestJobStates(t *testing.T) {
	for _, tc := range []struct {
		state            string
		pending, running bool
	}{
		{"PENDING", true, false},
		{"RUNNING", false, true},
		{"COMPLETED", false, false},
		{"SUSPENDED", false, false},
		{"", false, false},
	} {
		j := Job{State: tc.state}
		if j.Pending() != tc.pending || j.Running() != tc.running {
			t.Errorf("%q: Pending %v Running %v, want %v %v", tc.state, j.Pending(), j.Running(), tc.pending, tc.running)
		}
	}
}

func TestNodeSchedulable(t *testing.T) {
	for _, tc := range []struct {
		state string
		flags []string
		want  bool
	}{
		{"IDLE", nil, true},
		{"MIXED", nil, true},
		{"MIXED", []string{"PLANNED"}, true},
		{"ALLOCATED", nil, false},
		{"DOWN", nil, false},
		{"IDLE", []string{"DRAIN"}, false},
		{"MIXED", []string{"COMPLETING"}, false},
		{"IDLE", []string{"MAINTENANCE", "RESERVED"}, false},
		{"IDLE", []string{"POWERED_DOWN"}, false},
		{"IDLE", []string{"NOT_RESPONDING"}, false},
		{"IDLE", []string{"REBOOT_REQUESTED"}, false},
		{"IDLE", []string{"FAIL"}, false},
	} {
		n := Node{State: tc.state, Flags: tc.flags}
		if got := n.Schedulable(); got != tc.want {
			t.Errorf("%s %v: Schedulable %v, want %v", tc.state, tc.flags, got, tc.want)
		}
	}
}
