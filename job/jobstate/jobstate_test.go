package jobstate

import "testing"

func TestUnfinished(t *testing.T) {
	for state, want := range map[string]bool{
		"PENDING": true, "running": true, "REQUEUED": true, "RESIZING": true, "SUSPENDED": true,
		"COMPLETING": true, " CONFIGURING ": true,
		"COMPLETED": false, "FAILED": false, "CANCELLED by 0": false, "TIMEOUT": false,
		"OUT_OF_MEMORY": false, "NODE_FAIL": false, "": false,
	} {
		if got := Unfinished(state); got != want {
			t.Errorf("Unfinished(%q) = %v, want %v", state, got, want)
		}
	}
}
