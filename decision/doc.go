// Package decision is the sidecar's decide step, with no I/O: from one
// cycle's read of Slurm (Snapshot) and the state the last step left
// (State: the tracked jobs, the policy that ranks them, the predictor
// that sizes them), Decide returns the cycle's Plan — per managed pending
// job the priority or site factor to write, the node list and per-node
// GPU count (or the typed reason, package reason, why none is written),
// the running jobs to stop, and the events the caller counts and logs.
//
// It reads no Slurm, opens no file, writes no log line and bumps no
// metric: the same snapshots given to the same state give the same plans
// (TestDecideGolden in package sidecar calls Decide on golden snapshots
// with no Slurm, fake or real). Package sidecar is the shell around it —
// reads, writes within a budget, backoffs, the state file, metrics, logs —
// and the closed-loop replay (package loop) runs that same shell above the
// replay's model of slurmctld, so a replay and a live sidecar share this
// code path.
//
// What the shell writes comes back as values too (outcome.go): before a
// cycle's writes, State.Intend marks what the plan may write (the shell
// saves those marks first); after each write — a value, a stop signal, a
// giveback — the shell hands its Outcome (the update, written, lost or
// failed, and why) to State.Record, which alone changes what the state
// knows a job holds: its priority, factor and node list, its backoff, the
// marks giveback reads, a stop signal sent or not. The shell sends, counts
// and logs; it sets no field of an Entry.
//
// Times are Unix seconds (float64) unless a field says otherwise; GPU
// counts are whole GPUs; priorities and site factors are Slurm priority
// units.
package decision
