package predictor

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/asrpt/asrpt/job"
)

// MaxPerturbScale bounds Perturb's scale: a factor of at most e (×2.72)
// either way.
const MaxPerturbScale = 1.0

// Perturbed is a predictor whose every estimate is the wrapped
// predictor's times a factor fixed per job: exp(Scale·u), u uniform in
// [-1, 1) drawn from a hash of the seed and the job id. It measures the
// noise floor of a comparison: how far a replay's total JCT moves when
// every prediction moves by a relative amount (Scale 0.01: ±1%) far below
// any difference between two real predictors (quality.Config.Noise).
//
// The factor depends on (seed, job id) alone, so Predict and Repredict of
// one job scale alike and a replay stays deterministic. Observe passes
// the job through unchanged: the wrapped predictor learns what it would
// alone. Costs: one FNV-64a hash of the id per estimate.
type Perturbed struct {
	inner Predictor
	scale float64
	seed  uint64
}

var _ Predictor = (*Perturbed)(nil)

// Perturb returns p with every estimate scaled by a per-job factor in
// [exp(-scale), exp(scale)), the factors drawn with seed. It refuses a
// scale that is not in [0, MaxPerturbScale].
func Perturb(p Predictor, scale float64, seed uint64) (*Perturbed, error) {
	if !(scale >= 0 && scale <= MaxPerturbScale) {
		return nil, fmt.Errorf("predictor: perturbation scale %v: want 0 to %v", scale, MaxPerturbScale)
	}
	return &Perturbed{inner: p, scale: scale, seed: seed}, nil
}

// Unwrap returns the wrapped predictor.
func (p *Perturbed) Unwrap() Predictor { return p.inner }

// Name implements Predictor: the wrapped predictor's name.
func (p *Perturbed) Name() string { return p.inner.Name() }

// Predict implements Predictor.
func (p *Perturbed) Predict(j *job.Job) Estimate { return p.scaled(j, p.inner.Predict(j)) }

// Repredict implements Predictor.
func (p *Perturbed) Repredict(j *job.Job, now float64) Estimate {
	return p.scaled(j, p.inner.Repredict(j, now))
}

// Observe implements Predictor.
func (p *Perturbed) Observe(j *job.Job, end float64) { p.inner.Observe(j, end) }

// Factor returns the factor j's estimates are scaled by.
func (p *Perturbed) Factor(j *job.Job) float64 {
	if p.scale == 0 {
		return 1
	}
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], p.seed)
	h.Write(b[:])
	h.Write([]byte(j.ID))
	// FNV's high bits barely move between ids that differ in their last
	// bytes: mixed (SplitMix64's finaliser), then the top 53 bits as a
	// uniform draw in [0, 1), then [-1, 1).
	u := float64(mix64(h.Sum64())>>11)/(1<<53)*2 - 1
	return math.Exp(p.scale * u)
}

// mix64 is SplitMix64's finaliser: every output bit depends on every
// input bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// scaled returns e with its expected value and median times j's factor.
func (p *Perturbed) scaled(j *job.Job, e Estimate) Estimate {
	f := p.Factor(j)
	e.Seconds *= f
	e.Median *= f
	return e
}
