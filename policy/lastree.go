package policy

// lasTree is the 2D-LAS queue: the pending and running jobs in byLevel
// order, as a treap whose subtrees know their job count, running-job count,
// GPU sum and smallest GPU count. These let a scheduling pass find, in
// O(log n) each, the next job that fits a given number of free GPUs and the
// longest run of jobs that fit together, instead of visiting every job.
//
// Positions are ranks in byLevel order, from 0. A job's key (level, Submit,
// Seq) and running flag must not change while it is in the tree, except
// through remove / insert and refresh.
type lasTree struct {
	root *lasNode
	free *lasNode // removed nodes, linked by right, for reuse
	seed uint64   // state of the priority generator
}

// lasNode is one job of a lasTree with the aggregates of its subtree.
type lasNode struct {
	t           *Task
	left, right *lasNode
	prio        uint64
	n, running  int // jobs, running jobs
	gpus        int // GPU sum, GPUs
	minGPUs     int // smallest GPU count, GPUs
}

// fix recomputes x's aggregates from its children.
func (x *lasNode) fix() {
	g := x.t.GPUs
	x.n, x.running, x.gpus, x.minGPUs = 1, 0, g, g
	if x.t.running {
		x.running = 1
	}
	for _, c := range [2]*lasNode{x.left, x.right} {
		if c != nil {
			x.n += c.n
			x.running += c.running
			x.gpus += c.gpus
			x.minGPUs = min(x.minGPUs, c.minGPUs)
		}
	}
}

func (x *lasNode) size() int {
	if x == nil {
		return 0
	}
	return x.n
}

func (x *lasNode) sum() int {
	if x == nil {
		return 0
	}
	return x.gpus
}

// Len returns the number of jobs in the tree.
func (tr *lasTree) Len() int { return tr.root.size() }

// Pending returns the number of pending jobs in the tree.
func (tr *lasTree) Pending() int {
	if tr.root == nil {
		return 0
	}
	return tr.root.n - tr.root.running
}

// node returns a node for t with a fresh priority (splitmix64, so the
// tree's shape is the same from run to run).
func (tr *lasTree) node(t *Task) *lasNode {
	x := tr.free
	if x != nil {
		tr.free = x.right
	} else {
		x = new(lasNode)
	}
	tr.seed += 0x9e3779b97f4a7c15
	z := tr.seed
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	*x = lasNode{t: t, prio: z ^ z>>31}
	x.fix()
	return x
}

// Insert adds t, replacing a job with the same key.
func (tr *lasTree) Insert(t *Task) {
	var gone *lasNode
	tr.root = insertNode(tr.root, tr.node(t), &gone)
	tr.recycle(gone)
}

// insertNode adds nd to the subtree x and returns the subtree; a node of
// x with nd's key is taken out and returned in gone.
func insertNode(x, nd *lasNode, gone **lasNode) *lasNode {
	if x == nil {
		return nd
	}
	if nd.prio > x.prio {
		l, r := split(x, nd.t)
		nd.left, nd.right = l, removeNode(r, nd.t, gone)
		nd.fix()
		return nd
	}
	switch {
	case byLevel(nd.t, x.t):
		x.left = insertNode(x.left, nd, gone)
	case byLevel(x.t, nd.t):
		x.right = insertNode(x.right, nd, gone)
	default:
		*gone = x
		nd.left, nd.right, nd.prio = x.left, x.right, x.prio
		nd.fix()
		return nd
	}
	x.fix()
	return x
}

// split cuts x into the jobs before t and the others.
func split(x *lasNode, t *Task) (l, r *lasNode) {
	if x == nil {
		return nil, nil
	}
	if byLevel(x.t, t) {
		x.right, r = split(x.right, t)
		x.fix()
		return x, r
	}
	l, x.left = split(x.left, t)
	x.fix()
	return l, x
}

func merge(l, r *lasNode) *lasNode {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = merge(l.right, r)
		l.fix()
		return l
	}
	r.left = merge(l, r.left)
	r.fix()
	return r
}

// Remove takes out the job with t's key; it is a no-op when there is none.
func (tr *lasTree) Remove(t *Task) {
	var gone *lasNode
	tr.root = removeNode(tr.root, t, &gone)
	tr.recycle(gone)
}

