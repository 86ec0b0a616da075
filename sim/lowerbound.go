package sim

import (
	"math"

	"github.com/asrpt/asrpt/job"
)

// Names of the terms of LowerBound, as LowerBound.Binding reports them.
const (
	BoundVirtual  = "virtual"
	BoundLength   = "length"
	BoundMeanBusy = "mean_busy"
)

// LowerBound is the lower bound LB on the total job completion time
// Σ (completion − submit) of any schedule of a trace on a cluster (design
// §4). All figures are seconds.
//
// Every term rests on the virtual single machine A1: a job j with g_j of the
// cluster's G GPUs and run time d_j at its best placement has the virtual
// size p_j = (g_j/G)·d_j. Any real schedule maps to a feasible schedule of
// A1 in which j is processed at rate g_j/G whenever it runs: at each instant
// the running jobs hold at most G GPUs, so their rates sum to at most 1, and
// a job runs for at least d_j in all, so it receives at least p_j.
type LowerBound struct {
	// Virtual is the total completion time (completion − submit) of
	// preemptive SRPT on A1 with the true virtual sizes p = (g/G)·n·α_min
	// (Lemma 1 of the paper). SRPT minimises total completion time over
	// all preemptive schedules of A1, including the image of any real one.
	Virtual float64
	// Length is Σ n·α_min: no job completes sooner than its run time at the
	// best placement after its submission.
	Length float64
	// MeanBusy is Σ_j (M_j − r_j + d_j/2), where r_j is the submit time and
	// M_j the mean busy time of j, M_j = (1/p_j)·∫ t·rate_j(t) dt, in the
	// schedule of A1 that minimises Σ M_j: preemptive shortest-original-
	// size-first (Goemans 1997, "Improved approximation algorithms for
	// scheduling with release dates": the preemptive schedule that always
	// runs the available job of largest w_j/p_j minimises Σ w_j·M_j over
	// all schedules of a unit-capacity machine with release dates, at any
	// rates). It is a bound because in the image of a real schedule the last
	// d_j of j's running time, at rate g_j/G, already gives it p_j, and its
	// mean instant lies at least d_j/2 before the completion C_j; keeping
	// only that part of each job is a schedule of A1 with M_j ≤ C_j − d_j/2,
	// so Σ (C_j − r_j) ≥ min Σ M_j − Σ r_j + Σ d_j/2.
	//
	// MeanBusy ≥ Σ (p_j + d_j)/2 (M_j ≥ r_j + p_j/2), which may fall below
	// Length when jobs use a small share of the cluster, and it may fall
	// below Virtual when they fill it (then d_j = p_j and C_j ≥ M_j + p_j/2
	// in any schedule); neither of the other terms dominates it either.
	MeanBusy float64
	// Total is the bound: the largest of the terms. Each is a lower bound
	// on its own; their sum is not (a single job that fills the cluster has
	// Virtual = Length = MeanBusy = its run time), so the larger one is
	// reported.
	Total float64
	// Binding names the term equal to Total: BoundVirtual, BoundLength or
	// BoundMeanBusy, the first of them in that order on a tie; BoundVirtual
	// for an empty trace.
	Binding string
}

// jobSource is what the lower bound reads of the jobs: their number and,
// by index, submit time (s), GPUs and run time (s).
type jobSource interface {
	Len() int
	Submit(i int) float64
	GPUs(i int) int
	RunTime(i int) float64
}

// jobSlice is a []job.Job as a jobSource.
type jobSlice []job.Job

func (s jobSlice) Len() int              { return len(s) }
func (s jobSlice) Submit(i int) float64  { return s[i].Submit }
func (s jobSlice) GPUs(i int) int        { return s[i].GPUs }
func (s jobSlice) RunTime(i int) float64 { return s[i].RunTime }

// computeLowerBound returns LB for jobs prepared for a cluster of g > 0
// GPUs (run times of profiled jobs already at α_min, see Prepare, every
// RunTime > 0 and GPUs in 1..g), sorted by submit time. It costs
// O(n log n) time and O(n) memory.
func computeLowerBound[S jobSource](jobs S, g int) LowerBound {
	lb := LowerBound{Virtual: virtualSRPT(jobs, g), MeanBusy: meanBusy(jobs, g)}
	for i := range jobs.Len() {
		lb.Length += jobs.RunTime(i)
	}
	lb.Total, lb.Binding = lb.Virtual, BoundVirtual
	if lb.Length > lb.Total {
		lb.Total, lb.Binding = lb.Length, BoundLength
	}
	if lb.MeanBusy > lb.Total {
		lb.Total, lb.Binding = lb.MeanBusy, BoundMeanBusy
	}
	return lb
}

