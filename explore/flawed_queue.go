package explore

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/queue"
)

// fifoTaker is the consumer loop the flawed FIFO consumers share, each
// with its own way to take one item (take): list the queue directory (and
// make it if it is missing), try the items in sequence order, and wait for
// a child event when nothing was taken and the call waits. take returns the
// item's data and true if it took the item, false to go on to the next
// one; a connection loss (from take or the listing) has the loop wait for
// the connection and list again, and any other error ends the call.
type fifoTaker struct {
	c    *client
	take func(ctx context.Context, conn zksim.Conn, path string) ([]byte, bool, error)
}

func (f fifoTaker) TryTake(ctx context.Context) ([]byte, error) {
	data, ok, err := f.next(ctx, false)
	if err == nil && !ok {
		err = queue.ErrEmpty
	}
	return data, err
}

func (f fifoTaker) Take(ctx context.Context) ([]byte, error) {
	data, _, err := f.next(ctx, true)
	return data, err
}

func (f fifoTaker) next(ctx context.Context, wait bool) ([]byte, bool, error) {
	conn := f.c.conn
	for {
		names, _, w, err := conn.ChildrenW(ctx, queueDir)
		if errors.Is(err, zksim.ErrNoNode) {
			_, err = conn.Create(ctx, queueDir, nil, zksim.ModePersistent, zksim.OpenACL())
			if err == nil || errors.Is(err, zksim.ErrNodeExists) {
				continue
			}
		}
		if err == nil {
			names = slices.DeleteFunc(names, func(n string) bool { return !strings.Contains(n, "qn-") })
			slices.SortFunc(names, compareSeq)
			for _, n := range names {
				var (
					data []byte
					took bool
				)
				data, took, err = f.take(ctx, conn, queueDir+"/"+n)
				if took || err != nil {
					if err == nil {
						return data, true, nil
					}
					break
				}
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

// sloppyTake is the take of the queue consumer the literature warns about:
// it reads the item and deletes it, and returns the item even when the
// delete failed because another consumer had taken it first. Two consumers
// then deliver the same item.
func sloppyTake(ctx context.Context, conn zksim.Conn, p string) ([]byte, bool, error) {
	data, _, err := conn.Get(ctx, p)
	if errors.Is(err, zksim.ErrNoNode) {
		return nil, false, nil // taken: the next one
	}
	if err != nil {
		return nil, false, err
	}
	_ = conn.Delete(ctx, p, -1) // the mistake: the result is ignored
	return data, true, nil
}

// lossyTake is the take of a FIFO-queue consumer that loses a remove: it
// deletes the item and, when the delete fails with a connection loss,
// starts over from the listing (fifoTaker does), as if nothing had
// happened. But the delete may have been applied (its reply was lost): the
// item is gone, and nobody delivers it.
func lossyTake(ctx context.Context, conn zksim.Conn, p string) ([]byte, bool, error) {
	data, _, err := conn.Get(ctx, p)
	if err == nil {
		err = conn.Delete(ctx, p, -1)
	}
	switch {
	case err == nil:
		return data, true, nil
	case errors.Is(err, zksim.ErrNoNode):
		return nil, false, nil // taken by another consumer: the next one
	}
	return nil, false, err // the mistake, for a connection loss on the delete
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
		return fifoTaker{c, lossyTake}
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

// sloppyKind is the FIFO queue with sloppy consumers (the producer is the
// real queue).
var sloppyKind = queueKind{
	name:     "FIFO queue, sloppy consumers",
	itemsDir: queueDir,
	offer:    fifoKind.offer,
	consumer: func(c *client) consumer {
		if c.idx == 0 {
			return queue.New(c.recipeConn(), queueDir, queue.WithACL(queueACL))
		}
		return fifoTaker{c, sloppyTake}
	},
}
