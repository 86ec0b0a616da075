package sim

import (
	"container/heap"
	"math"

	"github.com/asrpt/asrpt/job"
)

// LowerBound is the lower bound LB on the total job completion time of any
// schedule of a trace on a cluster (design §4).
type LowerBound struct {
	// Virtual is the total completion time (completion − submit, seconds)
	// of preemptive SRPT on the virtual single machine A1 with the true
	// virtual sizes p = (g/G)·n·α_min (Lemma 1 of the paper).
	Virtual float64
	// Length is Σ n·α_min: no job completes sooner than its run time at the
	// best placement after its submission.
	Length float64
	// Total is the bound: max(Virtual, Length). Each is a lower bound on its
	// own; their sum is not (a single job that fills the cluster has
	// Virtual = Length = its run time), so the larger one is reported.
	Total float64
}

// ComputeLowerBound returns LB for jobs prepared for a cluster of g GPUs
// (run times of profiled jobs already at α_min, see Prepare), sorted by
// submit time. It costs O(n log n).
func ComputeLowerBound(jobs []job.Job, g int) LowerBound {
	var lb LowerBound
	h := &srptHeap{}
	clock := math.Inf(-1)
	i := 0
	for i < len(jobs) || h.Len() > 0 {
		if h.Len() == 0 && jobs[i].Submit > clock {
			clock = jobs[i].Submit
		}
		for i < len(jobs) && jobs[i].Submit <= clock {
			j := &jobs[i]
			lb.Length += j.RunTime
			heap.Push(h, srptJob{left: float64(j.GPUs) / float64(g) * j.RunTime, submit: j.Submit, seq: i})
			i++
		}
		nextArrival := math.Inf(1)
		if i < len(jobs) {
			nextArrival = jobs[i].Submit
		}
		// Run the shortest job until it finishes or the next arrival.
		top := &(*h)[0]
		if clock+top.left <= nextArrival {
			clock += top.left
			lb.Virtual += clock - top.submit
			heap.Pop(h)
		} else {
			top.left -= nextArrival - clock
			clock = nextArrival
		}
	}
	lb.Total = math.Max(lb.Virtual, lb.Length)
	return lb
}

type srptJob struct {
	left, submit float64
	seq          int
}

type srptHeap []srptJob

func (h srptHeap) Len() int { return len(h) }
func (h srptHeap) Less(i, j int) bool {
	if h[i].left != h[j].left {
		return h[i].left < h[j].left
	}
	if h[i].submit != h[j].submit {
		return h[i].submit < h[j].submit
	}
	return h[i].seq < h[j].seq
}
func (h srptHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *srptHeap) Push(x any)   { *h = append(*h, x.(srptJob)) }
func (h *srptHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