// virtualSRPT returns the total completion time (completion − submit,
// seconds) of preemptive shortest-remaining-virtual-size-first on A1.
func virtualSRPT[S jobSource](jobs S, g int) float64 {
	var total float64
	h := &minHeap[vJob]{less: bySizeLeft}
	clock := math.Inf(-1)
	i, n := 0, jobs.Len()
	for i < n || h.Len() > 0 {
		if h.Len() == 0 && jobs.Submit(i) > clock {
			clock = jobs.Submit(i)
		}
		for i < n && jobs.Submit(i) <= clock {
			p := float64(jobs.GPUs(i)) / float64(g) * jobs.RunTime(i)
			h.push(vJob{size: p, left: p, submit: jobs.Submit(i), seq: i})
			i++
		}
		nextArrival := math.Inf(1)
		if i < n {
			nextArrival = jobs.Submit(i)
		}
		// Run the shortest job until it finishes or the next arrival.
		top := h.top()
		if clock+top.left <= nextArrival {
			clock += top.left
			total += clock - top.submit
			h.pop()
		} else {
			top.left -= nextArrival - clock
			clock = nextArrival
		}
	}
	return total
}

// meanBusy returns Σ_j (M_j − r_j + d_j/2) (seconds) for the preemptive
// schedule of A1 that always runs the available job of the smallest original
// virtual size p_j (ties by submit time, then index), resuming preempted
// jobs where they stopped. The heap is keyed by p_j, which does not change,
// so a job is preempted only by an arrival and there are at most 2n pieces.
// A unit-rate piece [a, b] of j adds (b² − a²)/2 to p_j·M_j; times are
// taken relative to the first submit time and each piece's share is
// computed as (b − a)·((a − r_j) + (b − r_j))/2, so that Unix-second
// magnitudes (about 2e9) do not cancel catastrophically.
func meanBusy[S jobSource](jobs S, g int) float64 {
	n := jobs.Len()
	if n == 0 {
		return 0
	}
	origin := jobs.Submit(0)
	var total float64
	h := &minHeap[vJob]{less: bySize}
	clock := math.Inf(-1)
	i := 0
	for i < n || h.Len() > 0 {
		if h.Len() == 0 && jobs.Submit(i)-origin > clock {
			clock = jobs.Submit(i) - origin
		}
		for i < n && jobs.Submit(i)-origin <= clock {
			run := jobs.RunTime(i)
			p := float64(jobs.GPUs(i)) / float64(g) * run
			h.push(vJob{size: p, left: p, submit: jobs.Submit(i) - origin, seq: i})
			total += run / 2
			i++
		}
		nextArrival := math.Inf(1)
		if i < n {
			nextArrival = jobs.Submit(i) - origin
		}
		// Run the smallest job until it finishes or the next arrival.
		top := h.top()
		a := clock
		done := clock+top.left <= nextArrival
		if done {
			clock += top.left
		} else {
			top.left -= nextArrival - clock
			clock = nextArrival
		}
		total += (clock - a) * ((a - top.submit) + (clock - top.submit)) / 2 / top.size
		if done {
			h.pop()
		}
	}
	return total
}

// vJob is a job on A1: size is its original virtual size and left what
// remains of it, seconds; submit is its submit time and seq its index.
type vJob struct {
	size, left, submit float64
	seq                int
}

// bySizeLeft orders jobs on A1 by remaining size (SRPT), then submit
// time, then index; bySize by original size instead.
func bySizeLeft(a, b *vJob) bool { return vLess(a.left, b.left, a, b) }
func bySize(a, b *vJob) bool     { return vLess(a.size, b.size, a, b) }

func vLess(ka, kb float64, a, b *vJob) bool {
	if ka != kb {
		return ka < kb
	}
	if a.submit != b.submit {
		return a.submit < b.submit
	}
	return a.seq < b.seq
}
