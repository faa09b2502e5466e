package sim

// deque is a FIFO queue that reuses its storage.
type deque[T any] struct {
	buf  []T
	head int
}

func (q *deque[T]) len() int { return len(q.buf) - q.head }

func (q *deque[T]) push(v T) {
	if q.head > 0 && q.head == len(q.buf) {
		q.buf, q.head = q.buf[:0], 0
	}
	if q.head > 32 && q.head*2 >= len(q.buf) {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	q.buf = append(q.buf, v)
}

func (q *deque[T]) pop() T {
	v := q.buf[q.head]
	var zero T
	q.buf[q.head] = zero
	q.head++
	return v
}

// insert puts v at position i from the front (0 = front).
func (q *deque[T]) insert(i int, v T) {
	var zero T
	q.buf = append(q.buf, zero)
	at := q.head + i
	copy(q.buf[at+1:], q.buf[at:])
	q.buf[at] = v
}
