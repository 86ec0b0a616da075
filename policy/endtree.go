package policy

// endTree is the set of running tasks in byEnd order (predicted end, then
// arrival sequence): a treap whose nodes are the tasks themselves, each
// holding the GPUs of its subtree. Besides insert and delete, it answers
// in O(log n) how many GPUs end by a time (gpusBy) and at which task the
// GPUs ended, counted in order, first reach a number (reach), so that a
// free-GPU profile is read from it without walking the running jobs.
// Nodes are priority-ordered by a hash of Task.Seq, so the shape, like
// everything else, depends on the input only. Inserting and deleting
// allocate nothing.
type endTree struct {
	root *Task
	n    int
}

// treeNode is the part of a Task the endTree owns.
type treeNode struct {
	left, right *Task
	prio        uint64
	sum         int // GPUs of the subtree rooted here
}

// seqPriority is the treap priority of sequence number seq (SplitMix64).
func seqPriority(seq int) uint64 {
	z := uint64(seq) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func subtreeGPUs(t *Task) int {
	if t == nil {
		return 0
	}
	return t.node.sum
}

func (t *Task) fix() { t.node.sum = t.GPUs + subtreeGPUs(t.node.left) + subtreeGPUs(t.node.right) }

// Len returns the number of tasks held.
func (e *endTree) Len() int { return e.n }

// insert adds t, keyed by its current end; t must not be held.
func (e *endTree) insert(t *Task) {
	t.node = treeNode{prio: seqPriority(t.Seq), sum: t.GPUs}
	e.root = endInsert(e.root, t)
	e.n++
}

func endInsert(n, t *Task) *Task {
	if n == nil {
		return t
	}
	if t.node.prio > n.node.prio {
		t.node.left, t.node.right = endSplit(n, t)
		t.fix()
		return t
	}
	if byEnd(t, n) {
		n.node.left = endInsert(n.node.left, t)
	} else {
		n.node.right = endInsert(n.node.right, t)
	}
	n.fix()
	return n
}

// endSplit splits the subtree n into the tasks before key and those after.
func endSplit(n, key *Task) (lo, hi *Task) {
	if n == nil {
		return nil, nil
	}
	if byEnd(n, key) {
		n.node.right, hi = endSplit(n.node.right, key)
		n.fix()
		return n, hi
	}
	lo, n.node.left = endSplit(n.node.left, key)
	n.fix()
	return lo, n
}

func endMerge(lo, hi *Task) *Task {
	switch {
	case lo == nil:
		return hi
	case hi == nil:
		return lo
	case lo.node.prio > hi.node.prio:
		lo.node.right = endMerge(lo.node.right, hi)
		lo.fix()
		return lo
	default:
		hi.node.left = endMerge(lo, hi.node.left)
		hi.fix()
		return hi
	}
}

// delete removes t, found by its end as it was inserted; it reports
// whether t was held.
func (e *endTree) delete(t *Task) bool {
	var found bool
	e.root, found = endDelete(e.root, t)
	if found {
		e.n--
		t.node = treeNode{}
	}
	return found
}

func endDelete(n, t *Task) (*Task, bool) {
	if n == nil {
		return nil, false
	}
	if n == t {
		return endMerge(n.node.left, n.node.right), true
	}
	var found bool
	if byEnd(t, n) {
		n.node.left, found = endDelete(n.node.left, t)
	} else {
		n.node.right, found = endDelete(n.node.right, t)
	}
	if found {
		n.fix()
	}
	return n, found
}

// min returns the task of the earliest end.
func (e *endTree) min() (*Task, bool) {
	n := e.root
	if n == nil {
		return nil, false
	}
	for n.node.left != nil {
		n = n.node.left
	}
	return n, true
}

// gpusBy returns the GPUs of the tasks whose end is at or before at.
func (e *endTree) gpusBy(at float64) int {
	sum := 0
	for n := e.root; n != nil; {
		if n.end <= at {
			sum += n.GPUs + subtreeGPUs(n.node.left)
			n = n.node.right
		} else {
			n = n.node.left
		}
	}
	return sum
}

// reach returns the first task, in byEnd order, at which the GPUs of the
// tasks up to it (itself included) reach need > 0, and that sum; false
// when all of them hold fewer than need GPUs.
func (e *endTree) reach(need int) (*Task, int, bool) {
	if need <= 0 || subtreeGPUs(e.root) < need {
		return nil, 0, false
	}
	before := 0
	n := e.root
	for {
		l := subtreeGPUs(n.node.left)
		switch {
		case before+l >= need:
			n = n.node.left
		case before+l+n.GPUs >= need:
			return n, before + l + n.GPUs, true
		default:
			before += l + n.GPUs
			n = n.node.right
		}
	}
}

// ascend calls f on the tasks in byEnd order until f returns false.
func (e *endTree) ascend(f func(*Task) bool) { endAscend(e.root, f) }

func endAscend(n *Task, f func(*Task) bool) bool {
	for n != nil {
		if !endAscend(n.node.left, f) || !f(n) {
			return false
		}
		n = n.node.right
	}
	return true
}
