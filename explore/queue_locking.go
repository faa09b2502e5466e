package explore

import (
	"context"
	"errors"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/recipes/queue"
)

// The locking queue under the queue machine: its consumers take an item by
// claim and end with Ack or Release, drawn (or hold it until Finish), and
// the Stale action acknowledges or releases an item again.

// lockingConsumer takes an item of a LockingQueue and acknowledges it: the
// item counts as delivered once Ack succeeds. An item it could not
// acknowledge (its call was cancelled, say) it hands back, as the package
// asks: a claim left behind keeps the item from every consumer until the
// session ends.
type lockingConsumer struct{ q *queue.LockingQueue }

func (l lockingConsumer) Take(ctx context.Context) ([]byte, error) {
	it, err := l.q.Take(ctx)
	if err != nil {
		return nil, err
	}
	return it.Data(), ackOrRelease(ctx, it)
}

func (l lockingConsumer) TryTake(ctx context.Context) ([]byte, error) {
	it, err := l.q.TryTake(ctx)
	if err != nil {
		return nil, err
	}
	return it.Data(), ackOrRelease(ctx, it)
}

// Len counts the items, claimed or not.
func (l lockingConsumer) Len(ctx context.Context) (int, error) { return l.q.Len(ctx) }

// lockingEnds are the ways a locking-queue consumer's call ends once it
// has an item: "" is Ack (and Release if the Ack failed, as
// lockingConsumer does); the others exercise Release and the calls on an
// item no longer held ("release cancelled": Release under a done context); "hold" keeps the item until the Finish action (or
// the drain) and then acknowledges it, so that faults and third-party
// deletes strike while it is held. (A second Ack is not drawn: after a lost reply Ack
// takes an item that is gone as acknowledged, so it may succeed.)
var lockingEnds = []string{"", "", "release", "release after ack", "ack after release", "hold", "release cancelled"}

// drawEnd draws how a locking-queue consumer's call ends ("" for other
// queues).
func (f *queueFamily) drawEnd(t *rapid.T) string {
	if !f.kind.strict || !f.kind.locking {
		return ""
	}
	return rapid.SampledFrom(lockingEnds).Draw(t, "end")
}

// lockingCall takes an item of q (Take, or TryTake unless wait) and ends
// the call as end says. It reports whether the item was delivered (acked
// once). Release must hand the item back; a Release after the Ack and an
// Ack after the Release must fail with ErrClaimLost (the item is no longer
// ours), never succeed.
func (f *queueFamily) lockingCall(ctx context.Context, c *client, q *queue.LockingQueue, wait bool, end string) ([]byte, bool, error) {
	var (
		it  *queue.Item
		err error
	)
	f.mu.Lock()
	deletes := f.claimDeletes
	f.mu.Unlock()
	conn := began(c)
	if wait {
		it, err = q.Take(ctx)
		f.checkSession(c, conn, ctx, "Take", err)
	} else {
		it, err = q.TryTake(ctx)
		f.checkSession(c, conn, ctx, "TryTake", err)
	}
	if err != nil {
		return nil, false, err
	}
	if _, ok := itemNumber(it.Data()); !ok {
		f.w.violate(kindItemData, "p%d's Take returned an item with the data %q, which no Offer wrote", c.idx, it.Data())
	}
	f.checkClaimed(c, it, deletes)
	// notOurs checks a call on an item that is no longer ours.
	notOurs := func(op string, err error) {
		switch {
		case err == nil:
			f.w.violate(kindCallOnAnItemNotHeld, "p%d's %s succeeded on an item it no longer held", c.idx, op)
		case !errors.Is(err, queue.ErrClaimLost):
			f.checkError(c, op, err)
		}
	}
	switch end {
	case "release cancelled":
		// Release under a done context, the claim still ours: it fails
		// with the context's error (the package doc), not ErrClaimLost,
		// which would tell the caller there is nothing left to release.
		dctx, cancel := context.WithCancel(ctx)
		cancel()
		owned := f.ownsClaim(c)
		err, again := f.release(dctx, c, it)
		if errors.Is(err, queue.ErrClaimLost) && owned && f.w.sessionLive(c) {
			f.w.violate(kindClaimLostSaid, "p%d's Release under a done context returned %v while its session owned the claim", c.idx, err)
		}
		// The Release that follows, under a live context, is the one
		// that releases the item: its error is the call's (a client that
		// failed to authenticate as it waited out a connection loss, for
		// checkAuthOutcome), not to be dropped.
		return nil, false, again
	case "release", "ack after release":
		if err, _ := f.release(ctx, c, it); err != nil {
			return nil, false, err
		}
		if end == "ack after release" {
			notOurs("Ack after Release", it.Ack(ctx))
		}
		return nil, false, nil
	}
	if end == "hold" {
		ch := make(chan struct{})
		f.mu.Lock()
		f.holds[c.idx] = ch
		f.held[c.idx] = it
		f.mu.Unlock()
		c.note("holds item %s", it.Data())
		select {
		case <-ch:
		case <-ctx.Done():
			f.mu.Lock()
			delete(f.holds, c.idx)
			f.mu.Unlock()
		}
	}
	acked, err := f.finishHold(ctx, c, it)
	if err != nil {
		return it.Data(), false, err
	}
	if !acked {
		return nil, false, nil // released (HeldRace)
	}
	f.noteDone(c, it)
	// The Ack deletes the item and our claim in one multi: it cannot
	// succeed on an item a third party deleted first. (Unless the third
	// party deleted the claim too: after a lost reply, Ack takes a claim
	// and an item both gone for its own multi applied, as the package
	// documents; nobody else was given the item.)
	if k, ok := itemNumber(it.Data()); ok {
		f.mu.Lock()
		gone := f.deleted[k] && !f.claimGone[k]
		f.mu.Unlock()
		if gone {
			f.w.violate(kindAckOfADeletedItem, "p%d's Ack of item %d succeeded, but a third party had deleted the item", c.idx, k)
		}
	}
	if end == "release after ack" {
		notOurs("Release after Ack", it.Release(ctx))
	}
	return it.Data(), true, nil
}

