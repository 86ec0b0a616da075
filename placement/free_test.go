package placement

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asrpt/asrpt/cluster"
)

func TestHbitsMatchesReference(t *testing.T) {
	for _, n := range []int{1, 63, 64, 65, 4096, 5000} {
		h := newHbits(n)
		ref := make([]bool, n)
		rng := rand.New(rand.NewPCG(uint64(n), 9))
		for step := 0; step < 4*n+100; step++ {
			i := rng.IntN(n)
			if rng.IntN(2) == 0 {
				h.set(i)
				ref[i] = true
			} else {
				h.clear(i)
				ref[i] = false
			}
			q := rng.IntN(n + 1)
			want := -1
			for j := q; j < n; j++ {
				if ref[j] {
					want = j
					break
				}
			}
			if got := h.next(q); got != want {
				t.Fatalf("n=%d step %d: next(%d) = %d, want %d", n, step, q, got, want)
			}
			if h.empty() != !slices.Contains(ref, true) {
				t.Fatalf("n=%d step %d: empty() = %v", n, step, h.empty())
			}
		}
	}
}

// checkIndex compares the best-fit index and switch totals of f with a
// recount from its masks.
func checkIndex(t *testing.T, c *cluster.Cluster, f *Free) {
	t.Helper()
	total := 0
	nb := make([]int, len(f.bucket))
	largest := 0
	for n := range c.Nodes {
		k := f.On(n)
		if got := popcount(f.Mask(n)); got != k {
			t.Fatalf("node %d: On = %d, mask has %d", n, k, got)
		}
		total += k
		nb[k]++
		largest = max(largest, k)
		for b := 1; b < len(f.bucket); b++ {
			if in := f.bucket[b].next(n) == n; in != (b == k) {
				t.Fatalf("node %d with %d free: in bucket %d = %v", n, k, b, in)
			}
		}
	}
	if f.Total() != total {
		t.Fatalf("Total = %d, want %d", f.Total(), total)
	}
	if f.Largest() != largest {
		t.Fatalf("Largest = %d, want %d", f.Largest(), largest)
	}
	for b := 1; b < len(nb); b++ {
		if f.nb[b] != nb[b] {
			t.Fatalf("nb[%d] = %d, want %d", b, f.nb[b], nb[b])
		}
	}
	if f.tree != nil {
		for s, members := range f.tree.members {
			sum := 0
			for _, n := range members {
				sum += f.On(n)
			}
			if f.swFree[s] != sum {
				t.Fatalf("switch %d: %d free, want %d", s, f.swFree[s], sum)
			}
		}
	}
	for g := 1; g <= largest; g++ {
		want := -1
		for n := range c.Nodes {
			if k := f.On(n); k >= g && (want < 0 || k < f.On(want)) {
				want = n
			}
		}
		if got := f.bestFit(g, nil); got != want {
			t.Fatalf("bestFit(%d) = %d, want %d", g, got, want)
		}
	}
}

func popcount(m uint64) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// treeCluster is 12 nodes of 4 or 8 GPUs under two leaves and a spine:
//
//	      spine
//	     /     \
//	 leaf0     leaf1
//	n0..n5     n6..n11
func treeCluster() *cluster.Cluster {
	c := pcieCluster(12, 8)
	c.Switches = []cluster.Switch{{Name: "spine", Level: 1}, {Name: "leaf0", Parent: "spine"}, {Name: "leaf1", Parent: "spine"}}
	for i := range c.Nodes {
		c.Nodes[i].Switch = []string{"leaf0", "leaf1"}[i/6]
		if i%3 == 0 {
			c.Nodes[i].GPUs = 4
		}
	}
	return c
}

func TestFreeIndexUnderTakeGive(t *testing.T) {
	for name, c := range map[string]*cluster.Cluster{"flat": pcieCluster(70, 8), "tree": treeCluster()} {
		t.Run(name, func(t *testing.T) {
			f := NewFree(c)
			checkIndex(t, c, f)
			rng := rand.New(rand.NewPCG(5, 5))
			var held []Placement
			for step := 0; step < 3000; step++ {
				if len(held) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(held))
					f.Give(&held[i])
					held = slices.Delete(held, i, i+1)
				} else {
					n := rng.IntN(len(c.Nodes))
					m := f.Mask(n) & rng.Uint64()
					if m == 0 {
						continue
					}
					p := Placement{Slots: []Slot{{Node: n, GPUs: m}}}
					if err := f.Take(&p); err != nil {
						t.Fatal(err)
					}
					if err := f.Take(&p); err == nil {
						t.Fatal("second Take of the same GPUs succeeded")
					}
					held = append(held, p)
				}
				if step%97 == 0 {
					checkIndex(t, c, f)
					cl := f.Clone()
					checkIndex(t, c, cl)
					if len(held) > 0 {
						cl.Give(&held[0]) // must not touch f
						checkIndex(t, c, f)
					}
				}
			}
			checkIndex(t, c, f)
		})
	}
}

// TestGiveNotTaken: giving back free GPUs, or a node the state does not
// have, is refused with ErrNotTaken and changes nothing.
func TestGiveNotTaken(t *testing.T) {
	f := NewFree(cluster.Uniform(2, 4))
	taken := Placement{Slots: []Slot{{Node: 0, GPUs: 0b0011}}}
	if err := f.Take(&taken); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Placement{
		{Slots: []Slot{{Node: 0, GPUs: 0b0100}}},
		{Slots: []Slot{{Node: 0, GPUs: 0b0111}}},
		{Slots: []Slot{{Node: 0, GPUs: 0b0001}, {Node: 1, GPUs: 0b0001}}},
		{Slots: []Slot{{Node: 2, GPUs: 0b0001}}},
		{Slots: []Slot{{Node: -1, GPUs: 0b0001}}},
	} {
		if err := f.Give(&p); !errors.Is(err, ErrNotTaken) {
			t.Errorf("Give(%+v) = %v, want ErrNotTaken", p, err)
		}
		if f.Total() != 6 || f.Mask(0) != 0b1100 || f.Mask(1) != 0b1111 {
			t.Fatalf("Give(%+v) changed the state: total %d, masks %b %b", p, f.Total(), f.Mask(0), f.Mask(1))
		}
	}
	if err := f.Give(&taken); err != nil || f.Total() != 8 {
		t.Errorf("Give of taken GPUs: %v, total %d", err, f.Total())
	}
}
