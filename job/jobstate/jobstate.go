// Package jobstate holds Slurm's job state names and what they mean, for
// the REST client and for the readers of accounting files (sacct -P), so
// that no other package compares Slurm's state strings.
package jobstate

import "strings"

// Base job states the project acts on.
const (
	Pending   = "PENDING"
	Running   = "RUNNING"
	Completed = "COMPLETED"
)

// unfinished are the states (base states and state flags, as sacct prints
// them) of a job that has not ended.
var unfinished = map[string]bool{
	"PENDING": true, "RUNNING": true, "REQUEUED": true, "REQUEUE_HOLD": true,
	"REQUEUE_FED": true, "RESIZING": true, "SUSPENDED": true, "STOPPED": true,
	"CONFIGURING": true, "COMPLETING": true, "SIGNALING": true, "STAGE_OUT": true,
}

// Unfinished reports whether a job in state (any case; sacct's "CANCELLED
// by 0" counts by its first word) has not ended yet.
func Unfinished(state string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(state), " ")
	return unfinished[strings.ToUpper(first)]
}
