package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/asrpt/asrpt/placement"
	"github.com/asrpt/asrpt/prediction"
)

// Decision is one change a scheduling pass makes.
type Decision struct {
	// Task is the job concerned. For a start, Task.Placement, Task.Alpha and
	// Task.Start hold where and when it starts. For a preemption they still
	// hold the placement it ran on, so the caller can account its progress.
	Task *Task
	// Preempt is true when the job is stopped and put back in the queue.
	Preempt bool
}

// Policy decides which pending jobs start, where, and in which order the
// others wait. Implementations are deterministic and never read the clock:
// every method gets the current time now in seconds, and now never decreases
// from call to call. Not safe for concurrent use.
type Policy interface {
	// Name is the policy's registry name (for example "asrpt").
	Name() string
	// Arrive adds a newly submitted job.
	Arrive(now float64, t *Task)
	// Schedule runs one scheduling pass on the free GPUs. It applies its own
	// decisions to free (taking the GPUs of each job it starts, giving back
	// those of each job it preempts) and to the tasks, and returns them in
	// the order made. The returned slice may be reused by the next call.
	Schedule(now float64, free *placement.Free) []Decision
	// Finish tells the policy that a running job has completed; its GPUs
	// have already been returned to the free pool by the caller.
	Finish(now float64, t *Task)
	// NextEvent returns the earliest time after now at which the policy's
	// decision could change without an arrival or completion (a virtual
	// release, the end of a wait), or +Inf.
	NextEvent(now float64) float64
	// Pending returns the waiting jobs in the order the policy would start
	// them; the sidecar turns this order into Slurm priorities.
	Pending() []*Task
	// Withdraw removes a waiting job that will not be started through the
	// policy (cancelled, held, taken out of scope, started by someone
	// else). It is a no-op for a job the policy does not hold as waiting.
	Withdraw(now float64, t *Task)
	// Restore re-adds a waiting job after a restart, with the virtual work
	// in seconds it had left and whether it had been released (A-SRPT);
	// the other policies treat it as Arrive. Restore jobs in the order
	// Pending returned them before the restart.
	Restore(now float64, t *Task, remaining float64, released bool)
}

// Adopter is implemented by the policies that can take over a waiting job
// someone else started (A-SRPT's). Adopt moves t, waiting in the policy,
// to its running jobs as if it had started t at start (≤ now) on p (its
// GPUs are the caller's to account for; p may be empty when the caller
// does not know them), and reports whether it did: false for a job the
// policy does not hold as waiting. The sidecar adopts the jobs Slurm
// starts before their turn under asrpt-preempt, so that they may be
// preempted as the policy's own.
type Adopter interface {
	Adopt(now float64, t *Task, start float64, p placement.Placement) bool
}

// Updater is implemented by the policies that order waiting jobs by
// their predictions. Update replaces a waiting job's estimate with est (it
// was predicted again at now, design §5.3) and re-orders it; it is a no-op
// for a running job or one the policy does not hold.
type Updater interface {
	Update(now float64, t *Task, est prediction.Estimate)
}

// Names lists the registered policy names in their display order.
var Names = []string{"fifo", "backfill", "easypp", "spjf", "spwf", "wcs-subtime", "wcs-duration",
	"wcs-workload", "las", "multifactor", "asrpt-paper", "asrpt", "asrpt-factor"}

// Extra lists the policies New knows beyond Names: they run when named
// (--policies) and are left out of the default comparison. asrpt-preempt
// preempts only the jobs that opted in, so it means something only with an
// opt-in rule (sim.Config.Preemptible).
//
// asrpt-sidecar and asrpt-sidecar-priority are the closed loop: the
// multifactor model as slurmctld, with the sidecar's own code polling it
// and writing site factors (or priorities) and node lists (Env.Controller,
// set by package loop); they run only through replay.Run.
var Extra = []string{"asrpt-preempt", "asrpt-sidecar", "asrpt-sidecar-priority"}

// Virtual reports whether the policy base (no -oracle suffix) orders jobs
// on A-SRPT's virtual machine, releasing each when its virtual work is
// done (Task.Released).
func Virtual(base string) bool { return strings.HasPrefix(base, "asrpt") && !Sidecar(base) }

