package policy

// maxGuarded bounds how many waiting jobs of one account a start looks at
// for the account guard (Params.AccountGuard): the earliest submitted
// first. It bounds the work of one start whatever the queue.
const maxGuarded = 256

// guarded is the account guard's index: each account's waiting jobs in
// arrival order, started and withdrawn ones dropped lazily.
type guarded map[string][]*Task

// guardAdd indexes waiting job t for the account guard.
func (a *asrpt) guardAdd(t *Task) {
	if a.guardShare <= 0 {
		return
	}
	if a.guard == nil {
		a.guard = guarded{}
	}
	a.guard[t.Account] = append(a.guard[t.Account], t)
}

// waits reports whether a holds t waiting: on the virtual machine or in
// the release queue.
func (a *asrpt) waits(t *Task) bool {
	if t.released {
		return a.queue.Has(t)
	}
	return a.vm != nil && a.vm.tree.Has(t)
}

// guardStarted charges t, which started at t.Start, to the waiting jobs
// of its account submitted before it with more GPUs, and moves those whose
// charge reached Params.AccountGuard times their own predicted GPU-seconds
// to the front, as overdue.
func (a *asrpt) guardStarted(t *Task) {
	g := a.guardShare
	if g <= 0 || a.guard == nil {
		return
	}
	list := a.guard[t.Account]
	k := 0
	for _, w := range list {
		if w != t && !w.running && a.waits(w) {
			list[k] = w
			k++
		}
	}
	clear(list[k:])
	list = list[:k]
	if k == 0 {
		delete(a.guard, t.Account)
		return
	}
	a.guard[t.Account] = list
	work := float64(t.GPUs) * t.Ranked()
	now := t.Start
	for _, w := range list[:min(k, maxGuarded)] {
		if w.overdue || w.late || !(w.Submit < t.Submit) || w.GPUs <= t.GPUs {
			continue
		}
		w.overtaken += work
		if w.overtaken < g*float64(w.GPUs)*w.Ranked() {
			continue
		}
		a.wait.remove(w)
		w.due, w.overdue = now, true
		if a.frontCap > 0 {
			w.late = true
			a.late.ReplaceOrInsert(w)
			continue
		}
		a.front(now, w)
	}
}