// recycle keeps x, when not nil, for a later node.
func (tr *lasTree) recycle(x *lasNode) {
	if x != nil {
		*x = lasNode{right: tr.free}
		tr.free = x
	}
}

func removeNode(x *lasNode, t *Task, gone **lasNode) *lasNode {
	if x == nil {
		return nil
	}
	switch {
	case byLevel(t, x.t):
		x.left = removeNode(x.left, t, gone)
	case byLevel(x.t, t):
		x.right = removeNode(x.right, t, gone)
	default:
		*gone = x
		return merge(x.left, x.right)
	}
	x.fix()
	return x
}

// Refresh brings the aggregates up to date after t's running flag changed.
func (tr *lasTree) Refresh(t *Task) { refreshNode(tr.root, t) }

func refreshNode(x *lasNode, t *Task) {
	if x == nil {
		return
	}
	switch {
	case byLevel(t, x.t):
		refreshNode(x.left, t)
	case byLevel(x.t, t):
		refreshNode(x.right, t)
	}
	x.fix()
}

// SumBefore returns the GPUs of the jobs at positions below r.
func (tr *lasTree) SumBefore(r int) int {
	s := 0
	for x := tr.root; x != nil; {
		ln := x.left.size()
		if r <= ln {
			x = x.left
			continue
		}
		s += x.left.sum()
		if r == ln+1 {
			return s + x.t.GPUs
		}
		s += x.t.GPUs
		r -= ln + 1
		x = x.right
	}
	return s
}

// Over returns the first position whose job takes the GPU sum from
// position 0 past limit GPUs, or Len when the whole tree fits in limit.
func (tr *lasTree) Over(limit int) int {
	r := 0
	for x := tr.root; x != nil; {
		ls := x.left.sum()
		if limit < ls {
			x = x.left
			continue
		}
		limit -= ls
		if limit < x.t.GPUs {
			return r + x.left.size()
		}
		limit -= x.t.GPUs
		r += x.left.size() + 1
		x = x.right
	}
	return r
}

// FirstFit returns the first position at or after from whose job needs at
// most gpus GPUs, or Len when there is none.
func (tr *lasTree) FirstFit(from, gpus int) int {
	return firstFit(tr.root, 0, from, gpus)
}

// firstFit is FirstFit in the subtree x whose first position is base.
func firstFit(x *lasNode, base, from, gpus int) int {
	end := base + x.size()
	if x == nil || x.minGPUs > gpus || end <= from {
		return end
	}
	ln := x.left.size()
	if from < base+ln {
		if r := firstFit(x.left, base, from, gpus); r < base+ln {
			return r
		}
	}
	if at := base + ln; at >= from && x.t.GPUs <= gpus {
		return at
	}
	return firstFit(x.right, base+ln+1, from, gpus)
}

// PendingAt returns the position of the pending job that k pending jobs
// precede, or Len when there are k or fewer.
func (tr *lasTree) PendingAt(k int) int {
	r := 0
	for x := tr.root; x != nil; {
		lp := 0
		if x.left != nil {
			lp = x.left.n - x.left.running
		}
		if k < lp {
			x = x.left
			continue
		}
		k -= lp
		if !x.t.running {
			if k == 0 {
				return r + x.left.size()
			}
			k--
		}
		r += x.left.size() + 1
		x = x.right
	}
	return r
}

// Append appends to dst, in order, the jobs at positions from to to-1
// whose running flag is running, and returns it; its cost is O(log n) per
// job appended.
func (tr *lasTree) Append(dst []*Task, from, to int, running bool) []*Task {
	if from >= to {
		return dst
	}
	return appendRange(dst, tr.root, 0, from, to, running)
}

func appendRange(dst []*Task, x *lasNode, base, from, to int, running bool) []*Task {
	if x == nil || base >= to || base+x.n <= from {
		return dst
	}
	if running && x.running == 0 || !running && x.running == x.n {
		return dst
	}
	at := base + x.left.size()
	dst = appendRange(dst, x.left, base, from, to, running)
	if at >= from && at < to && x.t.running == running {
		dst = append(dst, x.t)
	}
	return appendRange(dst, x.right, at+1, from, to, running)
}
