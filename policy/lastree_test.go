package policy

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// checkLASTree verifies tr's invariants: byLevel order, the heap order of
// the priorities, every subtree's aggregates, and that it holds exactly
// want (in byLevel order).
func checkLASTree(tr *lasTree, want []*Task) error {
	var got []*Task
	var walk func(x *lasNode) error
	walk = func(x *lasNode) error {
		if x == nil {
			return nil
		}
		for _, c := range [2]*lasNode{x.left, x.right} {
			if c != nil && c.prio > x.prio {
				return fmt.Errorf("job %d: child %d has a higher priority", x.t.Seq, c.t.Seq)
			}
		}
		if err := walk(x.left); err != nil {
			return err
		}
		got = append(got, x.t)
		if err := walk(x.right); err != nil {
			return err
		}
		y := *x
		y.fix()
		if y.n != x.n || y.running != x.running || y.gpus != x.gpus || y.minGPUs != x.minGPUs {
			return fmt.Errorf("job %d: aggregates %d/%d/%d/%d, recomputed %d/%d/%d/%d", x.t.Seq,
				x.n, x.running, x.gpus, x.minGPUs, y.n, y.running, y.gpus, y.minGPUs)
		}
		return nil
	}
	if err := walk(tr.root); err != nil {
		return err
	}
	for i := 1; i < len(got); i++ {
		if !byLevel(got[i-1], got[i]) {
			return fmt.Errorf("jobs %d and %d out of byLevel order", got[i-1].Seq, got[i].Seq)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d jobs in the tree, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("position %d: job %d, want %d", i, got[i].Seq, want[i].Seq)
		}
	}
	return nil
}

// TestLASTreeQueries checks the tree's position queries against a walk of
// the sorted jobs, on random trees built by inserts and removals.
func TestLASTreeQueries(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs int
		seed uint64
	}{
		{"empty", 0, 1},
		{"one", 1, 2},
		{"small", 7, 3},
		{"hundreds", 300, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 0))
			var tr lasTree
			var in []*Task
			for i := range 2 * tc.jobs {
				if i < tc.jobs || len(in) == 0 || rng.IntN(3) > 0 {
					j := &job.Job{Submit: float64(rng.IntN(50)), GPUs: 1 << rng.IntN(6)}
					x := &Task{Job: j, Seq: i, level: rng.IntN(3), running: rng.IntN(2) == 0}
					tr.Insert(x)
					in = append(in, x)
				} else {
					k := rng.IntN(len(in))
					tr.Remove(in[k])
					in = append(in[:k], in[k+1:]...)
				}
				if len(in) > tc.jobs {
					k := rng.IntN(len(in))
					tr.Remove(in[k])
					in = append(in[:k], in[k+1:]...)
				}
			}
			sorted := append([]*Task(nil), in...)
			sort.Slice(sorted, func(i, j int) bool { return byLevel(sorted[i], sorted[j]) })
			if err := checkLASTree(&tr, sorted); err != nil {
				t.Fatal(err)
			}
			checkQueries(t, &tr, sorted)
		})
	}
}

// checkQueries compares every query of tr with a walk of sorted.
func checkQueries(t *testing.T, tr *lasTree, sorted []*Task) {
	t.Helper()
	n := len(sorted)
	if tr.Len() != n {
		t.Fatalf("Len %d, want %d", tr.Len(), n)
	}
	prefix := make([]int, n+1)
	pending := 0
	for i, x := range sorted {
		prefix[i+1] = prefix[i] + x.GPUs
		if !x.running {
			pending++
		}
	}
	if tr.Pending() != pending {
		t.Errorf("Pending %d, want %d", tr.Pending(), pending)
	}
	for r := 0; r <= n; r++ {
		if got := tr.SumBefore(r); got != prefix[r] {
			t.Errorf("SumBefore(%d) = %d, want %d", r, got, prefix[r])
		}
	}
	for limit := 0; limit <= prefix[n]+1; limit++ {
		want := 0
		for want < n && prefix[want+1] <= limit {
			want++
		}
		if got := tr.Over(limit); got != want {
			t.Errorf("Over(%d) = %d, want %d", limit, got, want)
		}
	}
	for k := 0; k <= pending; k++ {
		want, seen := n, 0
		for i, x := range sorted {
			if !x.running {
				if seen == k {
					want = i
					break
				}
				seen++
			}
		}
		if got := tr.PendingAt(k); got != want {
			t.Errorf("PendingAt(%d) = %d, want %d", k, got, want)
		}
	}
	for from := 0; from <= n; from++ {
		for _, g := range []int{0, 1, 2, 5, 8, 31, 32} {
			want := from
			for want < n && sorted[want].GPUs > g {
				want++
			}
			if got := tr.FirstFit(from, g); got != want {
				t.Errorf("FirstFit(%d, %d) = %d, want %d", from, g, got, want)
			}
		}
		for to := from; to <= n; to++ {
			for _, running := range []bool{false, true} {
				var want []*Task
				for _, x := range sorted[from:to] {
					if x.running == running {
						want = append(want, x)
					}
				}
				got := tr.Append(nil, from, to, running)
				if len(got) != len(want) {
					t.Fatalf("Append(%d, %d, %v): %d jobs, want %d", from, to, running, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("Append(%d, %d, %v)[%d] = job %d, want %d", from, to, running, i, got[i].Seq, want[i].Seq)
					}
				}
			}
		}
	}
}

// TestLASTreeInsertReplaces checks that inserting a job with the key of
// one in the tree replaces it, whichever the priorities make the new node
// meet the old one: on the way down or below the point where it goes in.
func TestLASTreeInsertReplaces(t *testing.T) {
	for _, n := range []int{1, 2, 10, 200} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var tr lasTree
			in := make([]*Task, n)
			for i := range in {
				in[i] = &Task{Job: &job.Job{Submit: float64(i % 7), GPUs: 1 + i%5}, Seq: i, level: i % 3}
				tr.Insert(in[i])
			}
			for i, x := range in {
				y := *x
				y.running = i%2 == 0
				in[i] = &y
				tr.Insert(&y)
			}
			sort.Slice(in, func(i, j int) bool { return byLevel(in[i], in[j]) })
			if err := checkLASTree(&tr, in); err != nil {
				t.Fatal(err)
			}
		})
	}
}
