package explore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// The invariants of the real locks' API (lock_api.go): the results of the
// calls, as each returns, and the hold states after every step
// (checkHolds, which lockFamily.check calls):
//
//   - what an acquisition returned: nil means a new hold (a new Key, the
//     node's czxid as Token, the node's data as WithData set it; on an
//     object the process kept, a Key other than its last hold's and a
//     larger Token); an error leaves no hold (a new object: NotHeld, no Key,
//     token 0; a kept one: the state, Key and Token of its last hold); ErrLocked and ErrNoLease
//     come only from a try, and only when another node could block it at
//     some moment of the call; Lock and TryLock while holding return
//     ErrAlreadyHeld at once, and Unlock with nothing held ErrNotHeld;
//   - what a release returned: nil means the hold has ended (Lost or
//     Released) and its node is gone; a hold whose session ended counts
//     as released, so a release never returns ErrSessionExpired or
//     ErrClosing;
//   - hold states tell the truth: Held only while connected with the
//     node ours, Doubtful only while the connection is down and for at
//     most the session timeout, Lost and Released for good; Watch and
//     Done agree with State (see checkHolds).

// lastHold is what an object the process kept said of its last hold
// before it acquired again.
type lastHold struct {
	st    recipes.HoldState
	key   string
	token int64
}

// checkAcquired checks what an acquisition of a new hold returned; before
// is what h said of its last hold, nil for a new object.
func (f *lockFamily) checkAcquired(c *client, conn *sim.Conn, h apiHold, via string, data []byte, before *lastHold, err error) {
	w := f.w
	lc := f.cs[c.idx]
	switch {
	case errors.Is(err, h.refusal()):
		if via != "Try" {
			w.violate(kindAcquireResult, "p%d's %s returned %v: only a try may", c.idx, via, err)
		} else if !lc.api.contended.Load() {
			w.violate(kindAcquireResult, "p%d's try returned %v though nothing could block it during the call", c.idx, err)
		}
	case errors.Is(err, lock.ErrAlreadyHeld):
		w.violate(kindAcquireResult, "p%d's %s of a new lock returned %v", c.idx, via, err)
	}
	if err != nil && !errors.Is(err, h.refusal()) && !errors.Is(err, context.Canceled) &&
		!errors.Is(err, zksim.ErrSessionExpired) && !errors.Is(err, zksim.ErrClosing) && !errors.Is(err, zksim.ErrAuthFailed) &&
		!(f.kind.name == semaphoreName && errors.Is(err, recipes.ErrForeignNodes)) {
		// The package doc's list: ctx.Err(), an expired session, a closed
		// Conn, a failed authentication (recipes' doc; ErrAlreadyHeld is
		// checked above); and a semaphore's ErrForeignNodes, which
		// semaphoreAPI.returned checks.
		w.violate(kindAcquireResult, "p%d's %s returned %v: not ctx.Err(), ErrSessionExpired, ErrClosing or ErrAuthFailed", c.idx, via, err)
	}
	// And the error names what happened.
	switch {
	case errors.Is(err, zksim.ErrClosing) && conn.State() != zksim.StateClosed && w.ctx.Err() == nil:
		w.violate(kindAcquireResult, "p%d's %s returned %v, its Conn %v", c.idx, via, err, conn.State())
	case errors.Is(err, zksim.ErrSessionExpired) && conn.State() != zksim.StateExpired && conn.State() != zksim.StateClosed && w.ctx.Err() == nil:
		w.violate(kindAcquireResult, "p%d's %s returned %v, its Conn %v", c.idx, via, err, conn.State())
	case errors.Is(err, zksim.ErrAuthFailed) && !f.w.sw.AuthFailed(conn.Index()):
		w.violate(kindAcquireResult, "p%d's %s returned %v, its Conn %v", c.idx, via, err, conn.State())
	}
	st, key, token := h.State(), h.Key(), h.Token()
	if err != nil {
		// A new object has no hold; a kept one still tells of its last
		// hold, which had ended ("the current or last hold", the
		// recipes' Key and Token).
		want := lastHold{st: recipes.NotHeld}
		if before != nil {
			want = *before
		}
		if st != want.st || key != want.key || token != want.token {
			w.violate(kindAcquireResult, "p%d's %s returned %v but left a hold: %v, key %q, token %#x (before the call: %v, key %q, token %#x)", c.idx, via, err, st, key, token, want.st, want.key, want.token)
		}
		return
	}
	if before != nil && (key == before.key || token <= before.token) {
		w.violate(kindAcquireResult, "p%d's %s returned nil but its hold is the last one's: key %q, token %#x", c.idx, via, key, token)
		return
	}
	if st == recipes.NotHeld || key == "" || token <= 0 {
		w.violate(kindAcquireResult, "p%d's %s returned nil without a hold: %v, key %q, token %#x", c.idx, via, st, key, token)
		return
	}
	got, stat, gerr := w.observer.Get(w.ctx, key)
	if gerr != nil || stat.EphemeralOwner != conn.SessionID() {
		return // already gone: the hold is (or will be) Lost
	}
	if stat.Czxid != token || string(got) != string(data) {
		w.violate(kindAcquireResult, "p%d's hold %s: token %#x, data %q; its node: czxid %#x, data %q", c.idx, key, token, data, stat.Czxid, got)
	}
}

