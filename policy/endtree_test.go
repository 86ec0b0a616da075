package policy

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asrpt/asrpt/job"
)

// TestEndTreeMatchesNaive: random inserts, deletes and end changes, each
// followed by every query, against a sorted slice.
func TestEndTreeMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var tree endTree
	var held []*Task
	sorted := func() []*Task {
		s := slices.Clone(held)
		slices.SortFunc(s, func(a, b *Task) int {
			if byEnd(a, b) {
				return -1
			}
			if byEnd(b, a) {
				return 1
			}
			return 0
		})
		return s
	}
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 5 || len(held) == 0:
			tk := &Task{Job: &job.Job{GPUs: 1 + rng.IntN(8)}, Seq: step, end: float64(rng.IntN(50))}
			tree.insert(tk)
			held = append(held, tk)
		case op < 8:
			i := rng.IntN(len(held))
			if !tree.delete(held[i]) {
				t.Fatalf("step %d: delete of a held task failed", step)
			}
			held = slices.Delete(held, i, i+1)
		default: // the end changes: out and in again, as refresh does
			tk := held[rng.IntN(len(held))]
			tree.delete(tk)
			tk.end += float64(1 + rng.IntN(10))
			tree.insert(tk)
		}
		s := sorted()
		if tree.Len() != len(s) {
			t.Fatalf("step %d: len %d, want %d", step, tree.Len(), len(s))
		}
		var got []*Task
		tree.ascend(func(tk *Task) bool { got = append(got, tk); return true })
		if !slices.Equal(got, s) {
			t.Fatalf("step %d: ascend order differs", step)
		}
		if m, ok := tree.min(); ok != (len(s) > 0) || ok && m != s[0] {
			t.Fatalf("step %d: min %v", step, m)
		}
		at := float64(rng.IntN(60))
		want := 0
		for _, tk := range s {
			if tk.end <= at {
				want += tk.GPUs
			}
		}
		if g := tree.gpusBy(at); g != want {
			t.Fatalf("step %d: gpusBy(%v) = %d, want %d", step, at, g, want)
		}
		need := rng.IntN(40)
		sum, wantTask := 0, (*Task)(nil)
		for _, tk := range s {
			sum += tk.GPUs
			if sum >= need && need > 0 {
				wantTask = tk
				break
			}
		}
		tk, c, ok := tree.reach(need)
		if ok != (wantTask != nil) || ok && (tk != wantTask || c != sum) {
			t.Fatalf("step %d: reach(%d) = %v, %d, %v; want %v, %d", step, need, tk, c, ok, wantTask, sum)
		}
	}
	if tree.delete(&Task{Job: &job.Job{GPUs: 1}, Seq: -1}) {
		t.Error("deleted a task never inserted")
	}
}

// BenchmarkEndTree measures one start and one end on a set of 4,000
// running jobs, plus the two profile queries.
func BenchmarkEndTree(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tree endTree
	tasks := make([]*Task, 4000)
	for i := range tasks {
		tasks[i] = &Task{Job: &job.Job{GPUs: 1 + rng.IntN(8)}, Seq: i, end: rng.Float64() * 1e5}
		tree.insert(tasks[i])
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tk := tasks[i%len(tasks)]
		tree.delete(tk)
		tk.end += 1e5
		tree.insert(tk)
		tree.gpusBy(tk.end / 2)
		tree.reach(1000)
		i++
	}
}
