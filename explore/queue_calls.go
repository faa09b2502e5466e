package explore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/queue"
)

// The queue machine's calls: the producer's Offer (of a plain Queue's item
// too, Mixed), the consumers' Take and TryTake, Peek and Len, each checked
// as it returns (queue_invariants.go).

func (f *queueFamily) offer(p *client, prio int32, plain bool) {
	f.noteCall(p)
	f.mu.Lock()
	k := f.offered
	f.offered++
	f.prio[k] = prio
	if plain {
		f.prio[k], f.plain[k] = 0, true
	}
	f.mu.Unlock()
	var plainQ *queue.Queue
	if plain {
		plainQ = f.plainQueue(p)
		f.mu.Lock()
		if f.plainSessions == nil {
			f.plainSessions = map[int64]bool{}
		}
		f.plainSessions[p.conn.SessionID()] = true
		f.mu.Unlock()
	}
	p.start("offer", func(ctx context.Context) error {
		beginQueueOp(p)
		conn := began(p)
		data := []byte(fmt.Sprintf("item-%03d", k))
		var err error
		if plainQ != nil {
			err = plainQ.Offer(ctx, data)
		} else {
			err = f.kind.offer(p, ctx, data, prio)
		}
		f.checkSession(p, conn, ctx, "Offer", err)
		f.checkError(p, "Offer", err)
		if err == nil {
			f.mu.Lock()
			delete(f.withdrawn, k) // it was too late to cancel
			f.mu.Unlock()
		}
		if err != nil && ctx.Err() != nil {
			// Withdrawn: the package deletes the item of an Offer whose
			// context ended, if it is still there (while the session the
			// Offer began on lives: a Renewing's new session does not
			// clean up after the old one's call; a client that failed to
			// authenticate can clean up nothing, though the server keeps
			// its session a timeout longer).
			if f.kind.strict && f.w.sessionLive(p) && !p.authFailed() && (conn == nil || conn == began(p)) && slices.Contains(f.present(), k) {
				f.w.violate(kindWithdrawnItemQueued, "p0's Offer of item %d was cancelled, and the item is still queued", k)
			}
		}
		if err == nil {
			f.mu.Lock()
			f.added[k] = true
			f.mu.Unlock()
		}
		return err
	})
}

func (f *queueFamily) take(c *client, wait bool, end string) {
	f.mu.Lock()
	racer := f.racer
	f.mu.Unlock()
	if racer != nil && racer != c {
		return // not while HeldRace's call runs on
	}
	f.noteCall(c)
	q := f.cons[c.idx]
	before := f.present()
	if f.kind.priority {
		f.mu.Lock()
		f.snapshots[c.idx] = before
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.callSeq++
	id := f.callSeq
	f.mu.Unlock()
	f.calls[c.idx] = id
	if !wait {
		f.watchEmpty(id)
	}
	var (
		claimsBefore []string
		solo         bool // no other consumer call under way
	)
	if f.kind.locking && !wait {
		claimsBefore, solo = f.w.children(queueDir+"/claims"), f.solo(c)
	}
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		ctx = withCall(ctx, id)
		var (
			data []byte
			ok   = true
			err  error
		)
		conn := began(c)
		start := c.session() // the session the call begins on
		if conn != nil {
			start = conn
		}
		if lc, isLocking := q.(lockingConsumer); isLocking && end != "" {
			data, ok, err = f.lockingCall(ctx, c, lc.q, wait, end)
			if errors.Is(err, queue.ErrEmpty) {
				ok, err = false, nil
				f.checkEmptyLocking(c, id, before, claimsBefore, solo)
			}
		} else if wait {
			data, err = q.Take(ctx)
			f.checkSession(c, conn, ctx, "Take", err)
		} else {
			data, err = q.TryTake(ctx)
			f.checkSession(c, conn, ctx, "TryTake", err)
			if errors.Is(err, queue.ErrEmpty) {
				ok, err = false, nil
				if f.kind.locking {
					f.checkEmptyLocking(c, id, before, claimsBefore, solo)
				} else {
					f.checkEmpty(c, "TryTake", id)
				}
			}
		}
		f.mu.Lock()
		delete(f.emptyWatch, id)
		f.mu.Unlock()
		f.checkError(c, "Take", err)
		if f.kind.strict && errors.Is(err, zksim.ErrSessionExpired) && f.w.sessionAlive(start) {
			// The package documents ErrSessionExpired for a session that
			// can no longer act, not for one the server still has.
			f.w.violate(kindUnexpectedError, "p%d's Take returned %v, but its session c%d is live", c.idx, err, start.Index())
		}
		if err != nil && data != nil && f.kind.strict && !f.kind.locking {
			f.w.violate(kindDataWithError, "p%d's call returned item data with the error %v", c.idx, err)
		}
		if err != nil {
			f.mu.Lock()
			if k, ok := itemNumber(data); ok && f.kind.locking {
				// Taken, and the Ack failed: it may have been applied.
				f.uncertain[k] = true
			}
			// A call cancelled by the final drain may have removed an
			// item too (it was in a backoff after a lost reply, say):
			// it is excused for the item it removed, and only that one.
			f.failedIDs[id] = true
			if !f.draining {
				f.failed++
			}
			f.mu.Unlock()
			return err
		}
		if ok {
			f.deliver(c, string(data))
		}
		return nil
	})
}

