package main

import (
	"flag"
	"fmt"
	"math"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/multifactor"
	"github.com/asrpt/asrpt/policy"
	"github.com/asrpt/asrpt/slurmconf"
)

// loadSlurmCluster reads the cluster of `asrpt replay --slurm-conf DIR`.
func loadSlurmCluster(dir string) (*cluster.Cluster, error) {
	c, err := slurmconf.LoadCluster(dir)
	if err != nil {
		return nil, fmt.Errorf("--slurm-conf %s: %w", dir, err)
	}
	return c, nil
}

// siteOptions are the flags of the multifactor model (the multifactor and
// asrpt-factor policies) shared by replay and quality.
type siteOptions struct {
	siteFactorMax uint64
	waitScale     float64
	overdueShare  float64
	accountGuard  float64
	shadowWait    float64
}

// siteFlags registers the multifactor model's flags on fs.
func siteFlags(fs *flag.FlagSet) *siteOptions {
	o := &siteOptions{}
	fs.Uint64Var(&o.siteFactorMax, "site-factor-max", multifactor.DefaultSiteFactorMax,
		"asrpt-factor: the site factor of the head of the A-SRPT order, Slurm priority points (the tail gets 0)")
	fs.Float64Var(&o.waitScale, "factor-wait-scale", policy.DefaultFactorWaitScale,
		"asrpt-factor: --wait-scale of the factor mode (a job waiting this many times the recent mean wait moves to the front; 0: none)")
	fs.Float64Var(&o.overdueShare, "factor-overdue-share", policy.DefaultFactorOverdueShare,
		"asrpt-factor: --overdue-share of the factor mode (the overdue jobs at the front ask for at most this share of the GPUs; 0..1, 0: no cap)")
	fs.Float64Var(&o.accountGuard, "factor-account-guard", policy.DefaultFactorAccountGuard,
		"asrpt-factor: --account-guard of the factor mode (a job overtaken by this many times its own GPU-seconds of its account's later, smaller jobs moves to the front; 0: none)")
	fs.Float64Var(&o.shadowWait, "factor-shadow-wait", policy.DefaultFactorShadowWait,
		"asrpt-factor: --shadow-wait of the factor mode (a job that has waited this many times max(its prediction, 1 h) past its start in the age shadow moves to the front; 0: none)")
	return o
}

// site returns the multifactor model's configuration: slurm.conf's
// priority settings under dir, or policy.ExampleSite's when dir is empty,
// with the site-factor range of the flags.
func (o *siteOptions) site(dir string) (*policy.Site, error) {
	if o.siteFactorMax > math.MaxUint32 {
		return nil, fmt.Errorf("%w: --site-factor-max %d: want at most %d", errUsage, o.siteFactorMax, uint32(math.MaxUint32))
	}
	s := policy.ExampleSite()
	if dir != "" {
		cfg, err := slurmconf.Load(dir, slurmconf.Options{})
		if err != nil {
			return nil, fmt.Errorf("--slurm-conf %s: %w", dir, err)
		}
		p, err := cfg.Slurm.Priority()
		if err != nil {
			return nil, fmt.Errorf("--slurm-conf %s: %w", dir, err)
		}
		s.Priority = p
	}
	if !(o.waitScale >= 0 && o.waitScale <= policy.MaxWaitFactor) {
		return nil, fmt.Errorf("%w: --factor-wait-scale %v: want a finite number in 0..%g", errUsage, o.waitScale, float64(policy.MaxWaitFactor))
	}
	if !(o.overdueShare >= 0 && o.overdueShare <= 1) {
		return nil, fmt.Errorf("%w: --factor-overdue-share %v: want a number in 0..1", errUsage, o.overdueShare)
	}
	if !(o.accountGuard >= 0 && o.accountGuard <= policy.MaxWaitFactor) {
		return nil, fmt.Errorf("%w: --factor-account-guard %v: want a finite number in 0..%g", errUsage, o.accountGuard, float64(policy.MaxWaitFactor))
	}
	if !(o.shadowWait >= 0 && o.shadowWait <= policy.MaxWaitFactor) {
		return nil, fmt.Errorf("%w: --factor-shadow-wait %v: want a finite number in 0..%g", errUsage, o.shadowWait, float64(policy.MaxWaitFactor))
	}
	s.SiteFactorMax, s.WaitScale, s.OverdueShare, s.AccountGuard = uint32(o.siteFactorMax), o.waitScale, o.overdueShare, o.accountGuard
	s.ShadowWait = o.shadowWait
	return s, nil
}
