package main

import (
	"flag"
	"fmt"

	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/preemptrule"
)

// preemptFlag registers --preemptible, the opt-in rule of the replayed
// jobs (preemptrule.Parse), on fs.
func preemptFlag(fs *flag.FlagSet, r *preemptrule.Rule) {
	fs.Var(r, "preemptible", "jobs that opted in to preemption, for asrpt-preempt: none, all, comment (an asrpt:preempt=SIGNAL@SECONDS word in the sacct Comment field), longest:SHARE (the longest job families holding SHARE of the jobs), accounts:A,B or families:F,G (job-name families, as the sidecar's [[preemption.rule]])")
}

// policyFlags registers the policy tunables shared by replay and quality
// on fs, with p's values as defaults, and returns the function to call
// after parsing with the run's predictor name: it reads the named values
// (--unseen, --rank) into p, --rank defaulting to the predictor's own
// ranking (policy.RankFor). The caller validates p afterwards
// (checkParams).
func policyFlags(fs *flag.FlagSet, p *policy.Params) func(predictor string) error {
	fs.Float64Var(&p.CommHeavy, "comm-heavy", p.CommHeavy, "α_max/α_min ratio from which a job is communication-heavy")
	fs.Float64Var(&p.Tau, "tau", p.Tau, "A-SRPT delay factor τ for communication-heavy jobs")
	fs.Float64Var(&p.Slack, "slack", p.Slack, "placement slack: consolidated when α ≤ α_min·(1+slack)")
	unseen := fs.String("unseen", p.Unseen.String(), "A-SRPT rule for jobs without history: first or fallback")
	fs.IntVar(&p.Depth, "depth", p.Depth, "jobs examined per scheduling pass past the head (0: all)")
	fs.IntVar(&p.Reservations, "reservations", p.Reservations, "A-SRPT: released jobs that hold a reservation in the free-GPU profile (K; 0: none)")
	rank := fs.String("rank", "", "prediction that orders waiting jobs: median or expected (default: expected with --predictor mean-gpus or mean-gpus-running, median with the others)")
	fs.Var(secondsFlag{p: &p.WaitLimit, zero: true}, "wait-limit", "A-SRPT: a job waiting this long moves to the front of the order (seconds or 90m, 24h, 2d; 0: no bound)")
	fs.Float64Var(&p.WaitScale, "wait-scale", p.WaitScale, "A-SRPT: a job waiting this many times the mean wait of the last 128 jobs started (at least 10 minutes) moves to the front (0: no bound)")
	fs.Float64Var(&p.WaitFactor, "wait-factor", p.WaitFactor, "A-SRPT: a job waiting this many times its predicted run time (at least 10 minutes) moves to the front (0: no bound)")
	fs.Var(secondsFlag{p: &p.PreemptExempt, zero: true}, "preempt-exempt", "asrpt-preempt: a job is not preempted before it has run this long since its last start (seconds or 90m, 24h)")
	fs.IntVar(&p.MaxPreemptions, "max-preemptions", p.MaxPreemptions, "asrpt-preempt: the most times one job is preempted")
	fs.IntVar(&p.PreemptBudget, "preempt-budget", p.PreemptBudget, "asrpt-preempt: the most jobs one scheduling pass preempts")
	fs.Float64Var(&p.PreemptMargin, "preempt-margin", p.PreemptMargin, "asrpt-preempt: a running job is preempted only when its remaining virtual work is this many times that of the job it makes way for (≥ 1)")
	fs.Var(secondsFlag{p: &p.LASExempt, zero: true}, "las-exempt", "las: a job is not preempted before it has run this long since its last start (seconds or 90m, 24h; 0: none, Tiresias as published)")
	fs.Var(secondsFlag{p: &p.RestartCost, zero: true}, "restart-cost", "replay: seconds a preempted job spends on its GPUs after each restart before it progresses again (every preemptive policy)")
	fs.Var(secondsFlag{p: &p.RequeueDelay, zero: true}, "requeue-delay", "replay, asrpt-preempt: seconds a stopped job cannot start again, holding no GPUs (Slurm holds a requeued job about 121 s)")
	fs.Var(secondsFlag{p: &p.LostWork, zero: true}, "lost-work", "replay: seconds of work a job loses at each preemption (since its last checkpoint)")
	fs.Float64Var(&p.AccountGuard, "account-guard", p.AccountGuard, "A-SRPT: a waiting job overtaken by this many times its own GPU-seconds of its account's later, smaller jobs moves to the front, as an overdue job (0: no guard)")
	fs.Float64Var(&p.ShadowWait, "shadow-wait", p.ShadowWait, "A-SRPT: a waiting job that has waited this many times max(its prediction, 1 h) past its start in the age shadow (the jobs served in arrival order on a virtual machine of the cluster's GPUs) moves to the front, as an overdue job (0: no bound)")
	fs.Float64Var(&p.OverdueShare, "overdue-share", p.OverdueShare, "A-SRPT: the overdue jobs at the front ask for at most this share of the GPUs together, the others keep their place until room frees (0..1; 0: no cap)")
	return func(predictor string) error {
		u, err := policy.ParseUnseen(*unseen)
		if err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		p.Unseen = u
		if *rank == "" {
			p.Rank = policy.RankFor(predictor)
		} else if p.Rank, err = policy.ParseRank(*rank); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		return nil
	}
}
