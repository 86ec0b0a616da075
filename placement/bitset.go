package placement

import "math/bits"

// hbits is a hierarchical bit set over 0..n-1: level 0 holds one bit per
// element, and every higher level one bit per non-zero word of the level
// below. Set and clear cost O(levels); next (the smallest member ≥ i) costs
// O(levels) as well, so iterating a set in increasing order costs O(levels)
// per member. With 64-bit words three levels cover 262,144 elements.
type hbits struct {
	lv [][]uint64
}

func newHbits(n int) hbits {
	var h hbits
	for {
		w := (n + 63) / 64
		if w == 0 {
			w = 1
		}
		h.lv = append(h.lv, make([]uint64, w))
		if w == 1 {
			return h
		}
		n = w
	}
}

func (h *hbits) set(i int) {
	for _, l := range h.lv {
		w := i >> 6
		was := l[w]
		l[w] = was | 1<<uint(i&63)
		if was != 0 {
			return
		}
		i = w
	}
}

func (h *hbits) clear(i int) {
	for _, l := range h.lv {
		w := i >> 6
		l[w] &^= 1 << uint(i&63)
		if l[w] != 0 {
			return
		}
		i = w
	}
}

func (h *hbits) empty() bool { return h.lv[len(h.lv)-1][0] == 0 }

// next returns the smallest member ≥ i, or -1 when there is none.
func (h *hbits) next(i int) int {
	if i < 0 {
		i = 0
	}
	l := 0
	for l < len(h.lv) {
		w := i >> 6
		if w >= len(h.lv[l]) {
			return -1
		}
		m := h.lv[l][w] & (^uint64(0) << uint(i&63))
		if m != 0 {
			i = w<<6 | bits.TrailingZeros64(m)
			for l > 0 {
				l--
				i = i<<6 | bits.TrailingZeros64(h.lv[l][i])
			}
			return i
		}
		i = w + 1
		l++
	}
	return -1
}

func (h hbits) clone() hbits {
	c := hbits{lv: make([][]uint64, len(h.lv))}
	for i, l := range h.lv {
		c.lv[i] = append([]uint64(nil), l...)
	}
	return c
}
