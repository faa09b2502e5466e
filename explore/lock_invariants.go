package explore

import (
	"fmt"
	"slices"
	"strings"
	"testing/synctest"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"

	"github.com/zksim/zksim/recipes"
)

// The lock's invariants, after every step (lockFamily.check, and
// lockFamily.acquired as each hold is granted):
//   - exclusion: at most one holder whose session is live (a read-write
//     lock: one writer and no reader, or readers only; a semaphore: at most
//     max leases); a holder whose session ended still counts while it runs
//     and hears from the server: it must have learnt (Doubtful, Lost) that
//     its hold is gone before another holds (holdersNow, checkExclusion);
//   - tokens (terms) grow: each exclusive hold's token is larger than every
//     token granted before (acquired);
//   - fencing: the resource never accepts a token older than one it has
//     seen (world.write);
//   - no orphan: every contender node belongs to a client that is
//     acquiring or holding, never to an idle client with a live session
//     (checkOrphans);
//   - shared holders are shared (a read-write lock): a reader whose node
//     has only readers' nodes ahead of it holds, once it has heard all the
//     server has to say; it may not wait behind readers (see checkShared);
//   - expiry awareness: a holder whose session ended stays under the
//     exclusion check, even after its process got a new session, until it
//     learns its hold is gone (see renew), and a hold whose session ended
//     is Lost once its client hears of it (checkLostHolds);
//   - the real locks' API calls return what their docs say and hold
//     states tell the truth (checkHolds, lock_api_invariants.go).
//
// The election shares the first four, with leaders as holders and terms
// as tokens (election_invariants.go).
//

func (f *lockFamily) check() {
	// A step's delivery may have woken a hold's tracker (a session event,
	// a watch): let it take the event in before reading hold states, so
	// that what the checks see does not depend on goroutine timing (a
	// State and a Watch read on either side of a transition told of a
	// Held hold whose Watch said Lost, a failure rapid could not replay).
	synctest.Wait()
	owners := f.w.owners()
	exclusive, shared := f.holdersNow(owners)
	f.checkLostHolds()
	if f.kind.readMarker != "" {
		f.checkShared(owners)
	}
	f.checkHolds(owners)
	f.checkExclusion(exclusive, shared)
	f.checkOrphans(owners)
	if f.api != nil {
		f.api.check()
	}
}

// holdersNow returns the processes that hold now, as the exclusion check
// counts them: those whose hold is Held, exclusive or shared, but for a
// holder that may still believe it holds (holdsNow); and the holds of
// previous sessions that never learnt they lost (f.stale).
func (f *lockFamily) holdersNow(owners map[int64]*client) (exclusive, shared []string) {
	w := f.w
	for _, c := range w.clients {
		if !f.holdsNow(c, owners) {
			continue
		}
		if f.cs[c.idx].h.Exclusive() {
			exclusive = append(exclusive, fmt.Sprintf("p%d", c.idx))
		} else {
			shared = append(shared, fmt.Sprintf("p%d", c.idx))
		}
	}
	// Holds of sessions that ended before the process got a new one: the
	// old session's Conn has heard all there is (it is done), so a hold
	// still Held there is a holder that never learnt it lost.
	f.stale = slices.DeleteFunc(f.stale, func(s staleHold) bool { return s.h.State() != recipes.Held })
	for _, s := range f.stale {
		if s.c.paused() || w.inFlightAt(s.conn.Index()) {
			continue
		}
		name := fmt.Sprintf("p%d (its session c%d ended)", s.c.idx, s.conn.Index())
		if s.h.Exclusive() {
			exclusive = append(exclusive, name)
		} else {
			shared = append(shared, name)
		}
	}
	return exclusive, shared
}

// holdsNow reports whether c's process holds now, as the exclusion check
// counts holders: its hold is Held, but for a holder that may still
// believe it holds (below).
func (f *lockFamily) holdsNow(c *client, owners map[int64]*client) bool {
	w := f.w
	lc := f.cs[c.idx]
	if lc.h == nil || !lc.holding.Load() || lc.h.State() != recipes.Held {
		return false
	}
	// A holder counts while its session lives, and also after, as long as
	// it runs and hears from the server: such a holder must have learnt
	// that its hold is gone (Doubtful, Lost) before another one holds.
	// Only a paused holder, or one whose request is still on its way, may
	// still believe it holds (fencing covers those).
	// Likewise a holder whose node a third party deleted.
	if _, live := owners[c.conn.SessionID()]; (!live || f.nodeGone(lc)) && (c.paused() || w.inFlight(c)) {
		return false
	}
	return f.api == nil || !f.api.deleted(lc.h) || !(c.paused() || w.inFlight(c))
}

// checkLostHolds: a hold whose session ended, or whose client failed to
// authenticate, says so (it is Lost, or Released) once its client has
// heard all the server had to say.
func (f *lockFamily) checkLostHolds() {
	w := f.w
	// A hold whose client has been told that its session ended is Lost:
	// "Lost: the session expired, ... or the Conn was closed" (the package
	// doc of recipes/lock), as soon as the tracker hears of it.
	f.ending = slices.DeleteFunc(f.ending, func(s staleHold) bool { return s.h.State().Final() })
	for _, s := range f.ending {
		if cs := s.conn.State(); (cs == zksim.StateClosed || cs == zksim.StateExpired || cs == zksim.StateAuthFailed) && !s.c.paused() && !w.inFlightAt(s.conn.Index()) {
			w.violate(kindHoldNotLost, "p%d's hold of its ended session c%d says %v, its Conn %v", s.c.idx, s.conn.Index(), s.h.State(), cs)
		}
	}
	// Likewise a hold whose client has been told that its authentication
	// failed (authfail.go), once it has heard all the server had to say (a
	// tracker whose request is on its way hears of it when that returns):
	// the client is of no use any more, its session goes at the server's
	// timeout.
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		if f.checkState && lc.h != nil && lc.conn != nil && lc.holding.Load() && lc.conn.State() == zksim.StateAuthFailed && !lc.h.State().Final() && !c.paused() && !w.inFlightAt(lc.conn.Index()) {
			w.violate(kindHoldNotLost, "p%d's hold says %v after its client c%d failed to authenticate", c.idx, lc.h.State(), lc.conn.Index())
		}
	}
}

