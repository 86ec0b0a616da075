package main

import (
	"fmt"

	"github.com/asrpt/asrpt/cluster"
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
