package sidecar

import "testing"

func TestHeldBack(t *testing.T) {
	for _, tc := range []struct {
		reason string
		held   bool
	}{
		{"", false}, {"None", false}, {"Resources", false}, {"Priority", false},
		{"ReqNodeNotAvail, UnavailableNodes:node3", false}, {"ReqNodeNotAvail", false},
		{"Dependency", true}, {"DependencyNeverSatisfied", true}, {"BeginTime", true},
		{"QOSGrpGRES", true}, {"AssocGrpGRES", true}, {"QOSMaxGRESPerUser", true},
		{"Reservation", true}, {"PartitionDown", true}, {"PartitionInactive", true},
		{"Licenses", true}, {"JobArrayTaskLimit", true}, {"some reason of a later release", true},
	} {
		got := heldBack(tc.reason)
		if (got != "") != tc.held || tc.held && got != tc.reason {
			t.Errorf("heldBack(%q) = %q, want held %v", tc.reason, got, tc.held)
		}
	}
}
