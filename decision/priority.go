package decision

import "sort"

// Priority bands. Slurm starts jobs in decreasing priority; asrpt gives the
// jobs whose turn has come (dispatched and released) values in the upper
// band and the others, in virtual SRPT order, values in the lower band, all
// below 2^31. Jobs outside asrpt's scope keep their multifactor priorities,
// which on usual weights stay far below LowBand.Lo, so managed jobs rank
// above unmanaged ones in a shared partition.
var (
	// HighBand holds the released (and dispatched) jobs.
	HighBand = Band{Lo: 1 << 30, Hi: 1<<31 - 1}
	// LowBand holds the unreleased jobs.
	LowBand = Band{Lo: 1 << 24, Hi: 1<<30 - 1}
)

// Band is a closed range of priority values.
type Band struct{ Lo, Hi uint32 }

// Contains reports whether p lies in the band.
func (b Band) Contains(p uint32) bool { return p >= b.Lo && p <= b.Hi }

// labelStep is the spacing given to values appended at either end of a
// band, so that later arrivals fit between without renumbering.
const labelStep = 1 << 16

// Label assigns strictly decreasing priorities in band b to n items in rank
// order (item 0 first). cur[i] is the value item i holds now, or 0 when it
// holds none that asrpt can reuse. It keeps the longest run of items whose
// current values are already in band and strictly decreasing in rank (so
// a change of order costs writes in proportion to the items that moved,
// not to the queue length) and gives every other item a value between its
// kept neighbours, widening the gap by renumbering kept neighbours only
// when it is too narrow. It panics when the band holds fewer than n values.
// out is reused when large enough.
func Label(cur []uint32, b Band, out []uint32) []uint32 {
	n := len(cur)
	if int64(n) > int64(b.Hi)-int64(b.Lo)+1 {
		panic("sidecar: more jobs than priority values in the band")
	}
	out = append(out[:0], make([]uint32, n)...)
	keep := keptSubsequence(cur, b)
	for i := range n {
		if keep[i] {
			out[i] = cur[i]
		}
	}
	for i := 0; i < n; {
		if keep[i] {
			i++
			continue
		}
		a, e := i, i // run [a, e) of items without a value
		for e < n && !keep[e] {
			e++
		}
		for {
			upper := int64(b.Hi) + 1
			if a > 0 {
				upper = int64(out[a-1])
			}
			lower := int64(b.Lo) - 1
			if e < n {
				lower = int64(out[e])
			}
			k := int64(e - a)
			room := upper - lower - 1
			if room >= k {
				fill(out[a:e], upper, lower, a == 0, e == n, room)
				break
			}
			// Too narrow: give up the nearer kept neighbour on the side
			// with a neighbour, alternating, and its neighbours' run.
			if e < n && (a == 0 || (e-a)%2 == 0) {
				keep[e] = false
				for e < n && !keep[e] {
					e++
				}
			} else {
				keep[a-1] = false
				for a > 0 && !keep[a-1] {
					a--
				}
			}
		}
		i = e
	}
	return out
}

// fill gives the k = len(dst) items values strictly between upper and lower
// (exclusive; room values are available). Between two kept neighbours the
// values are spread evenly; at an open end of the band they are packed
// labelStep apart against the kept neighbour, leaving room for later
// arrivals beyond them.
func fill(dst []uint32, upper, lower int64, openTop, openBottom bool, room int64) {
	k := int64(len(dst))
	sp := room / (k + 1)
	if sp < 1 {
		sp = 1
	}
	switch {
	case openTop && openBottom:
		sp = min(sp, labelStep)
		mid := lower + (upper-lower)/2
		start := mid + sp*(k-1)/2 // the first item's value
		if start >= upper {
			start = upper - 1
		}
		for j := range dst {
			dst[j] = uint32(start - sp*int64(j))
		}
	case openTop:
		sp = min(sp, labelStep)
		for j := range dst {
			dst[j] = uint32(lower + sp*(k-int64(j)))
		}
	default: // open bottom, or between two kept values
		if openBottom {
			sp = min(sp, labelStep)
		}
		for j := range dst {
			dst[j] = uint32(upper - sp*int64(j+1))
		}
	}
}

// keptSubsequence marks a longest subsequence of items whose cur values are
// in band and strictly decreasing with rank (O(n log n), patience sorting).
func keptSubsequence(cur []uint32, b Band) []bool {
	n := len(cur)
	keep := make([]bool, n)
	// tails[l] is the index of the item ending a decreasing run of length
	// l+1 with the largest last value; prev links the runs.
	tails := make([]int, 0, 64)
	prev := make([]int, n)
	for i, v := range cur {
		prev[i] = -1
		if v == 0 || !b.Contains(v) {
			continue
		}
		// Find the first run whose last value is ≤ v (cannot be extended
		// by v); v replaces it.
		l := sort.Search(len(tails), func(x int) bool { return cur[tails[x]] <= v })
		if l > 0 {
			prev[i] = tails[l-1]
		}
		if l == len(tails) {
			tails = append(tails, i)
		} else {
			tails[l] = i
		}
	}
	if len(tails) > 0 {
		for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
			keep[i] = true
		}
	}
	return keep
}

// labeler labels the ranked jobs with priorities, reusing its buffers
// from one cycle to the next.
type labeler struct {
	cur, labels []uint32
}

// label returns the priority each ranked job should have: the jobs up to
// the last one in the upper band get labels of HighBand, the rest of
// LowBand, each keeping the label it has where Label allows.
func (l *labeler) label(ranked []*Entry) []uint32 {
	l.cur = l.cur[:0]
	split := 0
	for i, e := range ranked {
		l.cur = append(l.cur, e.Prio)
		if e.High() {
			split = i + 1
		}
	}
	hi := Label(l.cur[:split], HighBand, nil)
	l.labels = Label(l.cur[split:], LowBand, l.labels)
	return append(hi, l.labels...)
}
