package slurmclient

import (
	"errors"
	"testing"
)

// TestWritable: what UpdateJob lets through for each shape of record.
func TestWritable(t *testing.T) {
	f := uint32(5)
	p := uint32(9)
	leader := Job{ID: "11", State: "PENDING", Het: Het{LeaderID: "11", Components: []string{"11", "12"}}}
	comp := Job{ID: "12", State: "PENDING", Het: Het{LeaderID: "11", Offset: 1, Components: []string{"11", "12"}}}
	array := Job{ID: "20", State: "PENDING", Array: Array{JobID: "20", Tasks: "1-4"}}
	running := Job{ID: "30", State: "RUNNING"}
	for _, tc := range []struct {
		name string
		j    Job
		u    JobUpdate
		want error
	}{
		{"plain node list", Job{ID: "1", State: "PENDING"}, JobUpdate{RequiredNodes: []string{"n1"}}, nil},
		{"running job", running, JobUpdate{Priority: &p}, ErrNotPending},
		{"het leader priority", leader, JobUpdate{Priority: &p}, nil},
		{"het leader node list", leader, JobUpdate{RequiredNodes: []string{"n1"}}, ErrInvalid},
		{"het component site factor", comp, JobUpdate{SiteFactor: &f}, nil},
		{"het component priority", comp, JobUpdate{Priority: &p}, ErrInvalid},
		{"het component site factor and priority", comp, JobUpdate{SiteFactor: &f, Priority: &p}, ErrInvalid},
		{"array node list", array, JobUpdate{RequiredNodes: []string{"n1"}}, ErrInvalid},
		{"array site factor", array, JobUpdate{SiteFactor: &f}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Writable(tc.j, tc.u); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Writable = %v, want %v", err, tc.want)
			}
		})
	}
}
