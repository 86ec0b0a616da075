package placement

import (
	"fmt"
	"math"
)

// Stage is one pipeline stage of a training job.
type Stage struct {
	// Replicas is d_k, the number of data-parallel replicas of the stage
	// (one GPU each), ≥ 1.
	Replicas int
	// Compute is c_k, the seconds one replica spends computing per
	// iteration, ≥ 0.
	Compute float64
	// Activation is a_k, the bytes the stage sends to stage k+1 per
	// iteration (all its replicas together); 0 for the last stage.
	Activation float64
	// Gradient is m_k, the bytes of gradients all-reduced among the stage's
	// replicas per iteration (the size of the stage's gradient buffer).
	Gradient float64
}

// Profile is the communication and compute profile of a training job: K
// pipeline stages in order (design §1).
type Profile struct {
	// Model is the catalogue name (or any name for a hand-made profile).
	// Placer caches per (Model, GPUs) but checks the stages, so two different
	// profiles with the same name and size are still told apart.
	Model  string
	Stages []Stage
}

// GPUs returns Σ d_k, the number of GPUs (job-graph vertices) of the profile.
func (p *Profile) GPUs() int {
	n := 0
	for _, s := range p.Stages {
		n += s.Replicas
	}
	return n
}

// Validate reports the first problem that makes the profile unusable: no
// stages, a stage with fewer than one replica, a negative or non-finite
// time or size, or an activation on the last stage.
func (p *Profile) Validate() error {
	if p == nil {
		return fmt.Errorf("placement: nil profile")
	}
	if len(p.Stages) == 0 {
		return fmt.Errorf("placement: profile %q: no stages", p.Model)
	}
	for k, s := range p.Stages {
		if s.Replicas < 1 {
			return fmt.Errorf("placement: profile %q: stage %d: Replicas = %d, want ≥ 1", p.Model, k, s.Replicas)
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"Compute", s.Compute}, {"Activation", s.Activation}, {"Gradient", s.Gradient}} {
			if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
				return fmt.Errorf("placement: profile %q: stage %d: %s = %g, want a finite value ≥ 0", p.Model, k, f.name, f.v)
			}
		}
		if k == len(p.Stages)-1 && s.Activation != 0 {
			return fmt.Errorf("placement: profile %q: stage %d: Activation = %g on the last stage, want 0", p.Model, k, s.Activation)
		}
	}
	return nil
}

// sameStages reports whether two profiles have identical stages.
func sameStages(a, b []Stage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
