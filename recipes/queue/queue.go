package queue

import (
	"context"

	"github.com/zksim/zksim"
)

// Queue is a distributed FIFO queue: ZooKeeper's DistributedQueue recipe.
// Producers add items as persistent sequential nodes; consumers remove the
// one with the lowest sequence number. Items from one producer come out in
// the order it offered them; items from several producers, in the order
// the server received them.
//
// A Queue value is safe for concurrent use; offers and removals through
// one value are serialized (they share its receipt node), so give each
// producer or consumer goroutine its own Queue to run them in parallel.
type Queue struct{ c core }

// New returns the FIFO queue on the directory dir. Nothing is sent to the
// server until a call.
func New(conn zksim.Conn, dir string, opts ...Option) *Queue {
	cfg := newConfig(opts)
	return &Queue{c: core{conn: conn, dir: dir, acl: cfg.acl}}
}

// Offer adds data at the tail of the queue. It blocks for the round trips
// and across connection losses; an offer whose reply was lost is checked
// against the receipt, never repeated. If ctx ends first the item is
// deleted if it is still there (a consumer may have taken it already),
// while the session lives and the client can still act: after an expiry,
// or an authentication failure, an item whose create was applied stays.
func (q *Queue) Offer(ctx context.Context, data []byte) error {
	return q.c.offer(ctx, data, itemName)
}

// Peek returns the data of the head of the queue without removing it, or
// ErrEmpty when the queue is empty. It does not wait for an item.
func (q *Queue) Peek(ctx context.Context) ([]byte, error) {
	return orEmpty(q.c.peek(ctx))
}

// TryTake removes and returns the head of the queue, or returns ErrEmpty
// when the queue is empty: Take without the wait.
func (q *Queue) TryTake(ctx context.Context) ([]byte, error) {
	return orEmpty(q.c.poll(ctx))
}

// Take removes and returns the head of the queue, blocking until there is
// one, ctx is done, or the session can no longer act. While the queue is
// empty it watches the queue directory, so every consumer waiting is woken
// by each new item (ZooKeeper's recipe; one of them gets it).
func (q *Queue) Take(ctx context.Context) ([]byte, error) { return q.c.take(ctx) }

// Len returns the number of items in the queue.
func (q *Queue) Len(ctx context.Context) (int, error) { return q.c.count(ctx) }

// orEmpty turns "no item" into ErrEmpty.
func orEmpty(data []byte, ok bool, err error) ([]byte, error) {
	if err == nil && !ok {
		err = ErrEmpty
	}
	return data, err
}
