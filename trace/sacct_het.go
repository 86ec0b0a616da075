package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/asrpt/asrpt/job"
)

// maxHetOffset bounds a heterogeneous component's offset (the K of N+K):
// Slurm allows 128 components by default; the live client reads at most
// 1,024 (slurmclient's maxHetComponents).
const maxHetOffset = 1023

// hetComponent reads sacct's JobID of a heterogeneous job's component,
// N+K: the leader's id N and the component's offset K (the leader is
// N+0). ok is false for any other id. Both must be decimal numbers, and K
// at most maxHetOffset.
func hetComponent(jobID string) (leader string, offset int, ok bool, err error) {
	leader, k, ok := strings.Cut(jobID, "+")
	if !ok {
		return "", 0, false, nil
	}
	if leader == "" || len(leader) > 20 || strings.Trim(leader, "0123456789") != "" {
		return "", 0, false, fmt.Errorf("%w: heterogeneous component %.40q: the job id before '+' is not a number", ErrValue, jobID)
	}
	offset, perr := strconv.Atoi(k)
	if perr != nil || offset < 0 || offset > maxHetOffset || strings.Trim(k, "0123456789") != "" {
		return "", 0, false, fmt.Errorf("%w: heterogeneous component %.40q: the offset after '+' is not a number in 0..%d", ErrValue, jobID, maxHetOffset)
	}
	return leader, offset, true, nil
}

// hetUnits merges the rows of heterogeneous jobs into one job each, under
// the leader's id (job.MergeHet): the unit the live sidecar ranks.
type hetUnits struct {
	// offsets holds, by leader id, the offsets of the components merged
	// into its unit.
	offsets map[string][]int
}

// add merges component offset of the heterogeneous job led by leader, read
// as j at line, into its unit in b (index maps ids to b's indices). The
// first component read starts the unit; a component read twice (a requeued
// job's earlier attempt, sacct -D) or a plain job of the leader's id
// starts it again, the last attempt winning as for plain jobs.
func (h *hetUnits) add(b *jobBuf, index map[string]int, name string, line int, leader string, offset int, j *job.Job, st *Stats) error {
	if h.offsets == nil {
		h.offsets = map[string][]int{}
	}
	j.ID = leader
	i, seen := index[leader]
	offs, isUnit := h.offsets[leader]
	switch {
	case seen && isUnit && !slices.Contains(offs, offset):
		st.HetComponents++
		h.offsets[leader] = append(offs, offset)
		u := b.t.Job(i)
		job.MergeHet(&u, j, offset == 0)
		return b.set(name, line, i, &u)
	case seen:
		st.Duplicates++
		h.offsets[leader] = append(offs[:0], offset)
		return b.set(name, line, i, j)
	}
	i, err := b.add(name, line, j)
	if err != nil {
		return err
	}
	index[leader] = i
	h.offsets[leader] = []int{offset}
	return nil
}

// judge drops the heterogeneous jobs without GPUs or run time, as readSacct
// drops such plain jobs, counting each job once.
func (h *hetUnits) judge(b *jobBuf, index map[string]int, st *Stats) {
	if len(h.offsets) == 0 {
		return
	}
	drop := map[int]bool{}
	for leader := range h.offsets {
		i := index[leader]
		switch {
		case b.t.GPUs(i) == 0:
			st.NoGPU++
			drop[i] = true
		case b.t.RunTime(i) == 0:
			st.NotRun++
			drop[i] = true
		}
	}
	if len(drop) > 0 {
		b.keep(func(i int) bool { return !drop[i] })
	}
}
