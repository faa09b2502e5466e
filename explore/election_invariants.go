package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/zkmem"
)

// The election's invariants. The election machines are lock machines
// whose hold is a leadership (election_hold.go), so the invariants an
// election shares with a lock run as the lock family's
// (lock_invariants.go), with "holder" read as "leader" and "token" as
// "term":
//
//   - one leader at a time: at most one process leads whose session is
//     live; a leader whose session ended still counts while it runs and
//     hears from the server: it must learn that it lost leadership
//     (Doubtful, Lost) before another leader acts, and a leader whose
//     process got a new session counts until it learns
//     (lockFamily.holdersNow and checkExclusion, "two holders");
//   - a leader whose session ended learns it: its leadership is Lost once
//     its client hears of the end (lockFamily.checkLostHolds, "hold not
//     lost");
//   - terms grow: each leader's term (the czxid of its node, its Token) is
//     larger than every term granted before (lockFamily.acquired, "token
//     went back");
//   - fencing: the resource a leader writes to never accepts a term older
//     than one it has seen (world.write, "two writers");
//   - no orphan: every candidate node belongs to a process that is
//     campaigning or leading (lockFamily.checkOrphans, "orphan").
//
// The rest are the election's own, checked below after every step
// (electionAPI.check, which lockFamily.check calls last) and as each API
// call returns (judgeResults):
//
//   - Leader returns a node that was, at some step, the leader (the lowest
//     candidate in sequence order; for a SingleNode, the node), with that
//     node's czxid as Token, its owner as Session and a value it had; it
//     returns ErrNoLeader only if, at some step during the call, there was
//     no candidate; it "blocks only for the round trips": while nothing
//     changes in the directory it reads no more than pollLimit times;
//   - a Campaign (or a Resume) that returns nil leads: its hold is not
//     NotHeld or Released as it returns; a SingleNode's Campaign waits
//     for the connection after its first connection loss, and no more,
//     and keeps to the retry timing after later ones (newCallConn);
//   - Observe reports only such leaders, never the same (token, value)
//     twice in a row; an observer that is connected, quiet and awake has
//     reported the current leader and its value within sharedWait; its
//     channel closes only when its ctx is done or its session ended, and
//     closes when its ctx is done;
//   - Proclaim by the leader sets its node's value, by anyone else, or by
//     a leader whose node a third party deleted, returns ErrNotLeader;
//     Resign and Guard with nothing held return ErrNotLeader; Campaign
//     while leading or campaigning returns ErrCampaigning; Resume
//     of a node that is not ours (another's, a missing one, one in another
//     directory) returns ErrNotCandidate; a Campaign with an ACL the
//     server refuses returns ErrInvalidACL, creating only once;
//   - a hold becomes Lost only when its node is gone, its Conn expired or
//     closed, or it stayed Doubtful for the session timeout (a Proclaim,
//     which changes its node's data, loses nothing): checkLost;
//   - the leader's node is the lowest candidate (sequence order, across the
//     int32 wrap): a leader that is Held and whose node exists leads;
//   - a holder whose node is gone (deleted by a third party, or its
//     session's) and that has heard all the server has to say is not Held;
//   - nobody deletes another session's node (applied);
//   - nodes that are not candidates (a name without the server's sequence
//     format after "n_") are ignored: the election goes on past them;
//   - in the layout drawn (election_layout.go), the leader is the first
//     candidate in that layout's order; a Campaign that begins beside a
//     contender node of a layout it cannot order returns
//     recipes.ErrForeignNodes and leaves no node (election_foreign.go);
//   - a SingleNode's Resign never returns the session's end: the node of
//     an ended session is gone with it, so there is nothing to delete;
//   - a call belongs to the session it began on (recipes/doc.go): each
//     process's library, and each Observe's, may be a sim.Renewing drawn
//     from the seed; a Campaign or Resume that began on one session never
//     returns nil on another (reportCall), an Observe whose session was
//     renewed calls the Conn no more and closes its channel, and a
//     renewing leader's hold of the expired session becomes Lost
//     (lockFamily.ending);
//   - a leadership is Doubtful only while disconnected: connected with
//     nothing in flight it is Held or Lost (checkLost); Resign returns nil,
//     ErrNotLeader, ctx's error or the session's end, never another error,
//     and during a campaign ErrNotLeader, without a request
//     (CampaignAfterLoss).