// mixed runs the action Mixed on a priority queue: with the producer and
// the consumer idle, the producer offers a priority item (priority drawn)
// and a plain Queue's item, in an order drawn, each once the one before
// is in, then the consumer calls TryTake. The package documents a plain
// item as of priority 0 (recipes/queue/doc.go), so the one that comes out
// first is the plain one if the other's value is above 0, or equal and
// offered later; deliver checks it, as every delivery.
func (f *queueFamily) mixed(t *rapid.T) {
	w := f.w
	p, c := w.clients[0], w.clients[1]
	if p.paused() || p.busy("") || c.paused() || c.busy("") {
		t.SkipNow()
	}
	prio := rapid.SampledFrom(priorities).Draw(t, "priority")
	plainFirst := rapid.Bool().Draw(t, "plain first")
	for _, plain := range []bool{plainFirst, !plainFirst} {
		f.offer(p, prio, plain)
		for range heldRaceRuns {
			w.runFor(t, 50*time.Millisecond)
			if !p.busy("offer") || w.violated() {
				break
			}
		}
		if p.busy("") {
			return // not this time (a fault struck, say)
		}
	}
	f.take(c, false, "")
	w.runFor(t, 50*time.Millisecond)
}

// priorities are the priorities the producer draws from: the extremes
// and both signs, so that the encoding of priorities in item names is
// tested over its whole range, and a few equal ones.
var priorities = []int32{math.MinInt32, -1, 0, 1, 0x7fff, math.MaxInt32}

// peek starts a Peek by c: the item it returns must be one that was
// offered, and no item present throughout the call may come before it;
// queue.ErrEmpty only if no item was present throughout.
func (f *queueFamily) peek(c *client) {
	q := f.cons[c.idx].(peeker)
	before := f.present()
	f.mu.Lock()
	f.callSeq++
	id := f.callSeq
	f.mu.Unlock()
	f.watchEmpty(id)
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		conn := began(c)
		data, err := q.Peek(ctx)
		f.checkSession(c, conn, ctx, "Peek", err)
		defer func() {
			f.mu.Lock()
			delete(f.emptyWatch, id)
			f.mu.Unlock()
		}()
		if errors.Is(err, queue.ErrEmpty) {
			f.checkEmpty(c, "Peek", id)
			return err
		}
		f.checkError(c, "Peek", err)
		if err != nil {
			return err
		}
		k, ok := itemNumber(data)
		f.mu.Lock()
		offered := f.offered
		f.mu.Unlock()
		if !ok || k >= offered {
			f.w.violate(kindGarbageDelivered, "p%d peeked %q", c.idx, data)
			return nil
		}
		c.note("peeked item %d", k)
		now := f.present()
		for _, i := range before {
			if slices.Contains(now, i) && f.precedes(i, k) {
				f.w.violate(kindPeekOrder, "p%d peeked item %d while item %d, before it, was queued throughout", c.idx, k, i)
			}
		}
		return nil
	})
}

// count starts a Len by c: it must count at least the items present
// throughout the call.
func (f *queueFamily) count(c *client) {
	q := f.cons[c.idx].(counter)
	before := f.present()
	c.start("take", func(ctx context.Context) error {
		beginQueueOp(c)
		conn := began(c)
		n, err := q.Len(ctx)
		f.checkSession(c, conn, ctx, "Len", err)
		f.checkError(c, "Len", err)
		if err != nil {
			return err
		}
		c.note("counted %d items", n)
		now := f.present()
		throughout := 0
		for _, i := range before {
			if slices.Contains(now, i) {
				throughout++
			}
		}
		if n < throughout {
			f.w.violate(kindWrongLength, "p%d counted %d items while %d were queued throughout", c.idx, n, throughout)
		}
		return nil
	})
}
