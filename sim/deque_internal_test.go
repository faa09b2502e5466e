package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A deque holds what a slice would, through its inline slot, its spill
// array and the moves between them, and keeps its single item inline.
func TestDequeMatchesSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var q deque[int]
	var want []int
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 4:
			q.push(step)
			want = append(want, step)
		case op < 6 && len(want) > 0:
			if got := q.pop(); got != want[0] {
				t.Fatalf("step %d: pop = %d, want %d", step, got, want[0])
			}
			want = want[1:]
		case op < 7:
			i := rng.IntN(len(want) + 1)
			q.insert(i, step)
			want = slices.Insert(want, i, step)
		case op < 10 && len(want) > 0 && rng.IntN(8) == 0:
			for len(want) > 0 { // drain: back to the inline slot
				q.pop()
				want = want[1:]
			}
		}
		if q.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, q.len(), len(want))
		}
		for i, v := range want {
			if got := q.at(i); got != v {
				t.Fatalf("step %d: at(%d) = %d, want %d", step, i, got, v)
			}
		}
		if len(want) == 1 && &q.buf[q.head] != &q.inl[0] && q.head == 0 && len(q.buf) == 1 {
			t.Fatalf("step %d: a single item pushed on an empty deque is not inline", step)
		}
	}
}

// A single item pushed on an empty deque stays in the deque itself: no
// array is allocated for the common case of one request or one reply in
// flight, and the array a second item needed is reused.
func TestDequeInline(t *testing.T) {
	var q deque[*request]
	r := &request{}
	if n := testing.AllocsPerRun(100, func() {
		q.push(r)
		q.pop()
	}); n != 0 {
		t.Errorf("push and pop of one item: %v allocations, want 0", n)
	}
	q.push(r)
	if &q.buf[0] != &q.inl[0] {
		t.Errorf("one item: not in the inline slot")
	}
	q.push(r)
	q.pop()
	q.pop()
	if n := testing.AllocsPerRun(100, func() {
		q.push(r)
		q.push(r)
		q.insert(1, r)
		q.pop()
		q.pop()
		q.pop()
	}); n != 0 {
		t.Errorf("three items after the spill array was made: %v allocations, want 0", n)
	}
}
