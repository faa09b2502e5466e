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
// of a cancelled Enter gives up after, and only after, 1.5 session
// timeouts of continuous downtime (checkCleanup, checkGaveUp).
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
// alive, and gives up once the connection has been down, without a break,
// for one and a half session timeouts (the server has expired the session
// by then), of 10 s if the Conn reports none (the last process's
// timedConn does not: timedConn.presumedExpiry). Both halves are timings of the virtual clock: the cleanup's
// downtime clock starts when it finds the connection down, which is no
// earlier than the later of the cancel and the last change away from
// connected.
//
// cleanupSlack is how long past the presumed expiry a cleanup may still
// run, counted from when the client has heard every reply (the failure of
// a request in flight when the connection broke may reach it late).
const cleanupSlack = 50 * time.Millisecond

// checkCleanup tracks when each client's connection went down, and records
// a violation when the cleanup of a cancelled Enter runs on past
// its presumed expiry (plus cleanupSlack) of continuous downtime with nothing
// in flight. Call it with f.mu held.
func (f *groupFamily) checkCleanup() {
	now := f.w.sw.Now()
	for i, c := range f.w.clients {
		st := c.conn.State()
		m := f.ms[i]
		if st == zksim.StateConnected {
			f.downSince[i], m.quiet = -1, -1
			continue
		}
		if f.downSince[i] < 0 {
			f.downSince[i] = now
		}
		if st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed || m.cancelled < 0 || !c.busy("enter") {
			continue
		}
		// A request in flight (sent in a connected instant) ends with a
		// reply the cleanup waits for: the quiet starts after the last.
		if f.w.inFlight(c) {
			m.quiet = -1
		} else if m.quiet < 0 {
			m.quiet = now
		}
		// The cleanup's clock starts over when the client hears of a
		// connection, which a delayed delivery may tell after the fact.
		if start := max(m.quiet, m.conn.heardUp()); m.quiet >= 0 && now-start > m.conn.presumedExpiry()+cleanupSlack {
			f.w.violate(kindCleanupPastPresumedExpiry, "p%d's cancelled Enter still cleans up after %v of continuous downtime", i, now-start)
		}
	}
}

// checkGaveUp records a violation when a cancelled Enter whose member node
// existed returns while the connection is down, before its presumed expiry of
// continuous downtime: its cleanup gave up too early.
func (f *groupFamily) checkGaveUp(c *client, m *member, conn *sim.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := conn.State()
	if m.cancelled < 0 || !m.owned || conn != c.session() || st == zksim.StateConnected || st == zksim.StateExpired || st == zksim.StateClosed || st == zksim.StateAuthFailed {
		return
	}
	down := f.downSince[c.idx]
	if down < 0 {
		down = f.w.sw.Now() // went down at this instant: not yet seen by check
	}
	if d := f.w.sw.Now() - max(down, m.cancelled); d < m.conn.presumedExpiry() {
		f.w.violate(kindCleanupGaveUpEarly, "p%d's cancelled Enter gave up its cleanup after %v of continuous downtime", c.idx, d)
	}
}