// ownsClaim reports whether c's session owns a claim.
func (f *queueFamily) ownsClaim(c *client) bool {
	for _, name := range f.w.children(queueDir + "/claims") {
		if f.w.owner(queueDir+"/claims/"+name) == c.conn.SessionID() {
			return true
		}
	}
	return false
}

// noteDone records that c acknowledged or released it.
func (f *queueFamily) noteDone(c *client, it *queue.Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done[c.idx] = append(f.done[c.idx], it)
}

// ackOrRelease acknowledges it, or releases it if the Ack failed while
// the claim may still be ours.
func ackOrRelease(ctx context.Context, it *queue.Item) error {
	err := it.Ack(ctx)
	if err != nil && !errors.Is(err, queue.ErrClaimLost) {
		_ = it.Release(context.WithoutCancel(ctx))
	}
	return err
}

var lockingKind = queueKind{
	name:     "locking queue",
	locking:  true,
	strict:   true,
	itemsDir: queueDir + "/items",
	offer: func(c *client, ctx context.Context, data []byte, _ int32) error {
		return c.w.fam.(*queueFamily).producer(c).(lockingConsumer).q.Offer(ctx, data)
	},
	consumer: func(c *client) consumer {
		return lockingConsumer{queue.NewLocking(queueConn(c), queueDir, queue.WithACL(queueACL))}
	},
}

// stale starts an Ack or Release, drawn, on an item an idle consumer
// acknowledged or released before; it must fail with ErrClaimLost.
func (f *queueFamily) stale(t *rapid.T) {
	var cs []*client
	for _, c := range f.consumers() {
		f.mu.Lock()
		n := len(f.done[c.idx])
		f.mu.Unlock()
		if n > 0 {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "stale")
	f.mu.Lock()
	items := f.done[c.idx]
	f.mu.Unlock()
	it := items[rapid.IntRange(0, len(items)-1).Draw(t, "item")]
	op := rapid.SampledFrom([]string{"Ack", "Release"}).Draw(t, "op")
	// "ErrClaimLost at once": without a request, so even under a done
	// context.
	done := rapid.Bool().Draw(t, "done context")
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		if done {
			dctx, cancel := context.WithCancel(ctx)
			cancel()
			ctx = dctx
		}
		var err error
		if op == "Ack" {
			err = it.Ack(ctx)
		} else {
			err = it.Release(ctx)
		}
		switch {
		case err == nil:
			f.w.violate(kindCallOnAnItemNotHeld, "p%d's %s succeeded on item %s, acknowledged or released before", c.idx, op, it.Data())
		case !errors.Is(err, queue.ErrClaimLost) && done:
			f.w.violate(kindCallOnAnItemNotHeld, "p%d's %s on item %s, acknowledged or released before, returned %v, not ErrClaimLost at once", c.idx, op, it.Data(), err)
		case !errors.Is(err, queue.ErrClaimLost):
			f.checkError(c, "stale "+op, err)
		}
		return err
	})
}
