package sim

// prioHeap is the set of sessions of an enabledSet ordered by PCT priority,
// the highest first (the lowest index first among equals), so that a PCT
// step finds the enabled session of highest priority in O(log n) instead
// of looking at every enabled event.
type prioHeap struct {
	sessions *[]*session
	items    []int32 // session indices, a binary heap
	pos      []int32 // pos[i]: 1 + the position of session i in items; 0 if absent
}

// before orders the heap: a before b if a's priority is higher, or equal
// and a's index lower.
func (h *prioHeap) before(a, b int32) bool {
	pa, pb := (*h.sessions)[a].prio, (*h.sessions)[b].prio
	return pa > pb || pa == pb && a < b
}

// top returns the first session; the heap must not be empty.
func (h *prioHeap) top() int { return int(h.items[0]) }

// add puts session i in the heap (it must not be in it).
func (h *prioHeap) add(i int) {
	for len(h.pos) <= i {
		h.pos = append(h.pos, 0)
	}
	h.items = append(h.items, int32(i))
	h.pos[i] = int32(len(h.items))
	h.up(len(h.items) - 1)
}

// remove takes session i out of the heap (it must be in it).
func (h *prioHeap) remove(i int) {
	at := int(h.pos[i]) - 1
	last := len(h.items) - 1
	h.swap(at, last)
	h.items = h.items[:last]
	h.pos[i] = 0
	if at < last {
		h.fixAt(at)
	}
}

// fix restores the order after session i's priority changed (nothing if i
// is not in the heap).
func (h *prioHeap) fix(i int) {
	if i < len(h.pos) && h.pos[i] > 0 {
		h.fixAt(int(h.pos[i]) - 1)
	}
}

func (h *prioHeap) fixAt(at int) {
	if !h.down(at) {
		h.up(at)
	}
}

func (h *prioHeap) swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.pos[h.items[a]] = int32(a + 1)
	h.pos[h.items[b]] = int32(b + 1)
}

func (h *prioHeap) up(at int) {
	for at > 0 {
		parent := (at - 1) / 2
		if !h.before(h.items[at], h.items[parent]) {
			return
		}
		h.swap(at, parent)
		at = parent
	}
}

// down moves the item at position at down to its place and reports whether
// it moved.
func (h *prioHeap) down(at int) bool {
	start := at
	for {
		c := 2*at + 1
		if c >= len(h.items) {
			break
		}
		if r := c + 1; r < len(h.items) && h.before(h.items[r], h.items[c]) {
			c = r
		}
		if !h.before(h.items[c], h.items[at]) {
			break
		}
		h.swap(at, c)
		at = c
	}
	return at > start
}
