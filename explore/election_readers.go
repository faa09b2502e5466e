package explore

import (
	"context"
	"fmt"
	"testing/synctest"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
)

// The election API's actions that read the election: Leader (and a
// Leader caught between its listing and its read), and Observe (started,
// stopped, its session expired under it). Their results are judged by
// judgeResults, checkLeaderCalls and checkObservers
// (election_invariants.go).

// free returns the clients that may start op: none while one runs it
// (op runs on a session of its own, one call at a time, see apiConn).
func (a *electionAPI) free(op string) []*client {
	w := a.w
	for _, c := range w.clients {
		if c.busy(op) {
			return nil
		}
	}
	return w.awake()
}

// startLeader starts a checked Leader call on c and returns it.
func (a *electionAPI) startLeader(t *rapid.T, c *client) *leaderCall {
	e, empty := a.direct(c, a.apiConn(t, "leader"), "Leader"), a.empty
	lc := &leaderCall{c: c, polls: poller{guard: a.guards[e]}}
	a.calls = append(a.calls, lc)
	startNow(c, "leader", func(ctx context.Context) error {
		l, err := e.Leader(ctx)
		lc.done.Store(true)
		a.report(apiResult{c: c, what: "Leader", l: l, err: err, empty: empty})
		return err
	})
	return lc
}

// callLeader (the action Leader) starts a Leader call.
func (a *electionAPI) callLeader(t *rapid.T) {
	a.startLeader(t, drawClient(t, a.free("leader"), "leader"))
}

// observe (the action Observe) starts an Observe, on a session of its
// own through a Renewing, drawn with faults.
func (a *electionAPI) observe(t *rapid.T) {
	w := a.w
	c := drawClient(t, a.free("observe"), "observe")
	conn := a.apiConn(t, "observe")
	o := &observer{c: c, conn: conn, lagSince: -1}
	var lib zksim.Conn = conn
	if w.cfg.faults && rapid.Bool().Draw(t, "renewing observer") {
		// A session of its own, through a Renewing: once it
		// expires, Observe must end, not go on with the new one.
		var err error
		if conn, err = w.connect(t); err != nil {
			panic(fmt.Sprintf("connect: %v", err)) // the World is open while actions run
		}
		o.conn, o.renewing = conn, w.sw.Renewing(conn.Index())
		lib = o.renewing
		w.trace("p%d observes on session c%d, through a Renewing", c.idx, conn.Index())
	}
	a.observers[c] = o
	e := a.direct(c, lib, "Observe")
	o.polls.guard = a.guards[e]
	c.start("observe", func(ctx context.Context) error {
		for l := range e.Observe(ctx) {
			o.mu.Lock()
			o.reports = append(o.reports, l)
			o.mu.Unlock()
		}
		o.mu.Lock()
		o.closed = true
		o.early, o.end = ctx.Err() == nil, o.conn.State()
		o.mu.Unlock()
		return nil
	})
}

// expireObserver expires the session of an Observe that runs
// through a Renewing while one of its requests is on its way: the
// Renewing renews it as the reply (the session's error) comes, and
// Observe must end (see checkObservers). It first lets the
// Observe send a drawn number of requests more (the one after a
// listing that found no directory, say).
func (a *electionAPI) expireObserver(t *rapid.T) {
	w := a.w
	var cs []*client
	for _, c := range w.awake() {
		if o := a.observers[c]; o != nil && o.renewing != nil && c.busy("observe") && !o.cancelled && o.renewing.Current() == o.conn {
			cs = append(cs, c)
		}
	}
	c := drawClient(t, cs, "expire observer")
	o := a.observers[c]
	want := o.polls.guard.calls.Load() + int64(rapid.IntRange(0, 2).Draw(t, "requests first"))
	for i := 0; i < 20 && o.polls.guard.calls.Load() < want && w.sw.Enabled() > 0 && !w.violated(); i++ {
		w.step(t)
		synctest.Wait()
	}
	if !w.inFlightAt(o.conn.Index()) || o.renewing.Current() != o.conn {
		return
	}
	w.inject(t, faults.Expire(o.conn.Index()))
}

// stopObserve (the action StopObserve) cancels an Observe.
func (a *electionAPI) stopObserve(t *rapid.T) {
	w := a.w
	var running []*client
	for _, c := range w.awake() {
		if o := a.observers[c]; o != nil && c.busy("observe") && !o.cancelled {
			running = append(running, c)
		}
	}
	c := drawClient(t, running, "stop observing")
	a.observers[c].cancelled = true
	c.stop("observe")
}

// leaderRace (the actions LeaderRaceDelete and LeaderRaceCancel): a
// Leader call is caught between its listing and its
// read of the lowest candidate. Once the read is on its way, a third
// party deletes that candidate (Leader must look again: it returns
// ErrNoLeader "when there is no candidate" only), or the call is
// cancelled (it returns ctx's error, not ErrNoLeader).
func (a *electionAPI) leaderRace(t *rapid.T, cancel bool) {
	w := a.w
	c := drawClient(t, a.free("leader"), "leader race")
	if a.leaderNow() == "" {
		t.SkipNow()
	}
	lc := a.startLeader(t, c)
	// Step until the listing's reply is in and the read sent.
	for i := 0; i < 20 && lc.polls.guard.calls.Load() < 2 && !lc.done.Load() && w.sw.Enabled() > 0 && !w.violated(); i++ {
		w.step(t)
		synctest.Wait()
	}
	if lc.done.Load() || lc.polls.guard.calls.Load() < 2 {
		return
	}
	if cancel {
		c.stop("leader")
		return
	}
	l := a.leaderNow()
	if _, st, err := w.observer.Exists(w.ctx, l); l != "" && err == nil && st != nil {
		a.delMu.Lock()
		a.deletedIDs[st.Czxid], a.deletedPaths[l] = true, true
		a.delMu.Unlock()
		w.inject(t, faults.DeleteNode(l))
	}
}