// checkReleased: a release that returned nil ended the hold and left no
// node of the session behind.
func (f *lockFamily) checkReleased(c *client, conn *sim.Conn, h apiHold, via string) {
	w := f.w
	if st := h.State(); !st.Final() {
		w.violate(kindReleaseResult, "p%d's %s returned nil, the hold still %v", c.idx, via, st)
	}
	if _, err := h.Guard(); !errors.Is(err, lock.ErrNotHeld) {
		w.violate(kindReleaseResult, "p%d's Guard after its %s returned %v, want ErrNotHeld", c.idx, via, err)
	}
	if w.owner(h.Key()) == conn.SessionID() && slices.Contains(w.sw.Server().SessionIDs(), conn.SessionID()) && conn.State() != zksim.StateClosed {
		w.violate(kindReleaseResult, "p%d's %s returned nil, its node %s still there", c.idx, via, h.Key())
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// doubtfulSlack is how long past the session timeout a hold may stay
// Doubtful: the lost timer runs from when the client heard of the
// disconnection.
const doubtfulSlack = 50 * time.Millisecond

// checkHolds checks, after every step, that the hold states of the API
// holds tell the truth (see the top of this file), and notes the nodes that
// could refuse a try under way.
func (f *lockFamily) checkHolds(owners map[int64]*client) {
	w := f.w
	if f.kind.newAPI != nil && f.checkState {
		f.checkProtected(owners)
	}
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		h, ok := lc.h.(apiHold)
		if !ok {
			continue
		}
		if lc.api.trying.Load() && !lc.api.contended.Load() && h.blocked(w, lc.conn.SessionID(), lc.api.before) {
			lc.api.contended.Store(true)
		}
		st := h.State()
		// (A kept object's next hold, with a key of its own, is a new
		// hold.)
		if key := h.Key(); lc.api.h == h && lc.api.key == key {
			if lc.api.last.Final() && st != lc.api.last || lc.api.last != recipes.NotHeld && st == recipes.NotHeld {
				w.violate(kindHoldState, "p%d's hold went from %v to %v", c.idx, lc.api.last, st)
			}
		} else {
			lc.api.h, lc.api.key, lc.api.last, lc.api.doubtful, lc.api.since, lc.api.released = h, key, recipes.NotHeld, -1, -1, false
		}
		switch now := w.sw.Now(); {
		case lc.conn.State() == zksim.StateConnected:
			lc.api.downFrom = -1
		case lc.api.downFrom < 0:
			lc.api.downFrom = now
		case now-lc.api.downFrom >= lc.conn.SessionTimeout():
			lc.api.longDown = true
		}
		f.checkEnd(c, lc, h, st, owners)
		switch {
		case st != recipes.Doubtful:
			lc.api.since = -1
		case lc.api.since < 0:
			lc.api.since = w.sw.Now()
		}
		lc.api.last = st
		ws, ch := h.Watch()
		open := st == recipes.Held || st == recipes.Doubtful
		if ws != st || isClosed(ch) == open || isClosed(h.Done()) == open {
			w.violate(kindHoldState, "p%d's hold is %v; Watch says %v, its channel closed %v, Done closed %v", c.idx, st, ws, isClosed(ch), isClosed(h.Done()))
		}
		connected := lc.conn.State() == zksim.StateConnected
		i := lc.conn.Index()
		switch {
		case st != recipes.Doubtful || connected || w.sw.Paused(i) || w.inFlightAt(i):
			// The lost timer runs while disconnected only, from when the
			// holder heard of it: a request of its own in flight may
			// hold it up.
			lc.api.doubtful = -1
		case lc.api.doubtful < 0:
			lc.api.doubtful = w.sw.Now()
		}
		if w.sw.Paused(i) {
			continue
		}
		if d := w.sw.Now() - lc.api.doubtful; lc.api.doubtful >= 0 && d > lc.conn.SessionTimeout()+doubtfulSlack {
			w.violate(kindHoldState, "p%d's hold has been Doubtful and disconnected for %v, past the session timeout", c.idx, d)
		}
		if w.inFlightAt(i) {
			continue // it has not heard all the server has to say
		}
		switch {
		case st == recipes.Held && !(connected && f.owned(lc, h, owners)):
			w.violate(kindHoldState, "p%d's hold says Held; connection %v, node %s ours %v", c.idx, lc.conn.State(), h.Key(), f.owned(lc, h, owners))
		case st == recipes.Doubtful && connected:
			w.violate(kindHoldState, "p%d's hold says Doubtful though connected, with nothing in flight", c.idx)
		}
	}
}

// checkEnd: a hold ends for a reason. Released only once its holder
// called a release; Lost only when its node is gone (deleted, or gone
// with the session), its Conn expired or closed, or it stayed Doubtful
// for the session timeout (the package doc's list).
func (f *lockFamily) checkEnd(c *client, lc *lockClient, h apiHold, st recipes.HoldState, owners map[int64]*client) {
	w := f.w
	if st == lc.api.last {
		return
	}
	switch st {
	case recipes.Released:
		if !lc.api.released && !c.busy("release") {
			w.violate(kindHoldState, "p%d's hold became Released, though no release was called", c.idx)
		}
	case recipes.Lost:
		cs := lc.conn.State()
		// (A hold first seen Lost, as its call returns, may have been
		// Doubtful for the session timeout before: a semaphore's Acquire
		// holds its lease while it releases its internal lock, which
		// waits out any downtime.)
		timedOut := lc.api.last == recipes.Doubtful && lc.api.since >= 0 && w.sw.Now()-lc.api.since >= lc.conn.SessionTimeout() ||
			lc.api.last == recipes.NotHeld && lc.api.longDown
		if f.owned(lc, h, owners) && cs != zksim.StateExpired && cs != zksim.StateClosed && !w.sw.AuthFailed(lc.conn.Index()) && !lc.api.closed.Load() && !timedOut {
			w.violate(kindHoldState, "p%d's hold became Lost (from %v) with its node there, its Conn %v", c.idx, lc.api.last, cs)
		}
	}
}

// owned reports whether the node of lc's hold h exists, owned by its
// session, which is live.
func (f *lockFamily) owned(lc *lockClient, h apiHold, owners map[int64]*client) bool {
	if _, live := owners[lc.conn.SessionID()]; !live {
		return false
	}
	// The owner of a node changes only with the tree, and every change of
	// the tree is a new zxid: look again only then.
	key, zxid := h.Key(), f.w.sw.Server().LastZxid()
	if c := &lc.api.ownerCache; c.key != key || c.zxid != zxid {
		*c = ownerCache{key, zxid, f.w.owner(key)}
	}
	return lc.api.ownerCache.owner == lc.conn.SessionID()
}

// ownerCache is the owner of a hold's node at a zxid.
type ownerCache struct {
	key   string
	zxid  int64
	owner int64
}

// nodeGone reports whether the node of lc's hold is gone (or another
// session's): a third party deleted it. A holder that has not heard of it
// yet may still say Held.
func (f *lockFamily) nodeGone(lc *lockClient) bool {
	h, ok := lc.h.(apiHold)
	return ok && f.w.owner(h.Key()) != lc.conn.SessionID()
}