// check checks the election's own invariants after every step.
func (a *electionAPI) check() {
	w := a.w
	// What the tree holds now: the candidates, in sequence order.
	owners := map[string]int64{}
	var candidates []seqNode
	if a.single {
		candidates = []seqNode{{name: "leader"}}
	} else {
		for _, name := range w.children(electionDir) {
			if n, ok := a.candidate(name); ok {
				candidates = append(candidates, n)
			}
		}
		sortSeqNodes(candidates)
	}
	leader := ""
	a.curValue = ""
	var cur *seenNode
	for _, c := range candidates {
		p := electionDir + "/" + c.name
		n, data := a.see(p)
		if n == nil {
			continue
		}
		if n.owner != 0 {
			owners[p] = n.owner
		}
		if leader == "" {
			leader, cur, a.curValue = p, n, data
		}
	}
	a.owners = owners
	if leader == "" {
		a.empty++
	} else {
		if a.leaders[leader] == nil {
			a.leaders[leader] = map[int64]*seenNode{}
		}
		a.leaders[leader][cur.czxid] = cur
	}
	a.judgeResults()
	a.checkHolders(leader)
	a.checkLost()
	a.checkObservers(leader, cur)
	a.checkLeaderCalls(leader, cur)
	a.endForeign()
}

// checkLeaderCalls: a Leader call "blocks only for the round trips, and
// across connection losses" (its doc); it reads again only when the
// lowest candidate left between its listing and its read, which changes
// the directory. So while nothing changes, it makes no more than
// pollLimit reads.
func (a *electionAPI) checkLeaderCalls(leader string, cur *seenNode) {
	sig := ""
	calls := a.calls[:0]
	for _, lc := range a.calls {
		if lc.done.Load() {
			continue
		}
		calls = append(calls, lc)
		if sig == "" {
			sig = a.dirSig(leader, cur)
		}
		if n := lc.polls.reads(sig); n > pollLimit {
			a.w.violate(kindLeader, "p%d's Leader read %d times with nothing changed (%s)", lc.c.idx, n, sig)
		}
	}
	clear(a.calls[len(calls):])
	a.calls = calls
}

// deleted reports whether a third party deleted h's node.
func (a *electionAPI) deleted(h holdable) bool {
	a.delMu.Lock()
	defer a.delMu.Unlock()
	return a.deletedIDs[h.Token()]
}

// validLeader reports why l is not a leader the machine saw, "" if it is.
func (a *electionAPI) validLeader(l election.Leader) string {
	n := a.leaders[l.Key][l.Token]
	switch {
	case a.leaders[l.Key] == nil:
		return fmt.Sprintf("%q was never the leader", l.Key)
	case n == nil:
		return fmt.Sprintf("token %#x, but %s never had that czxid", l.Token, l.Key)
	case l.Session != n.owner:
		return fmt.Sprintf("session %#x, but %s belongs to %#x", l.Session, l.Key, n.owner)
	case !n.values[string(l.Value)]:
		return fmt.Sprintf("value %q, which %s never had", l.Value, l.Key)
	}
	return ""
}

