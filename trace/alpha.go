package trace

import (
	"errors"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/placement"
)

// alphaMin returns α_min of p on the empty cluster c.
func alphaMin(c *cluster.Cluster, p *placement.Profile) (float64, error) {
	return 0, errors.New("placement: Placer not available yet")
}
