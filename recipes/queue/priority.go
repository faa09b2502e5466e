package queue

import (
	"context"

	"github.com/zksim/zksim"
)

// PriorityQueue is a distributed priority queue, as Curator's
// DistributedPriorityQueue: items come out lowest priority value first,
// and in offer order (sequence number) within one priority. The priority is
// part of the item's name, so ordering costs no extra reads. An item
// offered with a lower value than the head overtakes the items already
// waiting.
//
// It has the operations of Queue and the same guarantees; a PriorityQueue
// value is safe for concurrent use.
type PriorityQueue struct{ c core }

// NewPriority returns the priority queue on the directory dir.
func NewPriority(conn zksim.Conn, dir string, opts ...Option) *PriorityQueue {
	cfg := newConfig(opts)
	return &PriorityQueue{c: core{conn: conn, dir: dir, acl: cfg.acl, prioritized: true}}
}

// Offer adds data with priority (lower values come out first). It blocks
// as Queue.Offer.
func (q *PriorityQueue) Offer(ctx context.Context, data []byte, priority int32) error {
	return q.c.offer(ctx, data, priorityName(priority))
}

// Peek returns the data of the head without removing it, or ErrEmpty when
// the queue is empty.
func (q *PriorityQueue) Peek(ctx context.Context) ([]byte, error) {
	return orEmpty(q.c.peek(ctx))
}

// TryTake removes and returns the head, or returns ErrEmpty when the queue
// is empty: Take without the wait.
func (q *PriorityQueue) TryTake(ctx context.Context) ([]byte, error) {
	return orEmpty(q.c.poll(ctx))
}

// Take removes and returns the head, blocking as Queue.Take. It syncs
// first, so that it sees every item offered before it began (see the
// package doc).
func (q *PriorityQueue) Take(ctx context.Context) ([]byte, error) { return q.c.take(ctx) }

// Len returns the number of items in the queue.
func (q *PriorityQueue) Len(ctx context.Context) (int, error) { return q.c.count(ctx) }
