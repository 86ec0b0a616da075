package policy

import (
	"math"
	"slices"
)

// profile is the free-GPU profile of one scheduling pass of A-SRPT's
// revised dispatch (design §5b.2): how many GPUs are predicted to be free
// at each time from now on, counting GPUs only, as Slurm's backfill does.
// It starts at the GPUs free now, gains each running job's GPUs at its
// predicted end, and loses the GPUs of each reservation over its window.
//
// The running jobs' ends are read lazily from the running set, in end
// order, only as far as a query needs them, so a pass whose queries stay
// near now costs no scan of every running job. A profile is valid for one
// pass: jobs started in the pass must be added with take.
type profile struct {
	now   float64
	base  int       // GPUs free now (before reservations)
	ends  []float64 // predicted ends read so far, ascending
	cum   []int     // cum[i]: GPUs free (before reservations) from ends[i] on
	next  func() (end float64, gpus int, ok bool)
	done  bool // every running job has been read
	res   []window
	wends []float64 // scratch for earliest
}

// window is a span [start, end) in seconds holding gpus GPUs: a
// reservation, or a job started in this pass that the running set has not
// been told about by the profile.
type window struct {
	start, end float64
	gpus       int
}

// reset prepares p for a pass at now with free GPUs free now; next yields
// the running jobs in ascending order of predicted end.
func (p *profile) reset(now float64, free int, next func() (float64, int, bool)) {
	p.now, p.base, p.next, p.done = now, free, next, false
	p.ends, p.cum, p.res = p.ends[:0], p.cum[:0], p.res[:0]
}

// readOne reads the next running job's end; false when none is left.
func (p *profile) readOne() bool {
	if p.done {
		return false
	}
	end, g, ok := p.next()
	if !ok {
		p.done = true
		return false
	}
	c := p.base
	if n := len(p.cum); n > 0 {
		c = p.cum[n-1]
	}
	p.ends = append(p.ends, math.Max(end, p.now))
	p.cum = append(p.cum, c+g)
	return true
}

// readTo reads running jobs until their ends pass t (or none are left).
func (p *profile) readTo(t float64) {
	for (len(p.ends) == 0 || p.ends[len(p.ends)-1] <= t) && p.readOne() {
	}
}

// endAt returns the i-th running end in time order, reading it if needed.
func (p *profile) endAt(i int) (float64, bool) {
	for len(p.ends) <= i {
		if !p.readOne() {
			return 0, false
		}
	}
	return p.ends[i], true
}

// baseAt returns the GPUs free at t before windows.
func (p *profile) baseAt(t float64) int {
	p.readTo(t)
	lo, hi := 0, len(p.ends)
	for lo < hi {
		m := (lo + hi) / 2
		if p.ends[m] <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return p.base
	}
	return p.cum[lo-1]
}

// freeAt returns the GPUs free at t after the windows.
func (p *profile) freeAt(t float64) int {
	f := p.baseAt(t)
	for _, w := range p.res {
		if w.start <= t && t < w.end {
			f -= w.gpus
		}
	}
	return f
}

// fits reports whether gpus GPUs are free over [a, a+d). The base only
// grows with time, so the fewest free GPUs are at a or where a window
// starts inside the span.
func (p *profile) fits(a, d float64, gpus int) bool {
	if p.freeAt(a) < gpus {
		return false
	}
	b := a + d
	for _, w := range p.res {
		if w.start > a && w.start < b && p.freeAt(w.start) < gpus {
			return false
		}
	}
	return true
}

// add holds gpus GPUs over [start, start+d): a reservation, or a job
// started in this pass (which the running set the profile reads from
// does not hold yet).
func (p *profile) add(start, d float64, gpus int) {
	p.res = append(p.res, window{start: start, end: start + d, gpus: gpus})
}

// earliest returns the earliest start ≥ now at which gpus GPUs are free
// for d seconds. Free GPUs change only at running jobs' predicted ends and
// windows' ends, so those are the candidates, in time order; past all of
// them the whole cluster is free, so for gpus ≤ the cluster's GPUs the
// answer is finite.
func (p *profile) earliest(d float64, gpus int) float64 {
	if p.fits(p.now, d, gpus) {
		return p.now
	}
	p.wends = p.wends[:0]
	for _, w := range p.res {
		if w.end > p.now {
			p.wends = append(p.wends, w.end)
		}
	}
	slices.Sort(p.wends)
	i, j := 0, 0
	for {
		t := math.Inf(1)
		e, ok := p.endAt(i)
		if ok {
			t = e
		}
		if j < len(p.wends) && p.wends[j] < t {
			t = p.wends[j]
		}
		if math.IsInf(t, 1) {
			return t
		}
		for ok && e <= t {
			i++
			e, ok = p.endAt(i)
		}
		for j < len(p.wends) && p.wends[j] <= t {
			j++
		}
		if p.fits(t, d, gpus) {
			return t
		}
	}
}
