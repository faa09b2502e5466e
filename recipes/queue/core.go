package queue

import (
	"context"
	"errors"
	"sync"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// core is what the queues share: a directory of items, and the
// exactly-once offer and remove, which record each change in the
// consumer's (or producer's) receipt node in the same multi.
type core struct {
	conn        zksim.Conn
	dir         string
	acl         []zksim.ACL
	prioritized bool

	// mu serializes offers and removes by this value: they share the
	// receipt.
	mu             sync.Mutex
	receipt        string // path of our receipt node, "" until made
	receiptVersion int32  // its version as we last wrote it
	// nextReceipt is the path of the receipt being made: a call that
	// ends while making it (its context done) may have made it, so the
	// next one makes the same path (and finds it ours) rather than leave
	// it behind for the session's life.
	nextReceipt string
}

// list returns the items in delivery order, with a child watch on the
// directory when watch is set (creating the directory if needed, so there
// is something to watch).
func (c *core) list(ctx context.Context, watch bool) ([]item, <-chan zksim.Event, error) {
	for {
		var (
			children []string
			w        <-chan zksim.Event
		)
		err := retry.Do(ctx, c.conn, func() error {
			var err error
			if watch {
				children, _, w, err = c.conn.ChildrenW(ctx, c.dir)
			} else {
				children, err = syncedChildren(ctx, c.conn, c.dir)
			}
			return err
		})
		if errors.Is(err, zksim.ErrNoNode) {
			if !watch {
				return nil, nil, nil
			}
			if err := seqnode.EnsurePath(ctx, c.conn, c.dir, c.acl); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		return parseItems(children, c.prioritized), w, nil
	}
}

// offer adds an item under a protected name, in one multi with a write of
// "offer:<guid>" into our receipt, so that after a lost reply the receipt
// tells whether the item was added, even if a consumer has already taken
// it (which a search for the GUID would miss). If ctx ends first it deletes
// the item if it is still there.
func (c *core) offer(ctx context.Context, data []byte, name string) (err error) {
	guid := seqnode.NewGUID(c.conn)
	p := c.dir + "/" + seqnode.ProtectedName(guid, name)
	mark := "offer:" + guid
	defer func() {
		if err != nil && ctx.Err() != nil {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			_ = seqnode.DeleteGUID(cctx, c.conn, c.dir, guid)
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	for losses := 0; ; {
		if err := c.ensureReceipt(ctx); err != nil {
			return err
		}
		res, err := c.conn.Multi(ctx,
			&zksim.CreateOp{Path: p, Data: data, Mode: zksim.ModePersistentSequential, ACL: c.acl},
			&zksim.SetOp{Path: c.receipt, Data: []byte(mark), Version: c.receiptVersion})
		switch {
		case err == nil:
			c.receiptVersion = res[1].Stat.Version
			return nil
		case errors.Is(err, zksim.ErrConnectionLoss):
			if err := retry.Pause(ctx, c.conn, losses); err != nil {
				return err
			}
			losses++
			applied, err := c.receiptSays(ctx, mark)
			if err != nil || applied {
				return err
			}
		default:
			if err := c.receiptTrouble(ctx, res, err); err != nil {
				return err
			}
		}
	}
}

// peek returns the data of the first item, without removing it.
func (c *core) peek(ctx context.Context) ([]byte, bool, error) {
	for {
		items, _, err := c.list(ctx, false)
		if err != nil || len(items) == 0 {
			return nil, false, err
		}
		for _, it := range items {
			var data []byte
			err := retry.Do(ctx, c.conn, func() error {
				var err error
				data, _, err = c.conn.Get(ctx, c.dir+"/"+it.name)
				return err
			})
			if errors.Is(err, zksim.ErrNoNode) {
				continue // taken meanwhile: the next one
			}
			return data, err == nil, err
		}
	}
}

// poll removes and returns the first item, if there is one.
func (c *core) poll(ctx context.Context) ([]byte, bool, error) {
	for {
		items, _, err := c.list(ctx, false)
		if err != nil || len(items) == 0 {
			return nil, false, err
		}
		data, ok, err := c.removeFirst(ctx, items)
		if err != nil || ok {
			return data, ok, err
		}
	}
}

// take removes and returns the first item, waiting for one. A priority
// queue's take syncs first: its member, lagging behind an Offer that
// returned before the call began, would list the queue without that item
// and hand out a lower-priority one while it waits (a FIFO queue's head
// is the oldest item, which a lagging member lists too).
func (c *core) take(ctx context.Context) ([]byte, error) {
	if c.prioritized {
		err := retry.Do(ctx, c.conn, func() error {
			_, err := c.conn.Sync(ctx, c.dir)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	for {
		items, w, err := c.list(ctx, true)
		if err != nil {
			return nil, err
		}
		data, ok, err := c.removeFirst(ctx, items)
		if err != nil || ok {
			return data, err
		}
		if len(items) > 0 {
			continue // all taken by others meanwhile: list again
		}
		select {
		case ev := <-w:
			if ev.Type == zksim.EventNotWatching {
				return nil, watchEnded(ev)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// removeFirst removes the first of items that is still there.
func (c *core) removeFirst(ctx context.Context, items []item) ([]byte, bool, error) {
	for _, it := range items {
		data, ok, err := c.remove(ctx, it.name)
		if err != nil || ok {
			return data, ok, err
		}
	}
	return nil, false, nil
}

// remove reads and deletes the item called name, and reports false if
// another consumer removed it first. The delete is one multi with a write
// of name into our receipt, so that after a lost reply the receipt tells
// whether the delete was ours.
func (c *core) remove(ctx context.Context, name string) ([]byte, bool, error) {
	p := c.dir + "/" + name
	var data []byte
	err := retry.Do(ctx, c.conn, func() error {
		var err error
		data, _, err = c.conn.Get(ctx, p)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for losses := 0; ; {
		if err := c.ensureReceipt(ctx); err != nil {
			return nil, false, err
		}
		res, err := c.conn.Multi(ctx,
			&zksim.DeleteOp{Path: p, Version: -1},
			&zksim.SetOp{Path: c.receipt, Data: []byte(name), Version: c.receiptVersion})
		switch {
		case err == nil:
			c.receiptVersion = res[1].Stat.Version
			return data, true, nil
		case errors.Is(err, zksim.ErrConnectionLoss):
			if err := retry.Pause(ctx, c.conn, losses); err != nil {
				return nil, false, err
			}
			losses++
			applied, err := c.receiptSays(ctx, name)
			if err != nil {
				return nil, false, err
			}
			if applied {
				return data, true, nil
			}
		case len(res) == 2 && errors.Is(res[0].Err, zksim.ErrNoNode):
			return nil, false, nil // another consumer was first
		default:
			if err := c.receiptTrouble(ctx, res, err); err != nil {
				return nil, false, err
			}
		}
	}
}

// receiptTrouble handles a multi that failed on our receipt, or its parent
// (an empty directory deleted by hand): nil to try again, else the error.
func (c *core) receiptTrouble(ctx context.Context, res []zksim.OpResult, err error) error {
	switch {
	case len(res) == 2 && (errors.Is(res[1].Err, zksim.ErrNoNode) || errors.Is(res[0].Err, zksim.ErrNoNode)):
		c.receipt = "" // deleted by hand: make another (and the directory)
		return nil
	case len(res) == 2 && errors.Is(res[1].Err, zksim.ErrBadVersion):
		// Out of step (written by hand?): learn its version, try again.
		_, err := c.receiptSays(ctx, "")
		return err
	}
	return err
}

// receiptSays reads our receipt after a lost multi reply and reports
// whether the multi was applied: the receipt then holds name at the next
// version. Either way it records the receipt's current version. With name
// "" it only does that. It syncs first: the client may have moved to a
// member of an ensemble that has not applied the multi yet (it never saw
// the multi's zxid, so the member admits it), where the receipt would say
// "not applied" and the call would add the item again (an offer) or lose
// the item it removed (a remove).
func (c *core) receiptSays(ctx context.Context, name string) (bool, error) {
	var (
		data []byte
		st   *zksim.Stat
	)
	err := retry.Do(ctx, c.conn, func() error {
		if _, err := c.conn.Sync(ctx, c.receipt); err != nil {
			return err
		}
		var err error
		data, st, err = c.conn.Get(ctx, c.receipt)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		c.receipt = ""
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if name != "" && st.Version == c.receiptVersion+1 && string(data) == name {
		c.receiptVersion = st.Version
		return true, nil
	}
	c.receiptVersion = st.Version
	return false, nil
}

// ensureReceipt makes our receipt node if we have none: an ephemeral node
// in the queue directory, owned by our session, that only we write. It
// creates the directory if needed.
func (c *core) ensureReceipt(ctx context.Context) error {
	if c.receipt != "" {
		return nil
	}
	if c.nextReceipt == "" {
		c.nextReceipt = c.dir + "/_r_" + seqnode.NewGUID(c.conn)
	}
	owned, st, err := seqnode.CreateOwned(ctx, c.conn, c.nextReceipt, nil, c.acl)
	if err != nil {
		return err
	}
	if !owned {
		c.nextReceipt = ""
		return seqnode.ErrNotOwner
	}
	c.receipt, c.receiptVersion, c.nextReceipt = c.nextReceipt, st.Version, ""
	return nil
}

// count returns the number of items.
func (c *core) count(ctx context.Context) (int, error) {
	items, _, err := c.list(ctx, false)
	return len(items), err
}

// watchEnded turns an EventNotWatching into the error that ended the
// watch.
func watchEnded(ev zksim.Event) error {
	if ev.Err != nil {
		return ev.Err
	}
	return zksim.ErrClosing
}

// syncedChildren lists dir after a sync, for the calls that answer at once
// (TryTake, Peek, Len): on an ensemble a member that lags behind an Offer
// that returned (on any client) would list the queue without its item, and
// such a call would report ErrEmpty for a queue that was not empty at any
// time during the call (ZooKeeper reads are sequentially consistent, not
// linearizable; only a read after a sync sees every write completed before
// it). Take needs no sync: its watch fires when its member applies the
// item it missed. The sync costs one round trip more.
func syncedChildren(ctx context.Context, conn zksim.Conn, dir string) ([]string, error) {
	if _, err := conn.Sync(ctx, dir); err != nil {
		return nil, err
	}
	children, _, err := conn.Children(ctx, dir)
	return children, err
}
