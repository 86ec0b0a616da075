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
// The running jobs' part is read from the running set's end tree, which
// the policy keeps up to date as jobs start and end (the incremental part
// of the profile): the GPUs ended by a time, and the time by which a
// number of GPUs have ended, cost O(log r) for r running jobs, so that no
// pass walks the running jobs. Only the windows (reservations, and jobs
// started in this pass, which the running set learns of after the pass)
// are kept per pass. A profile is valid for one pass, during which the
// running set does not change; every predicted end lies after now
// (running.refresh).
type profile struct {
	now  float64
	base int      // GPUs free now (before reservations)
	run  *endTree // the running jobs by predicted end
	res  []window
	evs  []event // the windows' starts (−GPUs) and ends (+GPUs), in time order
}

// window is a span [start, end) in seconds holding gpus GPUs: a
// reservation, or a job started in this pass.
type window struct {
	start, end float64
	gpus       int
}

// reset prepares p for a pass at now with free GPUs free now and the
// running jobs of run, every one predicted to end after now.
func (p *profile) reset(now float64, free int, run *endTree) {
	p.now, p.base, p.run = now, free, run
	p.res, p.evs = p.res[:0], p.evs[:0]
}

// baseAt returns the GPUs free at t ≥ now before windows. Every running
// job ends after now, so at now (the most frequent query: can a job start
// now) it is the free count itself.
func (p *profile) baseAt(t float64) int {
	if t <= p.now {
		return p.base
	}
	return p.base + p.run.gpusBy(t)
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
// for d seconds: the earliest t with free(t) ≥ gpus at t and at every
// window start in (t, t+d) (ends only add GPUs). Between two window
// events the windows hold a fixed number of GPUs, so the earliest t of
// such a segment is its start or the end of the running job at which
// enough GPUs have ended (endTree.reach). Past every event the whole
// cluster is free, so for gpus ≤ the cluster's GPUs the answer is finite;
// otherwise it is +Inf. Cost O(W² + W log r) for W window events and r
// running jobs.
func (p *profile) earliest(d float64, gpus int) float64 {
	a, w, j := p.now, 0, 0 // segment start, GPUs held by windows at a, events applied
	applyTo := func(t float64) {
		for j < len(p.evs) && p.evs[j].at <= t {
			w -= p.evs[j].gpus
			j++
		}
	}
	applyTo(a)
	for {
		b := math.Inf(1) // the segment's end: the next window event
		if j < len(p.evs) {
			b = p.evs[j].at
		}
		cand := math.Inf(1)
		if p.baseAt(a)-w >= gpus {
			cand = a
		} else if t, _, ok := p.run.reach(gpus + w - p.base); ok && t.end < b {
			cand = t.end
		}
		if math.IsInf(cand, 1) {
			if j == len(p.evs) {
				return cand // never fits: more GPUs than the cluster has
			}
			a = b
			applyTo(a)
			continue
		}
		// The run from cand can break only where a window starts before
		// cand+d; no window event lies in (a, cand].
		broken := math.NaN()
		for k := j; k < len(p.evs) && p.evs[k].at < cand+d; k++ {
			if s := p.evs[k].at; p.evs[k].gpus < 0 && p.freeAt(s) < gpus {
				broken = s
				break
			}
		}
		if math.IsNaN(broken) {
			return cand
		}
		a = broken
		applyTo(a)
	}
}

// event is a change of the free count at a time: a window's start
// (negative) or end (positive).
type event struct {
	at   float64
	gpus int
}