// judgeResults checks the results the client goroutines reported.
func (a *electionAPI) judgeResults() {
	w := a.w
	a.mu.Lock()
	results := a.results
	a.results = nil
	a.mu.Unlock()
	for _, r := range results {
		bad := ""
		switch r.what {
		case "Leader":
			switch {
			case r.err == nil:
				bad = a.validLeader(r.l)
			case errors.Is(r.err, election.ErrNoLeader):
				if a.empty == r.empty {
					bad = "ErrNoLeader, but there was a candidate all along"
				}
			case !failedOK(r.err):
				bad = "an unexpected error"
			}
		case "Proclaim":
			had := false
			for _, n := range a.nodes[r.key] {
				had = had || n.values[r.value]
			}
			switch {
			case r.err == nil:
				if !had {
					bad = fmt.Sprintf("nil, but %q never held the value %q", r.key, r.value)
				}
			case errors.Is(r.err, election.ErrNotLeader):
				if r.h.State() == recipes.Held && w.owner(r.key) == r.conn.SessionID() && a.leaderNow() == r.key {
					bad = "ErrNotLeader from the leader"
				}
			case !failedOK(r.err):
				bad = "an unexpected error"
			}
		case "Proclaim of a deleted node":
			if !errors.Is(r.err, election.ErrNotLeader) && !failedOK(r.err) {
				bad = "not ErrNotLeader"
			}
		case "Proclaim by a non-leader":
			if !errors.Is(r.err, election.ErrNotLeader) {
				bad = "not ErrNotLeader"
			}
		case "second Campaign":
			if !errors.Is(r.err, election.ErrCampaigning) {
				bad = "not ErrCampaigning"
			}
		case "Resign with nothing held":
			if !errors.Is(r.err, election.ErrNotLeader) {
				bad = "not ErrNotLeader"
			}
		case "Campaign with an invalid ACL":
			switch {
			case r.refused > 1:
				bad = fmt.Sprintf("it created again after ErrInvalidACL (%d refused creates)", r.refused)
			case !errors.Is(r.err, zksim.ErrInvalidACL) && !failedOK(r.err):
				bad = "not ErrInvalidACL"
			}
		case "Campaign beside a foreign node":
			bad = judgeForeign(r)
		case "Resume of another's node":
			if !errors.Is(r.err, election.ErrNotCandidate) && !failedOK(r.err) {
				bad = "not ErrNotCandidate"
			}
		case "Campaign", "Resume of our own node":
			ended := !slices.Contains(w.sw.Server().SessionIDs(), r.conn.SessionID())
			switch {
			case r.renewed != nil && r.err == nil:
				// "A call belongs to the session it began on" (recipes/doc.go):
				// it does not go on with the Renewing's new session.
				bad = fmt.Sprintf("it began on session c%d and returned on session c%d (its Renewing renewed the expired session): want ErrSessionExpired", r.conn.Index(), r.renewed.Index())
			case r.err == nil:
				// "blocks until we lead": a nil return is a leadership,
				// the hold's state Held, or already past it (Doubtful,
				// Lost), never NotHeld or Released.
				if r.state == recipes.NotHeld || r.state == recipes.Released {
					bad = fmt.Sprintf("nil, but the state is %v: it does not lead", r.state)
				}
			case errors.Is(r.err, context.Canceled):
			case errors.Is(r.err, recipes.ErrForeignNodes) && a.foreignEver:
				// A third party made a node of another layout
				// (election_foreign.go), which its listing met.
			case errors.Is(r.err, zksim.ErrSessionExpired):
				if !ended {
					bad = "the session is live"
				}
			case errors.Is(r.err, zksim.ErrClosing):
				// The machine closes no Conn (but at its end): a campaign
				// whose session expired returns ErrSessionExpired.
				bad = "the Conn is not closed"
			case errors.Is(r.err, zksim.ErrAuthFailed):
				if !w.sw.AuthFailed(r.conn.Index()) {
					bad = "its client did not fail to authenticate"
				}
			case errors.Is(r.err, election.ErrNotCandidate) && r.what != "Campaign":
				// Only if our node was deleted (by a third party) as we
				// waited.
				a.delMu.Lock()
				gone := a.deletedPaths[r.key]
				a.delMu.Unlock()
				if !gone {
					bad = fmt.Sprintf("ErrNotCandidate for our own node %q, which no third party deleted", r.key)
				}
			default:
				bad = "an unexpected error"
			}
		case "Resign", "Resign of an ended hold":
			// "the state becomes Released and the node is deleted if it
			// is still ours" (a node that is not ours, or gone, is no
			// error); ErrNotLeader if we do not lead; ctx's error, or the
			// session's end, if it could not finish (an Election's; a
			// SingleNode's has nothing left to do then).
			switch {
			case r.err == nil && r.what == "Resign" && r.state != recipes.Released:
				bad = fmt.Sprintf("nil, but the state is %v, not Released", r.state)
			case a.single && (errors.Is(r.err, zksim.ErrSessionExpired) || errors.Is(r.err, zksim.ErrClosing)):
				// The single node's node of an ended session went with
				// it: not ours, nothing to delete, no error.
				bad = "the session ended, so its node is not ours: nothing to delete"
			case r.err != nil && !errors.Is(r.err, election.ErrNotLeader) && !failedOK(r.err):
				bad = "an unexpected error"
			}
		case "Resume while leading":
			if !errors.Is(r.err, election.ErrCampaigning) {
				bad = "not ErrCampaigning"
			}
		}
		if bad != "" {
			w.violate(kindElectionAPI, "p%d: %s returned %v, %v: %s", r.c.idx, r.what, r.l, r.err, bad)
		}
	}
}

// holdEnd is what checkLost saw of a client's hold.
type holdEnd struct {
	h     holdable
	last  recipes.HoldState
	since time.Duration // Doubtful since, -1 if not Doubtful
}

