package decision

import (
	"strings"
	"testing"
	"time"

	"github.com/asrpt/asrpt/slurmclient"
)

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
		{"Licenses", true}, {"JobArrayTaskLimit", true}, {"some reason of a later release", true}, {strings.Repeat("x", 5000), true},
	} {
		got := HeldBack(tc.reason)
		if len(tc.reason) > maxReason {
			tc.reason = tc.reason[:maxReason]
		}
		if (got != "") != tc.held || tc.held && got != tc.reason {
			t.Errorf("heldBack(%q) = %q, want held %v", tc.reason, got, tc.held)
		}
	}
}

func TestJobHeldBack(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name string
		j    slurmclient.Job
		want string
	}{
		{"fresh from sbatch with a dependency", slurmclient.Job{Reason: "None", Dependency: "afterany:12(unfulfilled)"}, "Dependency"},
		{"dependency met", slurmclient.Job{Reason: "Priority"}, ""},
		{"begin time to come, not yet looked at", slurmclient.Job{Reason: "None", Eligible: now.Add(time.Hour)}, "BeginTime"},
		{"eligible since submit", slurmclient.Job{Reason: "Resources", Eligible: now.Add(-time.Hour)}, ""},
		{"reason first", slurmclient.Job{Reason: "QOSGrpGRES", Dependency: "afterok:1(unfulfilled)"}, "QOSGrpGRES"},
	} {
		if got := jobHeldBack(&tc.j, float64(now.Unix())); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
