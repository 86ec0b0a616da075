package policy

import "github.com/asrpt/asrpt/slurmconf"

// Site is what the multifactor model (the multifactor and asrpt-factor
// policies) knows of a site's priority configuration: slurm.conf's
// multifactor settings, the associations' shares, and the site-factor
// range asrpt writes.
type Site struct {
	// Priority holds the weights, time constants and partitions.
	Priority slurmconf.PriorityConf
	// AccountShares are the raw shares of each account under root and
	// UserShares those of each user association in its account (sacctmgr's
	// Share); an account or association not named has 1 (equal shares).
	AccountShares map[string]float64
	UserShares    map[Assoc]float64
	// SiteFactorMax is the top of the site-factor range asrpt-factor
	// writes (Slurm priority units); see SiteFactors.
	SiteFactorMax uint32
	// WaitScale is asrpt-factor's Params.WaitScale, in place of the
	// Params' own: the factor mode lives with the site's policy and bounds
	// waiting by default (DefaultFactorWaitScale), the priority mode keeps
	// the strict A-SRPT order unless told otherwise.
	WaitScale float64
	// OverdueShare is asrpt-factor's Params.OverdueShare, in place of the
	// Params' own (DefaultFactorOverdueShare by default).
	OverdueShare float64
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

// ExampleSite is the multifactor configuration replayed when no slurm.conf
// is given: the weights and time constants of the configuration example
// in Slurm's multifactor documentation (PriorityWeightFairshare=10000,
// PriorityWeightAge, JobSize and Partition 1000, QOS 0,
// PriorityDecayHalfLife and PriorityMaxAge 14 days, PriorityFavorSmall=NO),
// Fair Tree, a 5-minute PriorityCalcPeriod, equal shares,
// DefaultSiteFactorMax, DefaultFactorWaitScale and
// DefaultFactorOverdueShare.
func ExampleSite() *Site {
	p := slurmconf.DefaultPriorityConf()
	p.Type = "priority/multifactor"
	p.WeightAge, p.WeightFairshare, p.WeightJobSize, p.WeightPartition, p.WeightQOS = 1000, 10000, 1000, 1000, 0
	p.DecayHalfLife, p.MaxAge = 14*86400, 14*86400
	return &Site{Priority: p, SiteFactorMax: DefaultSiteFactorMax,
		WaitScale: DefaultFactorWaitScale, OverdueShare: DefaultFactorOverdueShare}
}

func (s *Site) accountShares(account string) float64 {
	if v, ok := s.AccountShares[account]; ok {
		return v
	}
	return 1
}

func (s *Site) userShares(a Assoc) float64 {
	if v, ok := s.UserShares[a]; ok {
		return v
	}
	return 1
}

// partition returns the job factor (normalised by the largest of the
// site's partitions) and the tier of partition name: the named partition,
// else the default one, else the first, else factor 1 and tier 1 (a site
// without partitions in slurm.conf).
func (s *Site) partition(name string) (factor float64, tier uint32) {
	ps := s.Priority.Partitions
	if len(ps) == 0 {
		return 1, 1
	}
	var top uint32
	for _, p := range ps {
		top = max(top, p.JobFactor)
	}
	pick := ps[0]
	for _, p := range ps {
		if p.Default {
			pick = p
			break
		}
	}
	for _, p := range ps {
		if p.Name == name {
			pick = p
			break
		}
	}
	if top == 0 {
		return 0, pick.Tier
	}
	return float64(pick.JobFactor) / float64(top), pick.Tier
}
