package decision

import (
	"cmp"
	"slices"
)

// Jobs asrpt does not rank still compete with those it does: a CPU-only
// job in a partition of GPU jobs waits behind every job Slurm puts ahead
// of it, and asrpt's values (absolute priorities far above multifactor's,
// or site factors up to site_factor_max) would put every managed job ahead
// of it. So each pending job in scope that asrpt does not rank because it
// has no GPUs, or more than the cluster, keeps its standing: it is put in
// the written order just ahead of the first managed job (in asrpt's order)
// that Slurm's own order puts behind it, and given the priority or site
// factor of that place. Then no managed job that Slurm alone would start
// after it gets a higher value than it: in priority mode it has at most as
// many managed jobs ahead as with Slurm alone; in factor mode a managed job
// behind it in Slurm's own order has both a lower multifactor priority and
// a site factor no higher than its own. (Keeping only the number of jobs
// ahead, with the place after as many managed jobs as Slurm puts ahead,
// was measured first: in factor mode the jobs asrpt ranked ahead of it
// could outrank it on top of those multifactor already put ahead, and
// whole-node CPU-only jobs on the testbed waited longer than with Slurm
// alone.) It is never dispatched and never pinned.
// Jobs held, held back (a dependency, a begin time) or whose priority an
// admin set are left alone; jobs out of scope are never written. Which
// jobs keep their standing the queue view says (class.standable).

// ownKey is a job's place in Slurm's own order: priority (without asrpt's
// values), then submit time, then id.
type ownKey struct {
	prio   uint32
	submit int64
	id     string
}

// ahead reports whether Slurm's own order puts a before b.
func (a ownKey) ahead(b ownKey) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.submit != b.submit {
		return a.submit < b.submit
	}
	return CompareID(a.id, b.id) < 0
}

// ownKey returns e's key in Slurm's own order under write mode mode. In factor mode the priority
// plugin's value less the site factor asrpt wrote; otherwise, or once asrpt
// has set an explicit priority, the priority the job had when asrpt first
// saw it.
func (e *Entry) ownKey(mode WriteMode) ownKey {
	k := ownKey{prio: e.base, id: e.ID}
	if e.Record != nil {
		k.submit = e.Record.Submit.Unix()
		if mode == WriteFactor && e.Prio == 0 && e.Record.Priority >= e.Factor {
			k.prio = e.Record.Priority - e.Factor
		}
	}
	return k
}

// withStanding returns ranked with the standing jobs of this cycle put in
// (see above): each just ahead of the first job of ranked that Slurm's own
// order puts behind it (at the end when there is none), in Slurm's own
// order among themselves. Work: O((n + m) log n) for n ranked and m
// standing jobs.
func (tr *State) withStanding(ranked []*Entry) []*Entry {
	var st []*Entry
	for _, e := range tr.Entries {
		if e.standing && e.Record != nil && e.Record.Pending() && !e.Record.Held && e.heldBack == "" && !e.HandsOff {
			st = append(st, e)
		}
	}
	if len(st) == 0 {
		return ranked
	}
	// The ranked jobs in Slurm's own order, and from each of them on the
	// smallest rank in asrpt's order.
	type ranked1 struct {
		k    ownKey
		rank int
	}
	own := make([]ranked1, len(ranked))
	for i, e := range ranked {
		own[i] = ranked1{e.ownKey(tr.Mode), i}
	}
	slices.SortFunc(own, func(a, b ranked1) int {
		if a.k.ahead(b.k) {
			return -1
		}
		if b.k.ahead(a.k) {
			return 1
		}
		return 0
	})
	first := make([]int, len(own)+1) // first[j]: min rank of own[j:]
	first[len(own)] = len(ranked)
	for j := len(own) - 1; j >= 0; j-- {
		first[j] = min(first[j+1], own[j].rank)
	}
	type placed struct {
		e   *Entry
		k   ownKey
		pos int
	}
	ps := make([]placed, len(st))
	for i, e := range st {
		k := e.ownKey(tr.Mode)
		// own[j:] are the ranked jobs Slurm's own order puts behind e.
		j, _ := slices.BinarySearchFunc(own, k, func(m ranked1, u ownKey) int {
			if m.k.ahead(u) {
				return -1
			}
			return 1
		})
		ps[i] = placed{e, k, first[j]}
	}
	slices.SortFunc(ps, func(a, b placed) int {
		if c := cmp.Compare(a.pos, b.pos); c != 0 {
			return c
		}
		if a.k.ahead(b.k) {
			return -1
		}
		return 1
	})
	out := make([]*Entry, 0, len(ranked)+len(ps))
	j := 0
	for i, e := range ranked {
		for j < len(ps) && ps[j].pos <= i {
			out = append(out, ps[j].e)
			j++
		}
		out = append(out, e)
	}
	for ; j < len(ps); j++ {
		out = append(out, ps[j].e)
	}
	return out
}
