package decision

import (
	"github.com/asrpt/asrpt/job"
	"github.com/asrpt/asrpt/jobprofile"
	"github.com/asrpt/asrpt/jobword"
	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/predictor"
	"github.com/asrpt/asrpt/reason"
	"github.com/asrpt/asrpt/slurmclient"
)

// Phase is where a tracked job stands.
type Phase uint8

const (
	// PhQueued: waiting in the policy.
	PhQueued Phase = iota
	// PhDispatched: the policy started it (its turn has come); Slurm has
	// not started it yet. It holds its placement's GPUs in the free model.
	PhDispatched
	// PhRunning: Slurm runs a job the policy started.
	PhRunning
	// PhIdle: tracked but not in the policy (withdrawn from it: held,
	// out of scope, taken over by an admin, started by Slurm before its
	// turn; or running after a restart).
	PhIdle
	// PhStopping: the policy preempted a job Slurm runs; its stop signal
	// is sent (or goes out this cycle) and Slurm has not requeued it yet.
	// It waits in the policy's release queue, held back (preempt.go).
	PhStopping
)

var phaseNames = [...]string{"queued", "dispatched", "running", "idle", "stopping"}

func (p Phase) String() string { return phaseNames[p] }

// Entry is one job the sidecar tracks.
type Entry struct {
	ID  string
	job job.Job
	// fam is predictor.Family(famOf), kept for the name it was computed
	// from (family): the plan and the re-prediction ask for it every cycle.
	fam, famOf string
	famSet     bool
	Task       *policy.Task // nil when the policy does not hold the job
	Phase      Phase
	Why        reason.Reason // why an idle job is left alone
	Seq        int
	Est        predictor.Estimate
	// prof is the job's profile, resolved when it arrives.
	prof jobprofile.Resolved

	// Released: the policy's virtual machine has Released the job (A-SRPT;
	// counted once in CycleReport.Released).
	Released bool
	// Parked: withdrawn from the policy while pending (held, out of scope);
	// remaining is its virtual work left then, seconds, and it rejoins the
	// policy with it (policy.Restore) when it becomes eligible again.
	Parked    bool
	remaining float64

	// Dispatch.
	dseq     int
	placedAt float64
	place    placement.Placement
	placed   bool

	// What asrpt wrote to Slurm and still believes in effect: Prio an
	// explicit priority (priority mode; 0: none, the priority plugin's
	// value stands), factor the site factor (factor mode; 0 is Slurm's
	// default, which no REST API reports back).
	Prio        uint32
	Factor      uint32
	Nodes       []string
	GPUsPerNode int
	NoNodes     bool // Slurm refused a node list for this job; not retried
	// OwnNodes: the job named its nodes when asrpt first saw it; WroteNodes:
	// asrpt has sent it a node list. Giveback clears the node list of a job
	// with WroteNodes and not OwnNodes.
	OwnNodes, WroteNodes bool
	// HetFactor lists the components of a heterogeneous job (other than
	// its leader) that asrpt has written a site factor to: giveback sets
	// each back to 0.
	HetFactor []string
	HandsOff  bool // an admin changed the priority asrpt wrote
	// lostSince is the cycle time (Unix seconds) from which e, holding
	// values of asrpt's, has been missing from the job list for longer than
	// AbsentCycles lists (keepLost); 0 while it is listed.
	lostSince float64
	// lastPending: the last job list that showed e showed it pending (a job
	// last seen running holds nothing a giveback could undo).
	lastPending bool
	// standing: a pending job in scope that asrpt does not rank (no GPUs,
	// larger than the cluster) but whose standing it keeps: it is placed
	// in the written order where Slurm's own priority puts it among the
	// managed jobs (withStanding), and written a priority or site factor
	// for that place only; never dispatched, never given a node list.
	standing bool
	// base is the job's priority in Slurm when asrpt first saw it, before
	// any write of asrpt's: its own standing in priority mode, where asrpt's
	// priorities hide what the priority plugin would give it.
	base uint32
	// heldBack is Slurm's pending reason when it holds the job back this
	// cycle for something other than resources and priority (heldBack):
	// the job is ranked but never dispatched (policy.Task.Blocked).
	heldBack string
	// gpus is the GPUs of the unit the job stands for as the last job
	// list showed it (all components of a heterogeneous job).
	gpus int
	// shape is the record's shape as the last job list showed it.
	shape slurmclient.Shape
	// MayFactor: asrpt may have given the job a site factor other than 0
	// (one was about to be sent, or sent); MayPrio: asrpt may have set its
	// priority. Both are set, and saved, before the write goes out
	// (State.Intend), so that a giveback undoes a write whose outcome the
	// state never learnt; they clear when the job is handed back.
	MayFactor, MayPrio bool
	// Fails holds, by write kind (priority, site_factor, nodes), the failure of the
	// last write of that kind, until one succeeds.
	Fails map[string]*WriteFailure

	// tasks is an array remainder's pending task indices when last read:
	// a change means Slurm started a task.
	tasks string

	Record *slurmclient.Job // this cycle's record, nil when absent

	// Preemption (preempt.go). Stop is how the job stops and stopFrom
	// where that came from ("comment", "preemption.rule[N]"; "" when the
	// job may not be preempted, for the reason in stopWhy). preemptions
	// counts the times asrpt stopped it; signalledAt is the cycle time of
	// the last Stop, Unix seconds (0: never); signalSent says the last
	// Stop's signal went out.
	Stop        jobword.Stop
	StopFrom    string
	StopWhy     reason.Reason
	Preemptions int
	signalledAt float64
	SignalSent  bool

	// absent counts the consecutive job lists the job was missing from;
	// notPending those that showed a queued job not pending (see
	// AbsentCycles and StartedCycles).
	absent, notPending int
	// listed is the number of the last job list that showed the job
	// (State.suspect).
	listed uint64
}

// family returns predictor.Family(e.job.Name), computed once per name.
func (e *Entry) family() string {
	if !e.famSet || e.famOf != e.job.Name {
		e.fam, e.famOf, e.famSet = predictor.Family(e.job.Name), e.job.Name, true
	}
	return e.fam
}

// WriteFailure is the last failed write of one kind to one job.
type WriteFailure struct {
	// Logged lists the reasons already Logged for this job.
	Logged []string
	// N counts the failures in a row; next is the earliest time of the
	// next try, Unix seconds.
	N    int
	Next float64
}
