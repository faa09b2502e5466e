package explore

import (
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The invariants of the double barrier and the start barrier, checked
// after every step (check) and as each Enter and Leave returns (enter and
// leaveGroup, group_machine.go): no member passes Enter (Wait) before all
// members have arrived, nor without its member node and the gate; a member
// that passed keeps its node until it leaves (the start barrier's, until
// its session ends); no session has two member nodes; only a member that
// joins an open round late writes the gate; no member's Leave returns
// while a member that entered, and still has its session, has not begun to
// leave, nor while its round's gate is there or with its node left; an
// Enter that fails leaves no node behind; the constructors refuse bad
// arguments (the action Args). A call that began on one session and
// returns on another returns ErrSessionExpired or its context's error,
// never nil (checkSession): the member went with its session. The cleanup
// of a cancelled Enter never gives up while its session may live, and
// ends soon after it is known ended or the connection is back
// (checkCleanup, checkGaveUp).
//
// Races arranged on purpose (group_races.go): a newcomer may join an open
// double-barrier round just after its last member listed the members and
// found no other (LateJoin): that member's delete of the ready node then
// fails, and its Leave must look again; or a third party deletes the
// ready node or that member's node there, the multi's request perhaps lost
// too (LateDelete): its Leave must still end the round (no ready node of
// it left) and return nil; LateJoinEmpty: a third party deletes the last
// member's node and a newcomer joins before that member's versioned delete
// of the ready node, which fails: its Leave must look again; ExpireWaiting
// expires a member's session while its Enter or Leave waits on a watch.

// check: a member that passed and has not begun to leave keeps its member
// node while its session lives (the start barrier's stays until the
// session ends), and no session has two member nodes.
func (f *groupFamily) check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkCleanup()
	count := f.owners()
	for i, m := range f.ms {
		c := f.w.clients[i]
		id := c.conn.SessionID()
		if count[id] > 1 {
			f.w.violate(kindTwoMemberNodes, "p%d's session has %d member nodes", i, count[id])
		}
		if m.entered && !m.leaving && m.round != 0 && count[id] == 0 && f.w.sessionLive(c) {
			f.w.violate(kindMemberNodeGone, "p%d passed the barrier and has not left, but its member node is gone", i)
		}
	}
}

// owners counts the member nodes by owner session. It lists them again
// only when the directory's children changed (its pzxid), since check runs
// after every step.
func (f *groupFamily) owners() map[int64]int {
	_, st, err := f.w.observer.Exists(f.w.ctx, f.dir)
	if err != nil || st == nil {
		return nil
	}
	if f.count != nil && st.Pzxid == f.pzxid {
		return f.count
	}
	count := map[int64]int{}
	for _, n := range f.w.children(f.dir) {
		if o := f.w.owner(f.dir + "/" + n); o != 0 {
			count[o]++
		}
	}
	f.count, f.pzxid = count, st.Pzxid
	return count
}

// applied checks the writes to the gate: only a double-barrier member
// whose node was created after the gate (it joins the open round late)
// writes to it; nobody writes to a start barrier's, nor tries to. A write
// that failed (the gate gone, or at another version) wrote nothing.
func (f *groupFamily) applied(c *client, r *zkmem.Request) {
	f.noteListing(c, r)
	if r.Path != f.gate() {
		return
	}
	ok, gst, err := f.w.observer.Exists(f.w.ctx, f.gate())
	if err != nil {
		return
	}
	before := f.gateMzxid
	f.gateMzxid = 0
	if ok {
		f.gateMzxid = gst.Mzxid
	}
	if r.Op != zkmem.OpSetData {
		return
	}
	if !f.leave {
		f.w.violate(kindGateWritten, "p%d wrote to the start node", c.idx)
		return
	}
	if !ok || gst.Mzxid == before {
		return
	}
	for _, n := range f.w.ownedUnder(f.dir, c.conn.SessionID()) {
		if ok, st, err := f.w.observer.Exists(f.w.ctx, f.dir+"/"+n); err == nil && ok && st.Czxid < gst.Czxid {
			f.w.violate(kindGateWritten, "p%d wrote to the ready node although its member node was there before it", c.idx)
		}
	}
}

// The cleanup of a cancelled Enter (deleting our member node) runs under
// retry.CleanupContext: it goes on for as long as the session may be
// alive, however long the connection stays down (only the server expires
// a session, and on an ensemble none expires while there is no leader),
// and ends once the session is known to have ended (the client heard it
// expired, or its Conn was closed or failed to authenticate) or once the
// connection is back and the delete goes through. checkGaveUp holds it to
// the first half, checkCleanup to the second, on the virtual clock.
//
// cleanupSlack is how long a cleanup may still run once its client has
// heard everything (nothing in flight) and its session ended; with the
// connection back, cleanupSlack plus the retries' longest backoff
// (backoff's 500 ms), before the delete leaves.
const cleanupSlack = 50 * time.Millisecond

// sessionEnded reports whether a Conn in state st knows its session ended.
func sessionEnded(st zksim.State) bool {
	return st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed
}

// checkCleanup records a violation when the cleanup of a cancelled Enter
// runs on, with nothing in flight and its process awake, for longer than
// cleanupSlack after its client heard its session ended, or than
// cleanupSlack and the longest backoff after it heard its connection back.
// Call it with f.mu held.
func (f *groupFamily) checkCleanup() {
	now := f.w.sw.Now()
	for i, c := range f.w.clients {
		st := c.conn.State()
		m := f.ms[i]
		ended := sessionEnded(st)
		if m.cancelled < 0 || !c.busy("enter") || c.paused() || f.w.inFlightAny(c) || !(ended || st == zksim.StateConnected) {
			m.quiet = -1
			continue
		}
		if m.quiet < 0 {
			m.quiet = now
		}
		limit, why := cleanupSlack, "its session ended"
		if !ended {
			limit, why = cleanupSlack+backoff(12), "its connection came back"
		}
		if now-m.quiet > limit {
			f.w.violate(kindCleanupRanOn, "p%d's cancelled Enter still cleans up %v after %s, with nothing in flight", i, now-m.quiet, why)
		}
	}
}

// checkGaveUp records a violation when an Enter returns an error while its
// session lives, its client does not know it ended and its connection is
// down, leaving its member node behind: its cleanup gave up (while
// connected, the same is kindMemberLeftBehind).
func (f *groupFamily) checkGaveUp(c *client, conn *sim.Conn, mine []string) {
	st := conn.State()
	if len(mine) == 0 || !f.w.sessionAlive(conn) || st == zksim.StateConnected || sessionEnded(st) {
		return
	}
	f.w.violate(kindCleanupGaveUpEarly, "p%d's Enter returned with its connection down (%v) and its member node %s of a live session still there", c.idx, st, mine[0])
}