// checkLost: a hold becomes Lost only when its node is gone (deleted, or
// gone with the session), its Conn expired or closed, or it stayed
// Doubtful for the session timeout (the lock machines' checkEnd). A
// Proclaim, which changes the node's data, loses nothing.
func (a *electionAPI) checkLost() {
	w := a.w
	if a.ends == nil {
		a.ends = map[*client]*holdEnd{}
	}
	for _, c := range w.clients {
		lc := a.f.cs[c.idx]
		if lc.h == nil || lc.conn != c.conn {
			delete(a.ends, c)
			continue
		}
		e := a.ends[c]
		if e == nil || e.h != lc.h {
			e = &holdEnd{h: lc.h, last: recipes.NotHeld, since: -1}
			a.ends[c] = e
		}
		st := lc.h.State()
		if st == recipes.Lost && e.last != recipes.Lost {
			cs := c.conn.State()
			timedOut := e.last == recipes.Doubtful && e.since >= 0 && w.sw.Now()-e.since >= c.conn.SessionTimeout()
			if key := a.holdKey(lc); key != "" && a.owners[key] == c.conn.SessionID() && cs != zksim.StateExpired && cs != zksim.StateClosed && !w.sw.AuthFailed(c.conn.Index()) && !timedOut {
				w.violate(kindHoldState, "p%d's hold became Lost (from %v) with its node %s there, its Conn %v", c.idx, e.last, key, cs)
			}
		}
		switch {
		case st != recipes.Doubtful:
			e.since = -1
		case e.since < 0:
			e.since = w.sw.Now()
		}
		e.last = st
		// Doubtful only while the connection is down (recipes/doc.go,
		// "Connection states and what they mean for a holder"): once
		// connected again it verifies its node, and is Held or Lost as
		// soon as it has heard the answer.
		if i := c.conn.Index(); st == recipes.Doubtful && c.conn.State() == zksim.StateConnected && !w.sw.Paused(i) && !w.inFlightAt(i) {
			w.violate(kindHoldState, "p%d's leadership says Doubtful though connected, with nothing in flight", c.idx)
		}
	}
}

// checkHolders: a Held leader whose node exists is the leader; a Held
// holder whose node is gone learns it (is no longer Held) once it has
// heard all the server has to say.
func (a *electionAPI) checkHolders(leader string) {
	w := a.w
	for _, c := range w.clients {
		lc := a.f.cs[c.idx]
		key := a.holdKey(lc)
		if lc.h == nil || !lc.holding.Load() || lc.h.State() != recipes.Held || key == "" || lc.conn != c.conn {
			delete(a.goneSince, c)
			continue
		}
		owner := a.owners[key]
		if owner == c.conn.SessionID() && !a.single && key != leader {
			w.violate(kindLeaderNotFirst, "p%d leads with %s, but the first candidate is %s (%s)", c.idx, key, leader, strings.Join(w.children(electionDir), " "))
		}
		quiet := !c.paused() && !w.inFlight(c) && c.conn.State() == zksim.StateConnected
		if owner == c.conn.SessionID() || !quiet {
			delete(a.goneSince, c)
			continue
		}
		since, ok := a.goneSince[c]
		switch {
		case !ok:
			a.goneSince[c] = w.sw.Now()
		case w.sw.Now()-since > sharedWait:
			w.violate(kindHeldWithoutNode, "p%d is Held for %v with its node %s gone, connected and told everything", c.idx, w.sw.Now()-since, key)
		}
	}
}

// holdKey returns the node of lc's hold.
func (a *electionAPI) holdKey(lc *lockClient) string {
	if a.single {
		return a.path
	}
	if h, ok := lc.h.(electionHold); ok {
		return h.Key()
	}
	return ""
}

