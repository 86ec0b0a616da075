package sim

import "math"

// sampler keeps the queue-length curve of a replay: a sample at the first
// event at or after each point t0, t0+step, t0+2·step, … of a grid, at
// most one sample per event (an event that passes several grid points
// stands for all of them), and at most 2·n samples: when the curve reaches
// 2·n points every other one is dropped and the step doubles. Each event
// costs O(1), amortized, whatever the times (even where now+step == now);
// the memory is O(n).
type sampler struct {
	t0, step float64
	next     float64 // time of the next grid point to sample
	limit    int     // 2·n
	out      []Sample
}

// newSampler returns a sampler for a replay whose submissions start at t0
// and span span seconds, aiming at n samples over that span (step
// span/n seconds, at least 1 s). n must be > 0.
func newSampler(t0, span float64, n int) *sampler {
	return &sampler{t0: t0, step: math.Max(span/float64(n), 1), next: t0, limit: 2 * n}
}

// event records the state after an event at now; now never decreases
// from call to call.
func (s *sampler) event(now float64, pending, busy int) {
	if now < s.next {
		return
	}
	s.out = append(s.out, Sample{Time: now, Pending: pending, Busy: busy})
	if len(s.out) >= s.limit {
		s.thin()
	}
	s.advance(now)
}

// advance moves next to the first grid point after now, computed rather
// than stepped to, so that a long gap between events costs nothing.
func (s *sampler) advance(now float64) {
	k := math.Floor((now-s.t0)/s.step) + 1
	s.next = s.t0 + k*s.step
	if !(s.next > now) { // the step is below the resolution of now
		s.next = math.Nextafter(now, math.Inf(1))
	}
}

// thin keeps every other sample, from the first, and doubles the step.
func (s *sampler) thin() {
	k := 0
	for i := 0; i < len(s.out); i += 2 {
		s.out[k] = s.out[i]
		k++
	}
	clear(s.out[k:])
	s.out = s.out[:k]
	s.step *= 2
}

// samples returns the curve with a last sample at now (the end of the
// replay) appended.
func (s *sampler) samples(now float64, pending, busy int) []Sample {
	return append(s.out, Sample{Time: now, Pending: pending, Busy: busy})
}
