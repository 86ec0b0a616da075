package multifactor

// DefaultSiteFactorMax is the default top of the site-factor range, in
// Slurm priority units: the job at the head of the A-SRPT order gets this
// much on top of the priority multifactor computes, the last job 0. It is
// chosen on the quality suite against Slurm's documented example weights
// (PriorityWeightFairshare=10000, Age, JobSize and Partition 1000; README,
// "Living with the site's policy").
const DefaultSiteFactorMax = 10000

// SiteFactors returns the site factor of each of n waiting jobs in A-SRPT
// order (Pending's, head first): rank-linear from max at the head down to
// 0 at the tail, so that the factor of the i-th job is
// round(max·(n−1−i)/(n−1)); a lone job gets max. Equal ranks never share a
// value while n ≤ max+1. out is reused when large enough.
func SiteFactors(n int, max uint32, out []uint32) []uint32 {
	out = append(out[:0], make([]uint32, n)...)
	if n == 1 {
		out[0] = max
	}
	if n <= 1 {
		return out
	}
	den := uint64(n - 1)
	for i := range n {
		out[i] = uint32((uint64(max)*uint64(n-1-i) + den/2) / den)
	}
	return out
}

// The factor mode's write bound, shared by the sidecar (what it writes)
// and the replay's asrpt-factor (what Slurm then holds): a job's site
// factor is written again only when it moved by more than the range's
// 1/FactorTolerance (site_factor_max/64: jobs whose factors differ by less
// may stand in the wrong order until one of them moves further), or when
// the job is in the head region: its turn has come (dispatched or
// released) or it is among the first FactorHead of the order, where every
// change is written. It keeps the writes of a cycle to about the jobs
// that moved, not every waiting job each time one arrives.
const (
	FactorTolerance = 64
	FactorHead      = 16
)

// FactorDue reports whether a job holding site factor cur (what was last
// written; 0 when nothing) should be written want, with max the top of the
// range and head whether the job is in the head region.
func FactorDue(cur, want, max uint32, head bool) bool {
	if head {
		return cur != want
	}
	d := int64(want) - int64(cur)
	return d > int64(max/FactorTolerance) || -d > int64(max/FactorTolerance)
}
