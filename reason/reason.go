// Package reason names why a job waits, is left alone, or gets no write:
// a typed Code a program can match, with a Detail for people. The codes
// are part of the output contract (the plan's "reason" key, the status's
// left-alone list): a code once published keeps its meaning; the details
// may be reworded.
package reason

// Code is a stable, snake_case name of a reason.
type Code string

// Why a pending job is left alone: asrpt does not rank it.
const (
	NotPending        Code = "not_pending"         // Slurm does not show it pending
	Held              Code = "held"                // held by its user or an admin (or a component is)
	NoGPUs            Code = "no_gpus"             // it asks for no GPU
	OutOfScope        Code = "out_of_scope"        // its partition, QOS or account is not in the configured scope
	LargerThanCluster Code = "larger_than_cluster" // it asks for more GPUs than the cluster has
	AdminPriority     Code = "admin_priority"      // someone else changed the priority asrpt wrote
	ArrayTask         Code = "array_task"          // ranked through the array's pending remainder
	ArrayThrottled    Code = "array_throttled"     // the array is at its task limit
	HetComponent      Code = "het_component"       // ranked through the heterogeneous job's leader
	HetIncomplete     Code = "het_incomplete"      // a component is missing from the queue or not pending
	NotManaged        Code = "not_managed"         // never tracked by asrpt
	NotSchedulable    Code = "not_schedulable"     // the policy cannot take it (detail: why)
	Withdrawn         Code = "withdrawn"           // it left the policy (detail: started early, requeued, missing, …)
)

// Where a ranked job stands.
const (
	// VirtualQueue: waiting for its turn on A-SRPT's virtual machine.
	VirtualQueue Code = "virtual_queue"
	// NoRoom: its turn has come (released); it waits for GPUs.
	NoRoom Code = "no_room"
	// HeldBack: Slurm holds it back (dependency, begin time, limits,
	// reservation, partition down); ranked, never dispatched.
	HeldBack Code = "held_back"
	// Standing: a job asrpt does not rank, kept at its place in Slurm's
	// own order.
	Standing Code = "standing"
	// Behind: other jobs are ahead of it in the policy's waiting order
	// (the replay's --why).
	Behind Code = "behind"
	// Blocked: at the head of the waiting order, enough GPUs are free in all, yet the policy does not start
	// it now: they are kept for jobs ahead (reservations, a blocking
	// head), or the job waits for a consolidated placement (τ) (the
	// replay's --why).
	Blocked Code = "blocked"
)

// Why a dispatched job gets no node list.
const (
	NodeListsOff      Code = "node_lists_off"       // required_nodes = false
	NodeListRefused   Code = "node_list_refused"    // Slurm refused a node list for this job
	NodeListShape     Code = "node_list_shape"      // an array or heterogeneous job: a node list would pin every part
	NoPlacement       Code = "no_placement"         // no placement on nodes the job can use
	NodesNamed        Code = "nodes_named"          // the job names its own nodes
	NodeNotUsable     Code = "node_not_usable"      // the placement is on a node the job cannot use
	GPUsPerNodeDiffer Code = "gpus_per_node_differ" // the placement does not match the job's GPUs per node
)

// Why a running job may not be preempted (policy asrpt-preempt).
const (
	NotPreempting     Code = "not_preempting"     // the policy is not asrpt-preempt
	BadPreemptWord    Code = "bad_preempt_word"   // its asrpt:preempt word was refused
	NotOptedIn        Code = "not_opted_in"       // no asrpt:preempt word, no rule matches
	NoRequeue         Code = "no_requeue"         // Slurm may not requeue it
	PreemptShape      Code = "preempt_shape"      // array tasks and heterogeneous jobs are not preempted
	SignalUnsupported Code = "signal_unsupported" // this REST API cannot deliver the signal as declared
	PreemptFailed     Code = "preempt_failed"     // a preemption of it was not sent, or it ignored one
	NotInPolicy       Code = "not_in_policy"      // not running in asrpt's policy
	Stopping          Code = "stopping"           // its stop signal was sent; waiting for its requeue
	MaxPreemptions    Code = "max_preemptions"    // stopped policy.max_preemptions times already
	Exempt            Code = "exempt"             // within policy.preempt_exempt of its last start
)

// Reason is a code with its detail. The zero Reason is no reason.
type Reason struct {
	Code   Code   `json:"code"`
	Detail string `json:"detail,omitempty"`
}

// Of returns the reason code with detail d.
func Of(c Code, d string) Reason { return Reason{Code: c, Detail: d} }

// None reports whether r is the zero Reason.
func (r Reason) None() bool { return r.Code == "" }

// String returns the detail, or the code when there is none.
func (r Reason) String() string {
	if r.Detail != "" {
		return r.Detail
	}
	return string(r.Code)
}