// Sidecar reports whether the policy base (no -oracle suffix) is the
// closed loop: the multifactor model with the sidecar as its Controller.
func Sidecar(base string) bool { return base == "asrpt-sidecar" || base == "asrpt-sidecar-priority" }

// Preemptive reports whether the policy base (no -oracle suffix) stops
// running jobs: such a policy is no non-preemptive baseline.
func Preemptive(base string) bool { return base == "las" || base == "asrpt-preempt" }

// OracleSuffix, appended to a policy name, runs that policy with perfect
// predictions (for example "asrpt-oracle").
const OracleSuffix = "-oracle"

// Split returns the base policy name and whether the oracle variant is asked
// for; it does not check that the name exists.
func Split(name string) (base string, oracle bool) {
	if b, ok := strings.CutSuffix(name, OracleSuffix); ok {
		return b, true
	}
	return name, false
}

// predicting are the policies whose decisions read the run-time
// predictor's estimates. The others order by submit time or attained
// service and reserve on time limits (backfill) or on their own history
// rule (easypp): fifo blocks and wcs-subtime starts any job that fits, so
// neither reads an estimate.
var predicting = map[string]bool{"spjf": true, "spwf": true, "wcs-duration": true, "wcs-workload": true,
	"asrpt-paper": true, "asrpt": true, "asrpt-factor": true, "asrpt-preempt": true,
	"asrpt-sidecar": true, "asrpt-sidecar-priority": true}

// UsesPredictions reports whether policy name's decisions depend on the
// predictor it runs with: false for the oracle variants (perfect
// predictions whatever the predictor) and for the policies that never read
// an estimate. Two replays of such a policy with different predictors give
// the same schedule.
func UsesPredictions(name string) bool {
	base, oracle := Split(name)
	return !oracle && predicting[base]
}

// New returns a fresh policy by name (oracle variants are named like their
// base policy: the oracle is a matter of the predictor the caller uses).
func New(name string, env *Env) (Policy, error) {
	base, _ := Split(name)
	switch base {
	case "fifo":
		return newDispatcher(name, env, modeBlock, keySubmit, estPredicted), nil
	case "backfill":
		return newDispatcher(name, env, modeEASY, keySubmit, estLimit), nil
	case "easypp":
		return newEASYPP(name, env), nil
	case "spjf":
		return newDispatcher(name, env, modeBlock, keyDuration, estPredicted), nil
	case "spwf":
		return newDispatcher(name, env, modeBlock, keyWork, estPredicted), nil
	case "wcs-subtime":
		return newDispatcher(name, env, modeGreedy, keySubmit, estPredicted), nil
	case "wcs-duration":
		return newDispatcher(name, env, modeGreedy, keyDuration, estPredicted), nil
	case "wcs-workload":
		return newDispatcher(name, env, modeGreedy, keyWork, estPredicted), nil
	case "las":
		return newLAS(name, env), nil
	case "asrpt-paper":
		return newASRPT(name, env, false, false), nil
	case "asrpt":
		return newASRPT(name, env, true, false), nil
	case "asrpt-preempt":
		return newASRPT(name, env, true, true), nil
	case "multifactor":
		return newMultifactor(name, env, false), nil
	case "asrpt-factor":
		return newMultifactor(name, env, true), nil
	case "asrpt-sidecar", "asrpt-sidecar-priority":
		if env == nil || env.Controller == nil {
			return nil, fmt.Errorf("policy %s runs the sidecar against the replay's Slurm: it needs a Controller (run it through replay.Run)", name)
		}
		m := newMultifactor(name, env, false)
		m.ctl, m.live = env.Controller, map[*Task]bool{}
		env.Allow = allowRequired
		return m, nil
	}
	known := append(append([]string(nil), Names...), Extra...)
	sort.Strings(known)
	return nil, fmt.Errorf("unknown policy %q (known: %s, each also with %s)", name, strings.Join(known, ", "), OracleSuffix)
}

// Validate reports whether name is a policy New builds on env: for the
// closed loop (Sidecar), which needs a Controller the caller does not have
// yet, only the name is checked (it has no oracle variant).
func Validate(name string, env *Env) error {
	if base, oracle := Split(name); Sidecar(base) {
		if oracle {
			return fmt.Errorf("policy %s: the closed loop has no oracle variant (the sidecar predicts from the accounting it reads)", name)
		}
		return nil
	}
	_, err := New(name, env)
	return err
}
