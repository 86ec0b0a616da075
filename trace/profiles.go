package trace

import (
	"fmt"
	"math/rand/v2"

	"github.com/asrpt/asrpt/cluster"
	"github.com/asrpt/asrpt/placement"
)

// profChoice is a catalogue model that can run on a given GPU count, with
// its α_min (seconds per iteration of the Heavy-Edge placement on an empty
// cluster).
type profChoice struct {
	model string
	alpha float64
}

// profileSource offers the generator catalogue profiles per GPU count,
// computing α_min once per (model, GPU count).
type profileSource struct {
	pl     *placement.Placer
	models []string
	byGPUs map[int][]profChoice
}

func newProfileSource(nodes, gpusPerNode int) (*profileSource, error) {
	models := placement.Models()
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: profiled share > 0 but the placement catalogue is empty", ErrConfig)
	}
	return &profileSource{pl: placement.NewPlacer(cluster.Uniform(nodes, gpusPerNode)), models: models, byGPUs: map[int][]profChoice{}}, nil
}

// pick draws a catalogue model that has a configuration for gpus GPUs,
// uniformly; ok is false when none has.
func (s *profileSource) pick(r *rand.Rand, gpus int) (model string, alpha float64, ok bool) {
	ch, seen := s.byGPUs[gpus]
	if !seen {
		for _, m := range s.models {
			p, err := placement.Lookup(m, gpus)
			if err != nil {
				continue
			}
			a, _ := s.pl.Bounds(p)
			if !(a > 0) || !finite(a) {
				continue
			}
			ch = append(ch, profChoice{m, a})
		}
		s.byGPUs[gpus] = ch
	}
	if len(ch) == 0 {
		return "", 0, false
	}
	c := ch[r.IntN(len(ch))]
	return c.model, c.alpha, true
}
