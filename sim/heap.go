package sim

// minHeap is a binary min-heap of values ordered by less, written out
// rather than built on container/heap so that a push or a pop does not box
// its value into an interface. The top may be changed in place as long as
// its key only decreases (it stays the minimum).
type minHeap[T any] struct {
	items []T
	less  func(a, b *T) bool
}

// Len returns the number of values held.
func (h *minHeap[T]) Len() int { return len(h.items) }

// top returns the least value; h must not be empty.
func (h *minHeap[T]) top() *T { return &h.items[0] }

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	s := h.items
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(&s[i], &s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes and returns the least value; h must not be empty.
func (h *minHeap[T]) pop() T {
	s := h.items
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	var zero T
	s[last] = zero
	s = s[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < last && h.less(&s[l], &s[m]) {
			m = l
		}
		if l+1 < last && h.less(&s[l+1], &s[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	h.items = s
	return top
}
