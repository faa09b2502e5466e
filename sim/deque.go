package sim

// deque is a FIFO queue that reuses its storage. While it holds at most
// one item the item lives in the deque itself (inl), not in an array of
// its own: a session's queues are part of the session's record, so a step
// that pops a request or a reply reads memory the step touches anyway
// (with thousands of clients, another array would be one more cache miss
// a step). A deque must not be copied once used.
type deque[T any] struct {
	buf   []T // buf[head:] are the items; buf is inl[:] or spill
	head  int
	inl   [1]T
	spill []T // the array used when more than one item was held, kept for reuse
}

func (q *deque[T]) len() int { return len(q.buf) - q.head }

func (q *deque[T]) push(v T) {
	q.reset()
	if q.head > 32 && q.head*2 >= len(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.grow()
	q.buf = append(q.buf, v)
	q.keep()
}

// reset puts an empty deque back on its inline slot.
func (q *deque[T]) reset() {
	if q.head == len(q.buf) {
		q.buf, q.head = q.inl[:0], 0
	}
}

// grow moves the items from the inline slot to spill when the slot is
// full, so that the append after it does not allocate while spill has room.
func (q *deque[T]) grow() {
	if len(q.buf) < cap(q.buf) || cap(q.buf) != len(q.inl) {
		return
	}
	n := len(q.buf) - q.head
	if cap(q.spill) <= n {
		q.spill = make([]T, 0, max(4, 2*n))
	}
	s := append(q.spill[:0], q.buf[q.head:]...)
	clear(q.buf)
	q.buf, q.head = s, 0
}

// keep remembers the array append may have grown as spill.
func (q *deque[T]) keep() {
	if cap(q.buf) > len(q.inl) {
		q.spill = q.buf[:0]
	}
}

func (q *deque[T]) pop() T {
	v := q.buf[q.head]
	var zero T
	q.buf[q.head] = zero
	q.head++
	return v
}

// at returns the item at position i from the front (0 = front); i < len().
func (q *deque[T]) at(i int) T { return q.buf[q.head+i] }

// insert puts v at position i from the front (0 = front), i <= len().
func (q *deque[T]) insert(i int, v T) {
	q.reset()
	var zero T
	q.grow()
	q.buf = append(q.buf, zero)
	q.keep()
	at := q.head + i
	copy(q.buf[at+1:], q.buf[at:])
	q.buf[at] = v
}