// checkObservers judges what the observers reported.
func (a *electionAPI) checkObservers(leader string, cur *seenNode) {
	w := a.w
	sig := "" // dirSig, once an observer needs it
	for c, o := range a.observers {
		o.mu.Lock()
		reports, closed, early, end := o.reports[o.checked:], o.closed, o.early, o.end
		o.checked = len(o.reports)
		var last *election.Leader
		if len(o.reports) > 0 {
			last = &o.reports[len(o.reports)-1]
		}
		o.mu.Unlock()
		for _, l := range reports {
			if bad := a.validLeader(l); bad != "" {
				w.violate(kindObserve, "p%d observed %s: %s", c.idx, l.Key, bad)
			}
		}
		if closed {
			ended := end == zksim.StateExpired || end == zksim.StateClosed || end == zksim.StateAuthFailed || !slices.Contains(w.sw.Server().SessionIDs(), o.conn.SessionID())
			if early && !o.cancelled && !ended {
				w.violate(kindObserve, "p%d's Observe channel closed, its ctx not done, its session %v", c.idx, end)
			}
			delete(a.observers, c)
			continue
		}
		// "A call belongs to the session it began on" (recipes/doc.go): an
		// Observe whose Renewing renewed its session ends (its channel
		// closes) rather than go on with the new session; once the new
		// session has nothing of it in flight, it must have.
		if r := o.renewing; r != nil {
			switch calls := o.polls.guard.calls.Load(); {
			case r.Current() == o.conn:
				o.callsBefore = calls
			case calls > o.callsBefore:
				w.violate(kindObserve, "p%d's Observe began on session c%d and called the Conn on session c%d (its Renewing renewed the expired session): want its channel closed", c.idx, o.conn.Index(), r.Current().Index())
			}
		}
		// An observer waits on watches: it reads again when something
		// changed, not again and again.
		if sig == "" {
			sig = a.dirSig(leader, cur)
		}
		if n := o.polls.reads(sig); n > pollLimit {
			w.violate(kindObserve, "p%d's Observe read %d times with nothing changed (%s)", c.idx, n, sig)
		}
		// A quiet observer has reported the leader as it is now.
		live := slices.Contains(w.sw.Server().SessionIDs(), o.conn.SessionID())
		quiet := !o.cancelled && !w.sw.Paused(o.conn.Index()) && !w.inFlightAt(o.conn.Index()) && o.conn.State() == zksim.StateConnected && live
		lags := quiet && cur != nil && (last == nil || last.Key != leader || last.Token != cur.czxid || string(last.Value) != a.curValue)
		switch {
		case !lags:
			o.lagSince = -1
		case o.lagSince < 0:
			o.lagSince = w.sw.Now()
		case w.sw.Now()-o.lagSince > sharedWait:
			w.violate(kindObserve, "p%d's Observe has not reported the leader %s for %v (last report %v)", c.idx, leader, w.sw.Now()-o.lagSince, last)
		}
	}
}

// dirSig describes the election's directory and its leader as of this
// check: it changes when an observer has something new to read.
func (a *electionAPI) dirSig(leader string, cur *seenNode) string {
	ok, st, err := a.w.observer.Exists(a.w.ctx, electionDir)
	sig := fmt.Sprintf("directory %v %v", ok, err)
	if ok {
		sig += fmt.Sprintf(" czxid %d cversion %d", st.Czxid, st.Cversion)
	}
	if cur != nil {
		sig += fmt.Sprintf(", leader %s czxid %d value %q", leader, cur.czxid, a.curValue)
	}
	return sig
}

// live: every API call has returned; the observers are stopped first, and
// their channels must close.
func (a *electionAPI) live() bool {
	done := true
	for _, c := range a.w.clients {
		if o := a.observers[c]; o != nil && !o.cancelled && c.busy("observe") {
			o.cancelled = true
			c.stop("observe")
		}
		if slices.ContainsFunc(apiOps, c.busy) {
			done = false
		}
	}
	return done
}

// applied: nobody deletes a node another live session owns. There is one
// exception, which no client can avoid: ZooKeeper cannot make a delete
// conditional on the node's owner, so a SingleNode that checked that the
// node is its own and then deletes it may delete the next leader's node
// if, in between, a third party deleted its node and another candidate
// created one (see the SingleNode doc).
func (a *electionAPI) applied(c *client, r *zkmem.Request) {
	check := func(p string) {
		if o := a.owners[p]; o != 0 && o != c.conn.SessionID() && !a.robbed[c.conn.SessionID()] {
			a.w.violate(kindDeletedAnothersNode, "p%d (session c%d) deleted %s, a node of session %#x", c.idx, c.conn.Index(), p, o)
		}
	}
	switch r.Op {
	case zkmem.OpDelete:
		check(r.Path)
	case zkmem.OpMulti:
		for _, op := range r.Ops {
			if d, ok := op.(*zksim.DeleteOp); ok {
				check(d.Path)
			}
		}
	}
}

// failedOK reports whether err is how a call ends when its session ended,
// its client failed to authenticate (authfail.go) or its ctx is done (the
// machine's shutdown).
func failedOK(err error) bool {
	return errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, zksim.ErrClosing) || errors.Is(err, zksim.ErrAuthFailed) || errors.Is(err, context.Canceled)
}
