package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// LockingQueue is a FIFO queue with guaranteed delivery, as Curator's
// DistributedQueue with a lock path: a consumer first claims an item with
// an ephemeral node, works on it, and acknowledges it, which deletes the
// item and the claim in one multi. An item is handed to one consumer at a
// time; if that consumer dies before Ack (its session expires or its Conn
// is closed) the claim vanishes with its session and the item goes to the
// next consumer, once.
//
// Consumers that find nothing to claim watch both the items and the claims
// directories, so every waiting consumer is woken by each new item and each
// released claim; one of them gets it.
//
// A LockingQueue value is safe for concurrent use.
type LockingQueue struct {
	conn   zksim.Conn
	items  string
	claims string
	acl    []zksim.ACL
	core   *core // offers and counts on the items directory
}

// NewLocking returns the locking queue on the directory dir.
func NewLocking(conn zksim.Conn, dir string, opts ...Option) *LockingQueue {
	cfg := newConfig(opts)
	items := dir + "/items"
	return &LockingQueue{
		conn: conn, items: items, claims: dir + "/claims", acl: cfg.acl,
		core: &core{conn: conn, dir: items, acl: cfg.acl},
	}
}

// Item is an item claimed by this consumer: it stays in the queue until Ack
// deletes it or Release hands it back.
type Item struct {
	q     *LockingQueue
	name  string
	data  []byte
	token []byte // written in our claim, to tell it from other claims of our session
	// session is the session our claim was made on. A client library
	// that replaces an expired session (Curator's, sim.Renewing) goes on
	// with another: our claim went with the old one, and its path may be
	// another consumer's claim by then.
	session int64
	// done: acknowledged or released by a call that returned nil. The
	// claim is then gone, and its path may be another consumer's claim.
	done atomic.Bool
}

// Data returns the item's data.
func (it *Item) Data() []byte { return it.data }

// Offer adds data at the tail of the queue, as Queue.Offer.
func (q *LockingQueue) Offer(ctx context.Context, data []byte) error {
	return q.core.offer(ctx, data, itemName)
}

// Len returns the number of items in the queue, claimed or not.
func (q *LockingQueue) Len(ctx context.Context) (int, error) {
	return q.core.count(ctx)
}

// Take claims the first unclaimed item and returns it, blocking until
// there is one, ctx is done, or the session can no longer act. The item
// stays in the queue, claimed, until Ack or Release, or until our session
// ends.
func (q *LockingQueue) Take(ctx context.Context) (*Item, error) {
	it, _, err := q.take(ctx, true)
	return it, err
}

// TryTake claims the first unclaimed item if there is one, and returns
// ErrEmpty when every item is claimed or there is none: Take without the
// wait.
func (q *LockingQueue) TryTake(ctx context.Context) (*Item, error) {
	it, ok, err := q.take(ctx, false)
	if err == nil && !ok {
		err = ErrEmpty
	}
	return it, err
}

