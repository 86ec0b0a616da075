package policy

import (
	"cmp"
	"math"
	"slices"
)

// profile is the free-GPU profile of one scheduling pass of A-SRPT's
// revised dispatch (design §5.2): how many GPUs are predicted to be free
// at each time from now on, counting GPUs only, as Slurm's backfill does.
// It starts at the GPUs free now, gains each running job's GPUs at its
// predicted end, and loses the GPUs of each reservation over its window.
//
// The running jobs' ends are read lazily from the running set, in end
// order, only as far as a query needs them, so a pass whose queries stay
// near now costs no scan of every running job. A profile is valid for one
// pass: jobs started in the pass are added to it with add, since the running
// set it reads from learns of them only after the pass.
type profile struct {
	now  float64
	base int       // GPUs free now (before reservations)
	ends []float64 // predicted ends read so far, ascending
	cum  []int     // cum[i]: GPUs free (before reservations) from ends[i] on
	next func() (end float64, gpus int, ok bool)
	done bool // every running job has been read
	res  []window
	evs  []event // the windows' starts (−GPUs) and ends (+GPUs), in time order
}

// window is a span [start, end) in seconds holding gpus GPUs: a
// reservation, or a job started in this pass.
type window struct {
	start, end float64
	gpus       int
}

// reset prepares p for a pass at now with free GPUs free now; next yields
// the running jobs in ascending order of predicted end.
func (p *profile) reset(now float64, free int, next func() (float64, int, bool)) {
	p.now, p.base, p.next, p.done = now, free, next, false
	p.ends, p.cum, p.res, p.evs = p.ends[:0], p.cum[:0], p.res[:0], p.evs[:0]
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
	w := window{start: start, end: start + d, gpus: gpus}
	p.res = append(p.res, w)
	p.insert(event{w.start, -gpus})
	p.insert(event{w.end, gpus})
}

// insert keeps the windows' events in time order (a start before an end
// at the same time does not matter: both are applied before a check).
func (p *profile) insert(e event) {
	i, _ := slices.BinarySearchFunc(p.evs, e.at, func(x event, t float64) int { return cmp.Compare(x.at, t) })
	for i < len(p.evs) && p.evs[i].at == e.at {
		i++
	}
	p.evs = slices.Insert(p.evs, i, e)
}

// earliest returns the earliest start ≥ now at which gpus GPUs are free
// for d seconds. One sweep, in time order, over the running jobs' ends and
// the windows' starts and ends: a candidate start is where the free count
// rises to gpus or more, and it wins once the count has stayed there for
// d. Past every event the whole cluster is free, so for gpus ≤ the
// cluster's GPUs the answer is finite. Cost O(ends read + W log W) for W
// windows.
func (p *profile) earliest(d float64, gpus int) float64 {
	free := p.base
	j := 0
	for j < len(p.evs) && p.evs[j].at <= p.now {
		free += p.evs[j].gpus
		j++
	}
	cand := math.Inf(1)
	if free >= gpus {
		cand = p.now
	}
	i := 0
	// apply brings free up to date with every change at or before t.
	apply := func(t float64) {
		for {
			e, ok := p.endAt(i)
			if !ok || e > t {
				break
			}
			free += p.cum[i] - p.cumBefore(i)
			i++
		}
		for j < len(p.evs) && p.evs[j].at <= t {
			free += p.evs[j].gpus
			j++
		}
	}
	for {
		if !math.IsInf(cand, 1) {
			// Ends only add GPUs: the run from cand can break only where
			// a window starts before cand+d.
			k := j
			for k < len(p.evs) && p.evs[k].gpus > 0 {
				k++
			}
			if k == len(p.evs) || p.evs[k].at >= cand+d {
				return cand
			}
			apply(p.evs[k].at)
			if free < gpus {
				cand = math.Inf(1)
			}
			continue
		}
		t := math.Inf(1)
		if e, ok := p.endAt(i); ok {
			t = e
		}
		if j < len(p.evs) && p.evs[j].at < t {
			t = p.evs[j].at
		}
		if math.IsInf(t, 1) {
			return t // never fits: more GPUs than the cluster has
		}
		apply(t)
		if free >= gpus {
			cand = t
		}
	}
}

// cumBefore returns the base free count just before ends[i].
func (p *profile) cumBefore(i int) int {
	if i == 0 {
		return p.base
	}
	return p.cum[i-1]
}

// event is a change of the free count at a time: a window's start
// (negative) or end (positive).
type event struct {
	at   float64
	gpus int
}