// checkExclusion: at most one exclusive holder and no shared one beside
// it, and no more shared holders than the kind allows.
func (f *lockFamily) checkExclusion(exclusive, shared []string) {
	w := f.w
	switch {
	case len(exclusive) > 1:
		w.violate(kindTwoHolders, "processes %s hold the %s at once", strings.Join(exclusive, ", "), f.kind.name)
	case len(exclusive) == 1 && len(shared) > 0:
		w.violate(kindTwoHolders, "process %s holds the %s exclusively while %s share it", exclusive[0], f.kind.name, strings.Join(shared, ", "))
	case f.kind.maxShared > 0 && len(shared) > f.kind.maxShared:
		w.violate(kindTooManyHolders, "processes %s hold %s (max %d)", strings.Join(shared, ", "), f.kind.name, f.kind.maxShared)
	}
}

// checkOrphans: every contender node of a live session belongs to a
// process that is acquiring, releasing or holding.
func (f *lockFamily) checkOrphans(owners map[int64]*client) {
	w := f.w
	for _, dir := range f.kind.dirs {
		for _, name := range w.children(dir) {
			c, ok := owners[w.owner(dir+"/"+name)]
			// (A session its process closed goes, with its nodes, once the
			// server hears of it, or expires; so does one whose client
			// failed to authenticate, at its timeout.)
			if !ok || c.busy("acquire") || c.busy("release") || c.busy("protected") || c.busy("close") ||
				f.cs[c.idx].holding.Load() || c.conn.State() == zksim.StateClosed || c.authFailed() {
				continue
			}
			w.violate(kindOrphan, "%s/%s belongs to p%d, which neither acquires nor holds (%s)", dir, name, c.idx, f.describe(c))
		}
	}
}

// acquired checks that an exclusive hold's token (its term, for an
// election) is larger than every token granted before, when it is granted
// to a session that is live. A grant to a session the server has already
// expired is stale from the start: the client acts on a reply the server
// sent before the expiry (it was paused, or the reply was slow to come),
// which no recipe can prevent; it learns of the expiry next, and fencing
// keeps its writes out meanwhile.
func (f *lockFamily) acquired(c *client, conn *sim.Conn, h holdable) {
	if !h.Exclusive() {
		return
	}
	if !slices.Contains(f.w.sw.Server().SessionIDs(), conn.SessionID()) {
		c.note("stale grant: token %#x to an expired session", h.Token())
		return
	}
	if f.api != nil && f.api.deleted(h) {
		c.note("stale grant: token %#x, whose node a third party deleted", h.Token())
		return
	}
	if h, ok := h.(apiHold); ok && f.w.owner(h.Key()) != conn.SessionID() {
		// Likewise a grant whose node a third party deleted meanwhile.
		c.note("stale grant: token %#x, its node deleted", h.Token())
		return
	}
	f.w.mu.Lock()
	last := f.lastToken
	if h.Token() > last {
		f.lastToken = h.Token()
	}
	f.w.mu.Unlock()
	if h.Token() <= last {
		f.w.violate(kindTokenWentBack, "p%d holds with token %#x, not above the last one granted, %#x", c.idx, h.Token(), last)
	}
}

// sharedWait is how long (virtual time) a reader may wait with only
// readers ahead of it, connected and with nothing in flight: longer than
// the recipes' longest retry backoff.
const sharedWait = time.Second

// checkShared: a reader whose node has only readers' nodes ahead of it (in
// sequence order) must hold once it has heard everything the server has to
// say. A reader that stays waiting there (connected, awake, live, nothing
// in flight) for sharedWait queues behind readers: each would hold in
// turn, which no exclusion check sees and the liveness bound may not.
func (f *lockFamily) checkShared(owners map[int64]*client) {
	w := f.w
	dir := f.kind.dirs[0]
	var nodes []seqNode
	for _, name := range w.children(dir) {
		if n, ok := parseSeqNode(name, f.kind.readMarker, f.kind.writeMarker); ok {
			nodes = append(nodes, n)
		}
	}
	sortSeqNodes(nodes)
	for _, c := range w.clients {
		lc := f.cs[c.idx]
		waiting := false
		if lc.h != nil && !lc.h.Exclusive() && c.busy("acquire") && !lc.holding.Load() && lc.h.State() != recipes.Held &&
			!c.paused() && !w.inFlight(c) && c.conn.State() == zksim.StateConnected && owners[c.conn.SessionID()] == c {
			for _, n := range nodes {
				if n.marker != f.kind.readMarker {
					break // a writer ahead: the reader waits, rightly
				}
				if w.owner(dir+"/"+n.name) == c.conn.SessionID() {
					waiting = true
					break
				}
			}
		}
		switch {
		case !waiting:
			lc.queuedSince = -1
		case lc.queuedSince < 0:
			lc.queuedSince = w.sw.Now()
		case w.sw.Now()-lc.queuedSince > sharedWait:
			w.violate(kindReadersQueue, "p%d waits for the %s behind readers only for %v (%s)", c.idx, f.kind.name, w.sw.Now()-lc.queuedSince, strings.Join(w.children(dir), " "))
		}
	}
}