func (q *LockingQueue) take(ctx context.Context, wait bool) (*Item, bool, error) {
	// The call belongs to the session it began on (recipes/doc.go): one
	// that a client library replaced since (a claim of ours found the item
	// gone, and our session expired as it deleted the claim again) ends
	// the call rather than have it claim on the new session, or report
	// the queue empty, or wait, there.
	session := q.conn.SessionID()
	for {
		items, itemsW, err := q.list(ctx, q.items, wait)
		if err != nil {
			return nil, false, err
		}
		claimed, claimsW, err := q.list(ctx, q.claims, wait)
		if err != nil {
			return nil, false, err
		}
		taken := make(map[string]bool, len(claimed))
		for _, c := range claimed {
			taken[c] = true
		}
		for _, it := range parseItems(items, false) {
			if taken[it.name] {
				continue
			}
			if q.conn.SessionID() != session {
				return nil, false, zksim.ErrSessionExpired
			}
			item, ok, err := q.claim(ctx, it.name)
			if err != nil || ok {
				return item, ok, err
			}
		}
		if q.conn.SessionID() != session {
			return nil, false, zksim.ErrSessionExpired // nor find it empty there
		}
		if !wait {
			return nil, false, nil
		}
		select {
		case ev := <-itemsW:
			if ev.Type == zksim.EventNotWatching {
				return nil, false, watchEnded(ev)
			}
		case ev := <-claimsW:
			if ev.Type == zksim.EventNotWatching {
				return nil, false, watchEnded(ev)
			}
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// list lists dir, with a child watch when watch is set. A missing dir is
// created first when watching (so the watch has a node), else empty.
func (q *LockingQueue) list(ctx context.Context, dir string, watch bool) ([]string, <-chan zksim.Event, error) {
	for {
		var (
			children []string
			w        <-chan zksim.Event
		)
		err := retry.Do(ctx, q.conn, func() error {
			var err error
			if watch {
				children, _, w, err = q.conn.ChildrenW(ctx, dir)
			} else {
				children, err = syncedChildren(ctx, q.conn, dir)
			}
			return err
		})
		if errors.Is(err, zksim.ErrNoNode) {
			if !watch {
				return nil, nil, nil
			}
			if err := seqnode.EnsurePath(ctx, q.conn, dir, q.acl); err != nil {
				return nil, nil, err
			}
			continue
		}
		return children, w, err
	}
}

// claim tries to claim the item called name: it creates the ephemeral node
// claims/name holding a fresh token. It reports false if another consumer
// has it, or if the item is already gone.
func (q *LockingQueue) claim(ctx context.Context, name string) (_ *Item, ok bool, err error) {
	it := &Item{q: q, name: name, token: []byte(seqnode.NewGUID(q.conn))}
	claim := q.claims + "/" + name
	// mayBeOurs: a create of ours may have made the claim. On failure such
	// a claim must be deleted, whatever ended the call: a claim of our live
	// session left behind would keep the item from every consumer until
	// the session ends. A create cancelled in flight, or whose reply was
	// lost, may still have been applied. release checks our token first.
	// A cleanup that finds the client failed to authenticate ends the
	// call with ErrAuthFailed, even one that would have gone on (the item
	// was gone): the client can do nothing more (package recipes), and a
	// TryTake must not report the queue empty as if it could.
	mayBeOurs := false
	defer func() {
		if (err != nil || !ok) && mayBeOurs {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			if rerr := it.release(cctx); err == nil && errors.Is(rerr, zksim.ErrAuthFailed) {
				err = rerr
			}
		}
	}()
	for losses := 0; ; {
		before := mayBeOurs
		mayBeOurs = true
		it.session = q.conn.SessionID()
		_, err := q.conn.Create(ctx, claim, it.token, zksim.ModeEphemeral, q.acl)
		if errors.Is(err, zksim.ErrNodeExists) {
			// Ours if a create of ours whose reply was lost made it.
			mine, err := it.claimIsMine(ctx)
			if err != nil {
				return nil, false, err
			}
			if !mine {
				mayBeOurs = false // the claim is another's: ours never was
				return nil, false, nil
			}
		} else if errors.Is(err, zksim.ErrConnectionLoss) {
			if err := retry.Pause(ctx, q.conn, losses); err != nil {
				return nil, false, err
			}
			losses++
			continue
		} else if errors.Is(err, zksim.ErrNoNode) {
			mayBeOurs = false // no claims directory, no claim
			if err := seqnode.EnsurePath(ctx, q.conn, q.claims, q.acl); err != nil {
				return nil, false, err
			}
			continue
		} else if err != nil {
			if ctx.Err() == nil {
				mayBeOurs = before // refused: this create made nothing
			}
			return nil, false, err
		}
		break
	}
	err = retry.Do(ctx, q.conn, func() error {
		var err error
		it.data, _, err = q.conn.Get(ctx, q.items+"/"+name)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return nil, false, nil // acknowledged by its consumer meanwhile
	}
	if err != nil {
		return nil, false, err
	}
	return it, true, nil
}

// claimIsMine reports whether the claim node exists, is owned by our
// session and holds our token. It syncs first: on an ensemble our member
// may lag behind a delete of the claim (a third party's, or our own whose
// reply was lost) and still serve it, and the answer decides whether a
// call reports the claim lost (Release), takes its lost Ack for applied
// (Ack) or leaves a claim of ours behind (claim).
func (it *Item) claimIsMine(ctx context.Context) (bool, error) {
	var (
		data []byte
		st   *zksim.Stat
	)
	p := it.q.claims + "/" + it.name
	err := retry.Do(ctx, it.q.conn, func() error {
		if _, err := it.q.conn.Sync(ctx, p); err != nil {
			return err
		}
		var err error
		data, st, err = it.q.conn.Get(ctx, p)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return st.EphemeralOwner == it.q.conn.SessionID() && string(data) == string(it.token), nil
}

// Ack acknowledges the item: it and our claim are deleted in one multi, so
// no other consumer will get it. It waits out connection losses (after a
// lost reply it syncs and checks whether its claim and the item are gone).
// It returns an error matching ErrClaimLost if our claim is gone (session
// expired, or the claim was deleted): the item then belongs to another
// consumer. A Conn that went on with a new session once ours expired (a
// client library that renews sessions) has lost the claim: ErrClaimLost
// with ErrSessionExpired, and nothing is deleted. An item already
// acknowledged or released gets ErrClaimLost at once: the claim's path may
// be another consumer's claim by then.
func (it *Item) Ack(ctx context.Context) (err error) {
	if it.done.Load() {
		return ErrClaimLost
	}
	defer func() {
		if err == nil {
			it.done.Store(true)
		}
	}()
	q := it.q
	itemPath, claimPath := q.items+"/"+it.name, q.claims+"/"+it.name
	for losses := 0; ; {
		// On another session than our claim's, the multi would delete
		// whatever claim is at our claim's path, another consumer's
		// perhaps.
		if err := it.sameSession(); err != nil {
			return err
		}
		res, err := q.conn.Multi(ctx,
			&zksim.DeleteOp{Path: claimPath, Version: -1},
			&zksim.DeleteOp{Path: itemPath, Version: -1})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zksim.ErrConnectionLoss):
			// Bound to our claim's session: a session replaced since the
			// multi returns ErrSessionExpired here, not a check on the new
			// session that takes another consumer's Ack for ours.
			if err := retry.PauseOn(ctx, q.conn, it.session, losses); err != nil {
				return claimLost(err)
			}
			losses++
			mine, err := it.claimIsMine(ctx)
			if err != nil {
				return claimLost(err)
			}
			if !mine {
				// Our claim is gone: either our multi deleted it with the
				// item, or we lost it.
				if gone, err := it.itemGone(ctx); err != nil || gone {
					return claimLost(err)
				}
				return ErrClaimLost
			}
		case len(res) == 2 && errors.Is(res[0].Err, zksim.ErrNoNode):
			return ErrClaimLost
		case len(res) == 2 && errors.Is(res[1].Err, zksim.ErrNoNode):
			it.cleanup(ctx) // the item is gone: our claim must not stay
			return ErrClaimLost
		default:
			return claimLost(err)
		}
	}
}

// sameSession returns ErrClaimLost with ErrSessionExpired once our Conn
// runs on another session than the one our claim was made on (a client
// library that replaced an expired session): the claim is gone.
func (it *Item) sameSession() error {
	if it.q.conn.SessionID() != it.session {
		return claimLost(zksim.ErrSessionExpired)
	}
	return nil
}

// itemGone reports whether the item no longer exists.
func (it *Item) itemGone(ctx context.Context) (bool, error) {
	var ok bool
	err := retry.Do(ctx, it.q.conn, func() error {
		var err error
		ok, _, err = it.q.conn.Exists(ctx, it.q.items+"/"+it.name)
		return err
	})
	return !ok, err
}

// claimLost wraps err (nil when the ack was in fact applied) so that a
// session that can no longer act also matches ErrClaimLost.
func claimLost(err error) error {
	if retry.Final(err) {
		return fmt.Errorf("%w: %w", ErrClaimLost, err)
	}
	return err
}

// Release hands the item back without acknowledging it: our claim is
// deleted and the next consumer gets the item. It waits out connection
// losses. It returns ErrClaimLost if our claim was already gone when the
// call began (session expired, or the claim deleted: it syncs before it
// looks, so a member of an ensemble that lags behind the delete does not
// hide it) or went before our delete reached it, and at once if the item
// was already acknowledged or released. A Conn that went on with a new
// session once ours expired gets ErrClaimLost with ErrSessionExpired, and
// nothing is deleted. After a lost reply of its delete, a claim found gone
// is taken for deleted by us (see the known limit of the package doc).
func (it *Item) Release(ctx context.Context) (err error) {
	if it.done.Load() {
		return ErrClaimLost
	}
	defer func() {
		if err == nil {
			it.done.Store(true)
		}
	}()
	if err := it.sameSession(); err != nil {
		return err
	}
	mine, err := it.claimIsMine(ctx)
	if err != nil {
		return claimLost(err)
	}
	if !mine {
		return ErrClaimLost
	}
	return it.deleteClaim(ctx)
}

// deleteClaim deletes our claim, which claimIsMine just found ours, for
// Release. ZooKeeper applies a delete at the leader, so ErrNoNode from the
// first one means the claim was deleted by someone else (or went with our
// session) after our look: lost. After a connection loss our delete may
// have been applied with its reply lost; a claim found gone then is taken
// for deleted by us, a claim still ours is deleted again.
func (it *Item) deleteClaim(ctx context.Context) error {
	q := it.q
	p := q.claims + "/" + it.name
	for losses := 0; ; {
		if err := it.sameSession(); err != nil {
			return err
		}
		err := q.conn.Delete(ctx, p, -1)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zksim.ErrNoNode):
			if losses == 0 {
				return ErrClaimLost
			}
			return nil // our delete whose reply was lost was applied
		case errors.Is(err, zksim.ErrConnectionLoss):
			// Bound to our claim's session, as Ack's wait.
			if err := retry.PauseOn(ctx, q.conn, it.session, losses); err != nil {
				return claimLost(err)
			}
			losses++
			mine, err := it.claimIsMine(ctx)
			if err != nil {
				return claimLost(err)
			}
			if !mine {
				return nil // deleted by our lost delete, as far as we can tell
			}
		default:
			return claimLost(err)
		}
	}
}

// release deletes our claim if it is ours. Between the check and the
// delete the claim cannot change hands: it is ours until our session ends,
// and a session that ended cannot delete.
func (it *Item) release(ctx context.Context) error {
	mine, err := it.claimIsMine(ctx)
	if err != nil || !mine {
		return err
	}
	return seqnode.DeleteOwned(ctx, it.q.conn, it.q.claims+"/"+it.name)
}

// cleanup deletes our claim, under retry.CleanupContext: whatever ended
// the call (its ctx done meanwhile), a claim of our live session must not
// stay behind once we report it lost.
func (it *Item) cleanup(ctx context.Context) {
	cctx, cancel := retry.CleanupContext(ctx)
	defer cancel()
	_ = it.release(cctx)
}
