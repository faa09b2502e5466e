package explore

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/queue"
)

// lossyConsumer is a FIFO-queue consumer that loses a remove: it deletes
// the first item and, when the delete fails with a connection loss, starts
// over from the listing, as if nothing had happened. But the delete may
// have been applied (its reply was lost): the item is gone, and nobody
// delivers it.
type lossyConsumer struct{ c *client }

func (l lossyConsumer) TryTake(ctx context.Context) ([]byte, error) {
	data, ok, err := l.next(ctx, false)
	if err == nil && !ok {
		err = queue.ErrEmpty
	}
	return data, err
}

func (l lossyConsumer) Take(ctx context.Context) ([]byte, error) {
	data, _, err := l.next(ctx, true)
	return data, err
}

func (l lossyConsumer) next(ctx context.Context, wait bool) ([]byte, bool, error) {
	conn := l.c.conn
	for {
		names, _, w, err := conn.ChildrenW(ctx, queueDir)
		if errors.Is(err, zksim.ErrNoNode) {
			_, err = conn.Create(ctx, queueDir, nil, zksim.ModePersistent, zksim.OpenACL())
			if err == nil || errors.Is(err, zksim.ErrNodeExists) {
				continue
			}
		}
		if err != nil {
			if !errors.Is(err, zksim.ErrConnectionLoss) {
				return nil, false, err
			}
			if err := waitConnected(ctx, conn); err != nil {
				return nil, false, err
			}
			continue
		}
		names = slices.DeleteFunc(names, func(n string) bool { return !strings.Contains(n, "qn-") })
		slices.SortFunc(names, compareSeq)
		again := false
		for _, n := range names {
			data, _, err := conn.Get(ctx, queueDir+"/"+n)
			if errors.Is(err, zksim.ErrNoNode) {
				continue // taken: the next one
			}
			if err == nil {
				err = conn.Delete(ctx, queueDir+"/"+n, -1)
				if err == nil {
					return data, true, nil
				}
				if errors.Is(err, zksim.ErrNoNode) {
					continue // another consumer took it
				}
			}
			if !errors.Is(err, zksim.ErrConnectionLoss) {
				return nil, false, err
			}
			again = true // the mistake: the delete may have been applied
			break
		}
		if again {
			if err := waitConnected(ctx, conn); err != nil {
				return nil, false, err
			}
			continue
		}
		if !wait {
			return nil, false, nil
		}
		select {
		case <-w:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// lossyKind is the FIFO queue with lossy consumers (the producer is the
// real queue).
var lossyKind = queueKind{
	name:     "FIFO queue, lossy consumers",
	itemsDir: queueDir,
	offer:    fifoKind.offer,
	consumer: func(c *client) consumer {
		if c.idx == 0 {
			return queue.New(c.conn, queueDir)
		}
		return lossyConsumer{c}
	},
}

// eagerConsumer takes an item of a LockingQueue and deletes the item's
// node itself before it hands the item back (its claim) and returns it:
// the item is gone before it is acknowledged, so a consumer that fails in
// between (cancelled, its session expired, a lost reply) loses it.
type eagerConsumer struct {
	c *client
	q *queue.LockingQueue
}

func (e eagerConsumer) Take(ctx context.Context) ([]byte, error) {
	it, err := e.q.Take(ctx)
	if err != nil {
		return nil, err
	}
	return e.consume(ctx, it)
}

func (e eagerConsumer) TryTake(ctx context.Context) ([]byte, error) {
	it, err := e.q.TryTake(ctx)
	if err != nil {
		return nil, err
	}
	return e.consume(ctx, it)
}

func (e eagerConsumer) consume(ctx context.Context, it *queue.Item) ([]byte, error) {
	conn := e.c.conn
	dir := queueDir + "/items"
	names, _, err := conn.Children(ctx, dir)
	if err != nil {
		_ = it.Release(context.WithoutCancel(ctx)) // the item is still there
		return nil, err
	}
	for _, n := range names {
		data, _, err := conn.Get(ctx, dir+"/"+n)
		if err != nil || string(data) != string(it.Data()) {
			continue
		}
		if err := conn.Delete(ctx, dir+"/"+n, -1); err != nil {
			_ = it.Release(context.WithoutCancel(ctx))
			return nil, err // the mistake: the item may be gone already
		}
		break
	}
	// (Released under a context that cannot be cancelled, as above: a
	// claim left behind by a cancelled call would be a second mistake.)
	if err := it.Release(context.WithoutCancel(ctx)); err != nil && !errors.Is(err, queue.ErrClaimLost) {
		return nil, err // the mistake: the item is gone, unacknowledged
	}
	return it.Data(), nil
}

// eagerKind is the locking queue with eager consumers.
var eagerKind = queueKind{
	name:     "locking queue, delete before Ack",
	locking:  true,
	itemsDir: queueDir + "/items",
	offer:    lockingKind.offer,
	consumer: func(c *client) consumer {
		if c.idx == 0 {
			return lockingKind.consumer(c)
		}
		return eagerConsumer{c: c, q: queue.NewLocking(c.conn, queueDir)}
	},
}
