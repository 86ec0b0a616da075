// Package sidecar runs A-SRPT (or another policy of the replay's) against a
// live Slurm: every cycle it reads the queue and the nodes through the REST
// client, feeds finished jobs to the predictor, brings the policy up to
// date, and writes site factors (or priorities) and node lists so that
// Slurm starts jobs in the policy's order (design §9, docs/design.md). It
// never starts, cancels or changes a job other than through its site
// factor, priority, required nodes, a per-node GPU count and hold +
// release; with policy asrpt-preempt it also sends a running job that
// opted in the stop signal the job declared (signal.go; the choice of
// victims is package decision's, preempt.go).
//
// # Two write modes
//
// Factor mode (write_mode = "factor", the default) writes each managed
// job's site factor, which priority/multifactor adds to the priority it
// computes (Σ weight·factor + site factor − nice): the order is worth
// site_factor_max priority points at its head, 0 at its tail, like one more
// multifactor factor of that weight, and the site's fair share, QOS,
// partition and age keep counting. It needs a REST API that writes
// site_factor (v0.0.42, v0.0.44: Slurm 24.11 and later); on 22.05–23.11
// the sidecar refuses to start in factor mode, or with priority_fallback
// runs in priority mode (logged; asrpt_write_mode_fallback = 1). Priority
// mode (write_mode = "priority") writes absolute priorities in asrpt's
// bands, which take each managed job out of multifactor: the order alone
// decides among them.
//
// # One cycle: read → decide → apply
//
// read (read.go) takes the decision.Snapshot; decision.Decide (package
// decision) reads nothing from Slurm and writes nothing to it, and returns
// the plan as a value: one decision per managed pending job (priority or
// site factor; node list, or the reason for none), the jobs to stop and
// the events to count and log; apply (write.go) keeps to the write
// budget and the backoffs, sends the changed values and hands each
// write's decision.Outcome to decision.State.Record; account then derives
// the write metrics and log lines from what was sent.
// The plan (asrpt plan) is built from the same decisions.
//
// Two types split the work. decision.State is the decide step's state —
// the tracked jobs, the policy, the predictor — and its methods neither
// call Slurm nor touch a file, a log or a metric: what is to be counted
// or logged they leave as events (decision.Event), which record.go
// counts and logs. Sidecar is the shell around it: reads, writes, the
// state file, incidents, metrics, logs, /status and /plan. The closed-loop
// replay (package loop) runs this same shell over the replay's Slurm.
//
//  1. Read the nodes, then the accounting records since the last poll
//     (Observe them), then the pending and running jobs — last, to keep
//     the window between this read and the writes short (a failed node
//     or job read ends the cycle with an error; a failed accounting read
//     is retried from the same point next cycle).
//  2. (Accounting, above.)
//  3. Reconcile: new eligible jobs arrive in the policy (in submit order,
//     with a prediction and a communication profile: the one the job's
//     comment names, asrpt:model=NAME, else the first [[profiles.rule]]
//     matching its name's family or account, else data parallel with
//     profiles.default_gradient_bytes; package jobprofile); jobs the policy
//     started and Slurm started become running; jobs that vanish are
//     finished once accounting reports their end or they have been
//     missing from 3 lists in a row (see "A state that never forgets a
//     write" below).
//  4. Build the free GPUs from the nodes (usable nodes in scope; running
//     jobs' GPU indices where they add up), reserve the GPUs of dispatched
//     jobs Slurm has not started, and run the policy's Schedule, which
//     places by the jobs' profiles (Heavy-Edge). A placement that fails for
//     another reason than free GPUs is logged once per incident and
//     counted (asrpt_placement_errors_total); the job waits unplaced.
//  5. Rank: dispatched jobs (in dispatch order), then Policy.Pending.
//     Factor mode: site factors rank-linear from site_factor_max at the
//     head to 0 at the tail (multifactor.SiteFactors); a job's factor is
//     written again only when it moved by more than site_factor_max/64,
//     or when the job is in the head region (its turn has come, or it is
//     among the first 16), where every change is written: one arrival in
//     a queue of more than 65 jobs costs the head region's writes, not the
//     queue's. Priority mode: dispatched and released jobs in HighBand,
//     the others in LowBand, strictly decreasing in rank, below 2^31,
//     labelled by Label so that only jobs that moved get new values.
//  6. Write, head first, only changed values, at most WriteLimit updates.
//     The REST client re-reads each job before writing to it and refuses
//     one that is no longer pending. A node list is written guarded: one
//     request carries it with the priority (priority mode) or the site
//     factor (factor mode) and the job's own account, which slurmctld
//     checks before the node list and refuses whole, with 2073, once the
//     job runs (22.05, 24.11, 26.05), so that Slurm cannot start it
//     between the check and the write (a node list that reaches a running
//     job is applied as a resize: RESIZING records in accounting, seen on
//     22.05 and 24.11). It leaves the job's eligible time alone, where the
//     hold and release used before reset it (slurmctld clears begin_time
//     on both). Factor mode takes back a priority asrpt set in
//     priority mode (which masks the factor) by a release sent with the
//     job's first site factor: an Operator's release drops an explicit
//     priority. A write that fails
//     waits interval·2^(n−1) (at most 15 minutes) before the n-th retry;
//     each job's failure is logged once per reason, and every request and
//     retry is counted (asrpt_write_requests_total,
//     asrpt_write_retries_total). A value Slurm applied although it
//     answered an error counts as written.
//
// # Jobs left alone
//
// Never written: jobs out of scope (partition, QOS, account; a job
// submitted to several partitions is in scope when each of them is), held
// jobs, running jobs, tasks
// split off a job array and heterogeneous job components other than the
// leader (the unit is written through its remainder or leader), an array
// running as many tasks as its throttle allows, a heterogeneous job with a
// component not pending, and jobs whose priority is not what asrpt last
// wrote (an admin set it: the job is marked hands-off for good; priority
// mode only, since in factor mode the priority plugin moves the priority
// all the time, and no REST API shows a job's site factor: an admin's
// explicit priority then simply wins, as it overrides the factor). The
// plan lists each pending job left alone with the reason.
//
// # Jobs asrpt does not rank keep their standing
//
// A pending job in scope that asrpt does not rank because it has no GPUs
// (CPU-only) or asks for more than the cluster still competes with the
// managed jobs for nodes, and asrpt's values would put every managed job
// ahead of it (priority mode: absolute priorities far above multifactor's;
// factor mode: site factors it lacks). Each such job keeps its standing
// (decision/standing.go): it is put in the written order just ahead of the first
// managed job that Slurm's own order (priority without asrpt's values, then
// submit time, then id) puts behind it, and is written the priority or
// site factor of that place, never a node list: no managed job Slurm alone
// would start after it gets a higher value. The plan shows it as
// stage "standing"; asrpt_jobs{state="standing"} counts them.
//
// # Jobs Slurm holds back
//
// A job whose pending reason is not one of resources or its turn
// (Reason=Dependency, BeginTime, a QOS or association limit, Reservation,
// a partition down, ...; or, before Slurm's first pass over a new job, a
// dependency still listed or an eligible time to come) is ranked in the
// policy with its virtual progress, so that it is in order the moment it
// can start, but never dispatched, never given a node list, and holds no
// GPUs (policy.Task.Blocked). A dispatched job that Slurm then holds back
// gives its GPUs up and is ranked again.
//
// # Job arrays, heterogeneous jobs, partitions
//
// A job array is ranked as one unit through its pending remainder, by the
// prediction for one task, and gets priorities only: a node list would
// pin every later task to the same nodes (and Slurm 22.05 applies an
// update of the array's id to its running tasks too, so the client writes
// to the pending task indices there). While the array runs as many tasks
// as its throttle allows, the remainder is parked. When a task of a
// remainder whose turn had come starts, the rest arrives again as the
// array's next task. A heterogeneous job is ranked through its leader with
// the GPUs of all components and gets priorities only (Slurm applies a
// write to the leader to every component). Every job is placed on nodes of
// its own partitions that it does not exclude; the policy sees one pool of
// GPUs, so a placement elsewhere is made again on those nodes, or no node
// list is written. A job whose priority an admin set before
// asrpt ever wrote to it cannot be told apart from a multifactor priority
// and is managed.
//
// # Withdrawn jobs
//
// A waiting job that vanishes (for good: see below), is held, leaves the
// scope, is taken over by an admin, or is started by Slurm before its turn
// (2 lists in a row show it running: a job flapping between PENDING and
// RUNNING keeps its place) is withdrawn from the policy (Policy.Withdraw): it has no rank, gets no writes and no longer
// takes a share of the virtual machine. One withdrawn while still pending
// (held, out of scope) is parked with the virtual work it had left
// (Task.VirtualRemaining) and, when it is eligible again, rejoins the
// policy with that work (Policy.Restore; a released job rejoins at the end
// of the release queue) rather than as a new arrival.
//
// # Dispatched jobs that Slurm does not start
//
// When the policy starts a job, the sidecar gives it the top of the
// priority order and writes the Heavy-Edge node list (where the job's
// request allows). If Slurm has not started it after DispatchGrace (the
// model does not know memory, CPUs or features), the job keeps its place
// at the head but gets a new placement away from the old nodes; if its
// nodes are taken by someone else first, it is placed again at once. It is
// never sent back into the policy's queue.
//
// # Node lists and per-node GPU counts
//
// A node list is written for a dispatched job when: the job did not ask
// for nodes itself; no chosen node is excluded by the job; and either the
// placement is one node and the job's GPUs may all sit on one node, or it
// spreads evenly over several nodes with the job's own per-node count
// (--gres=gpu:N / --gpus-per-node=N). With gpus_per_node enabled, a
// --gpus=N job spread evenly over several nodes also gets that per-node
// count. Slurm refusing a node list marks the job: no further node list is
// tried for it.
//
// # Faults (tested)
//
// sidecar/live_test.go (build tag integration) runs Run at a 1 s interval
// against each real Slurm lab and breaks it: slurmrestd killed (SIGKILL)
// and restarted, slurmctld stopped and restarted, a job cancelled between
// the read and the write, an expired token, and, through an httptest proxy,
// a 500 with errors[] and a truncated body on the job list
// (fakeserver_test.go does the last two without a lab). In every case the
// sidecar kept running, logged one "cycle failed" and one "cycles
// recovered" line, counted the failures in asrpt_cycles_total,
// asrpt_read_errors_total or asrpt_write_failures_total, succeeded on the
// first cycle after the fault ended, and wrote only to jobs its last read
// showed pending:
//
//	SLURMLAB_LABS="22.05 24.11 26.05" go test -tags integration -count=1 -run TestLiveFaults ./sidecar/
//
// Slurm answers a write to a job cancelled a moment before with 2084 "Job
// has already finished" (not 2017, which comes only once the job is purged),
// HTTP 500 up to 24.11 and 422 on 26.05, which the client maps to
// ErrJobGone; the write counts as a failure and the next read drops the job.
//
// # State
//
// The state file (JSON, written atomically) keeps, per job, the prediction,
// the remaining virtual work (Task.VirtualRemaining), whether it was
// released, its position in the policy's Pending order, the dispatch and
// what asrpt wrote (priority, site factor, node list; a file written
// before factor mode has no site factors and reads as none). A restart re-enters the waiting jobs into a fresh
// policy through Policy.Restore in that order with their remaining work,
// so the order is unchanged (TestRestartKeepsOrder). A corrupt file is
// reported, moved aside and rebuilt from Slurm.
//
// # A state that never forgets a write
//
// No REST call reports a job's site factor, so only the state file can say
// which jobs hold one of asrpt's; `asrpt giveback` undoes what it lists.
// Three rules keep that list complete (decision/absence.go, decision/outcome.go):
//
//   - A job missing from one job list is kept, with its sequence number,
//     its virtual progress and what asrpt wrote to it, and gets no writes;
//     it is taken for finished once accounting reports its end (any
//     state), or after it has been missing from AbsentCycles (3) lists in
//     a row.
//   - A job list showing fewer than half of the tracked jobs expected (at
//     least suspectMinJobs, 4; a restarting slurmctld can answer 200 with
//     no jobs) is suspect: the cycle counts the absences and does nothing
//     else (no arrival, no departure, no write); it is logged once per
//     incident and counted in asrpt_suspect_job_lists_total. A queue that
//     really shrank so is accepted AbsentCycles lists later. The state
//     file's job list is never saved as null ("jobs": [] when empty).
//   - Write-ahead: before a cycle's first write, each job its decisions
//     may write to is marked (wrote_nodes, may_site_factor, may_priority;
//     an over-approximation) and, when a mark is new or the last save
//     failed, the state is saved; when that save fails (a full disk)
//     nothing is written that cycle (asrpt_writes_held_total,
//     asrpt_state_errors_total, /healthz 503) and writes resume with the
//     first save that succeeds. So every value that reaches Slurm is in
//     the state file first, also when the sidecar dies before the
//     cycle's own save; giveback sets a marked job's site factor back to
//     0, and releases a marked priority whatever its value. The marks
//     clear when the job is handed back (may_priority also when a
//     priority write succeeds and its value is known).
package sidecar
