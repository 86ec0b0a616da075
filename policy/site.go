package policy

import "github.com/asrpt/asrpt/multifactor"

// Site is what the multifactor model (the multifactor and asrpt-factor
// policies) knows of a site's priority configuration: slurm.conf's
// multifactor settings, the associations' shares, and the site-factor
// range asrpt writes.
type Site struct {
	// Priority holds the weights, time constants and partitions.
	Priority multifactor.Params
	// Shares are the associations' shares (sacctmgr's Share).
	Shares multifactor.Shares
	// SiteFactorMax is the top of the site-factor range asrpt-factor
	// writes (Slurm priority units); see multifactor.SiteFactors.
	SiteFactorMax uint32
	// WaitScale is asrpt-factor's Params.WaitScale, in place of the
	// Params' own: the factor mode lives with the site's policy and bounds
	// waiting by default (DefaultFactorWaitScale), the priority mode keeps
	// the strict A-SRPT order unless told otherwise.
	WaitScale float64
	// OverdueShare is asrpt-factor's Params.OverdueShare, in place of the
	// Params' own (DefaultFactorOverdueShare by default).
	OverdueShare float64
	// AccountGuard is asrpt-factor's Params.AccountGuard, in place of the
	// Params' own (DefaultFactorAccountGuard by default).
	AccountGuard float64
	// ShadowWait is asrpt-factor's Params.ShadowWait, in place of the
	// Params' own (DefaultFactorShadowWait by default).
	ShadowWait float64
}

// DefaultFactorWaitScale is the relative wait bound of the factor mode
// (Params.WaitScale of asrpt-factor and of the sidecar's factor mode),
// chosen on the quality suite (README, "Living with the site's policy").
const DefaultFactorWaitScale = 150

// DefaultFactorOverdueShare caps the factor mode's front (Params.
// OverdueShare of asrpt-factor and of the sidecar's factor mode): the
// overdue jobs at the front ask for at most a quarter of the GPUs,
// chosen on the quality suite with DefaultFactorWaitScale (README,
// "Living with the site's policy").
const DefaultFactorOverdueShare = 0.25

// DefaultFactorAccountGuard is the factor mode's guard of an account's
// large jobs (Params.AccountGuard of asrpt-factor and of the sidecar's
// factor mode); 0: none.
const DefaultFactorAccountGuard = 0

// DefaultFactorShadowWait is the factor mode's bound against the age
// shadow (Params.ShadowWait of asrpt-factor and of the sidecar's factor
// mode); 0: none.
const DefaultFactorShadowWait = 0

// ExampleSite is the multifactor configuration replayed when no slurm.conf
// is given: the configuration example in Slurm's multifactor
// documentation (multifactor.Example), equal shares,
// multifactor.DefaultSiteFactorMax, DefaultFactorWaitScale and
// DefaultFactorOverdueShare.
func ExampleSite() *Site {
	return &Site{Priority: multifactor.Example(), SiteFactorMax: multifactor.DefaultSiteFactorMax,
		WaitScale: DefaultFactorWaitScale, OverdueShare: DefaultFactorOverdueShare,
		AccountGuard: DefaultFactorAccountGuard, ShadowWait: DefaultFactorShadowWait}
}
