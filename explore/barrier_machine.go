package explore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The barrier machines.
//
// Barrier: client 0 sets and removes the barrier (and tries to set one
// with an ACL the server refuses), the others wait on it; a third party
// may delete the barrier node or its parent. Invariants: a Wait returns
// nil only if the barrier node it began under was removed meanwhile (it is
// gone, or it is another node: another czxid), and only if the last exists
// it sent found the barrier unset; once Set returns nil the barrier is set
// (unless the third party deleted it meanwhile), once Remove returns nil
// it is not; the Set with the bad ACL fails with ErrInvalidACL, and a Set
// under a directory whose ACL refuses create fails with ErrNoAuth (at
// once, not by trying again without end). With faults, each waiter's
// client library is drawn (a plain Conn or a sim.Renewing, as below), and
// ExpireWaiting expires a Renewing waiter's session while it waits on its
// watch: its Wait must return ErrSessionExpired (checkSession). Liveness:
// once faults stop and the barrier is removed, every waiter returns.
//
// Double barrier and start barrier: every client is a member of one group
// of all the clients; a process whose session ended goes on as a new
// member. Invariants: no member passes Enter (Wait) before all members
// have arrived, nor without its member node and the gate; a member that
// passed keeps its node until it leaves (the start barrier's, until its
// session ends); no session has two member nodes; only a member that joins
// an open round late writes the gate; no member's Leave returns while a
// member that entered, and still has its session, has not begun to leave,
// nor while its round's gate is there or with its node left; an Enter that
// fails leaves no node behind; the constructors refuse bad arguments. A
// newcomer may join an open double-barrier round just after its last
// member listed the members and found no other (LateJoin): that member's
// delete of the ready node then fails, and its Leave must look again; or
// a third party deletes the ready node or that member's node there, the
// multi's request perhaps lost too (LateDelete): its Leave must still end
// the round (no ready node of it left) and return nil. With faults, each
// process's client library is drawn: a plain Conn, or a sim.Renewing
// (Curator's), which renews an expired session at once while the call
// under way goes on (ExpireMidCall expires it with a request on its way);
// a call that began on one session and returns on another returns
// ErrSessionExpired or its context's error, never nil (checkSession): the
// member went with its session. A Renewing's watches may also learn that
// they ended with the expired session only after it renewed (drawn:
// lateWatchEnd; zksim.Conn orders no watch channel against the session
// events), and ExpireWaiting expires a member's session while its Enter or
// Leave waits on a watch. LateJoinEmpty: a third party deletes the last
// member's node and a newcomer joins before that member's versioned delete
// of the ready node, which fails: its Leave must look again. Liveness: once faults stop every member
// enters and (double barrier) leaves.
//
// In all three, a call returns nil, its context's error, or an error
// saying that its session can no longer act (explainError), and the
// retries keep their documented timing on the virtual clock: the backoff
// between repeats (timedConn), and the cleanup of a cancelled Enter giving
// up after, and only after, 1.5 session timeouts of continuous downtime
// (checkCleanup, checkGaveUp).

const barrierPath = "/barrier/b"

type barrierFamily struct {
	w     *world
	bs    []*barrier.Barrier
	conns []*timedConn

	mu sync.Mutex
	// thirdParty counts the third party's deletes of the barrier node.
	thirdParty int
	// sawSet tells, by client, whether the last exists of the barrier
	// node the server applied for it found the barrier set.
	sawSet []bool
	// closed holds the sessions the machine closed (LossBurst).
	closed map[*sim.Conn]bool
}

// badACL is an ACL the server refuses (no such IP address).
var badACL = []zksim.ACL{{Perms: zksim.PermAll, Scheme: "ip", ID: "not-an-address"}}

// badACLPath is the node of the barrier that p0 sets with badACL.
const badACLPath = "/acl/barrier"

// refusedDir is a directory whose ACL lets anyone read it and nobody
// create in it (SetRefused).
const refusedDir = "/ro"

// applied records what the exists requests of the waiters found.
func (f *barrierFamily) applied(c *client, r *zkmem.Request) {
	if r.Op != zkmem.OpExists || r.Path != barrierPath {
		return
	}
	set := f.czxid() != 0
	f.mu.Lock()
	f.sawSet[c.idx] = set
	f.mu.Unlock()
}

// newBarrierFamily makes the machine of the barrier. With faults, each
// waiter's client library is drawn from t: a plain Conn, or a sim.Renewing
// (Curator's: it renews an expired session at once, and a Wait under way
// goes on with the new one: it must return ErrSessionExpired, see
// checkSession).
func newBarrierFamily(w *world, t *rapid.T) *barrierFamily {
	f := &barrierFamily{w: w, sawSet: make([]bool, len(w.clients)), closed: map[*sim.Conn]bool{}}
	for _, c := range w.clients {
		if c.idx > 0 && w.cfg.faults && rapid.Bool().Draw(t, fmt.Sprintf("p%d renewing", c.idx)) {
			c.renewing = w.sw.Renewing(c.conn.Index())
			c.lateWatchEnd = rapid.Bool().Draw(t, fmt.Sprintf("p%d late watch end", c.idx))
		}
		tc := newTimedConn(w, c)
		f.conns = append(f.conns, tc)
		f.bs = append(f.bs, barrier.New(tc, barrierPath))
	}
	return f
}

func (f *barrierFamily) renew(c *client) {
	f.conns[c.idx] = newTimedConn(f.w, c)
	f.bs[c.idx] = barrier.New(f.conns[c.idx], barrierPath)
}

// czxid returns the czxid of the barrier node, 0 when it is not set.
func (f *barrierFamily) czxid() int64 {
	ok, st, err := f.w.observer.Exists(f.w.ctx, barrierPath)
	if err != nil || !ok {
		return 0
	}
	return st.Czxid
}

func (f *barrierFamily) deletes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.thirdParty
}

func (f *barrierFamily) actions() map[string]func(*rapid.T) {
	controller := func(t *rapid.T) *client {
		c := f.w.clients[0]
		if c.paused() || c.busy("") {
			t.SkipNow()
		}
		return c
	}
	return map[string]func(*rapid.T){
		"Set": func(t *rapid.T) {
			f.set(controller(t))
		},
		"Remove": func(t *rapid.T) {
			f.remove(controller(t))
		},
		// SetBadACL: a barrier whose option asks for an ACL the server
		// refuses cannot be set: Set returns the server's error.
		"SetBadACL": func(t *rapid.T) {
			c := controller(t)
			f.setRefused(c, barrier.New(c.conn, badACLPath, barrier.WithACL(badACL)), zksim.ErrInvalidACL, "with a bad ACL")
		},
		// SetRefused: a barrier under a missing directory whose parent's ACL
		// refuses create (an operator's read-only /ro) cannot be set: Set
		// returns the server's ErrNoAuth (ZooKeeper: creating a child needs
		// CREATE on the parent), once, instead of trying again and again.
		"SetRefused": func(t *rapid.T) {
			c := controller(t)
			if ok, _, err := f.w.observer.Exists(f.w.ctx, refusedDir); err != nil || !ok {
				if _, err := f.w.observer.Create(f.w.ctx, refusedDir, nil, zksim.ModePersistent, zksim.ReadACL()); err != nil {
					t.Fatalf("create %s: %v", refusedDir, err)
				}
			}
			f.setRefused(c, barrier.New(c.conn, refusedDir+"/x/b"), zksim.ErrNoAuth, "under a read-only directory")
		},
		"Wait": func(t *rapid.T) {
			var idle []*client
			for _, c := range f.w.awake() {
				if c.idx > 0 && !c.busy("") {
					idle = append(idle, c)
				}
			}
			f.wait(drawClient(t, idle, "wait"))
		},
		"Cancel": func(t *rapid.T) {
			var busy []*client
			for _, c := range f.w.awake() {
				if c.busy("") {
					busy = append(busy, c)
				}
			}
			c := drawClient(t, busy, "cancel")
			for _, name := range []string{"wait", "set", "remove"} {
				if c.busy(name) {
					c.stop(name)
				}
			}
		},
		// LossBurst: a waiter's exists requests are lost many times in a
		// row, so that its backoff reaches its bound (timedConn checks the
		// pauses).
		"LossBurst": func(t *rapid.T) {
			f.lossBurst(t, rapid.SampledFrom([]string{"", "expire", "close"}).Draw(t, "then"))
		},
		// CloseWhileRetrying: a LossBurst that ends with the process
		// closing its session while the waiter waits to retry (the rare
		// third of LossBurst's draws that sees a retry go on past a
		// closed Conn).
		"CloseWhileRetrying": func(t *rapid.T) { f.lossBurst(t, "close") },
		// ExpireWaiting expires the session of a Renewing waiter while its
		// Wait waits on its watch (the barrier is set first, and the
		// waiter begins to wait, if need be): the Renewing renews the
		// session at once,
		// and the Wait, whose watch ended with the old session, must
		// return ErrSessionExpired, not go on with the new session and
		// pass (checkSession).
		"ExpireWaiting": f.expireWaiting,
		// ThirdPartyDelete: an operator deletes the barrier node, or its
		// parent once that is empty (so the next Set creates it again).
		"ThirdPartyDelete": func(t *rapid.T) {
			p := rapid.SampledFrom([]string{barrierPath, path.Dir(barrierPath)}).Draw(t, "node")
			if ok, st, err := f.w.observer.Exists(f.w.ctx, p); err != nil || !ok || st.NumChildren > 0 {
				t.SkipNow()
			}
			f.mu.Lock()
			f.thirdParty++
			f.mu.Unlock()
			f.w.inject(t, faults.DeleteNode(p))
		},
	}
}

// set raises the barrier: once Set returns nil the barrier is set (unless
// a third party deleted it meanwhile).
func (f *barrierFamily) set(c *client) {
	b, conn := f.bs[0], c.conn
	before := f.deletes()
	f.conns[c.idx].reset()
	c.start("set", func(ctx context.Context) error {
		err := b.Set(ctx)
		f.w.explainError(c, conn, ctx, "Set", err)
		if err == nil && f.czxid() == 0 && f.deletes() == before {
			f.w.violate(kindSetNotSet, "p%d's Set returned nil but the barrier is not set", c.idx)
		}
		return err
	})
}

// setRefused has c set b, which the server refuses with want: Set returns
// want (or another documented outcome), never nil.
func (f *barrierFamily) setRefused(c *client, b *barrier.Barrier, want error, what string) {
	conn := c.conn
	c.start("set", func(ctx context.Context) error {
		err := b.Set(ctx)
		if !errors.Is(err, want) {
			f.w.explainError(c, conn, ctx, "Set "+what, err)
			if err == nil {
				f.w.violate(kindRefusedBarrierSet, "p%d's Set %s returned nil", c.idx, what)
			}
		}
		return err
	})
}

// remove lowers the barrier: once Remove returns nil it is not set (only
// p0 sets it, and p0 runs one call at a time).
func (f *barrierFamily) remove(c *client) {
	b, conn := f.bs[0], c.conn
	f.conns[c.idx].reset()
	c.start("remove", func(ctx context.Context) error {
		err := b.Remove(ctx)
		f.w.explainError(c, conn, ctx, "Remove", err)
		if err == nil && f.czxid() != 0 {
			f.w.violate(kindRemovedStillSet, "p%d's Remove returned nil but the barrier is set", c.idx)
		}
		return err
	})
}

func (f *barrierFamily) wait(c *client) {
	b, conn := f.bs[c.idx], c.conn
	before := f.czxid()
	f.conns[c.idx].reset()
	c.start("wait", func(ctx context.Context) error {
		err := b.Wait(ctx)
		f.mu.Lock()
		sawSet, closed := f.sawSet[c.idx], f.closed[conn]
		f.mu.Unlock()
		if !closed || !errors.Is(err, zksim.ErrClosing) {
			f.w.explainError(c, conn, ctx, "Wait", err)
		}
		f.w.checkSession(c, conn, ctx, "Wait", err)
		if err == nil && sawSet {
			f.w.violate(kindPassedUnseen, "p%d's Wait returned nil, but the last time it looked the barrier was set", c.idx)
		}
		if err == nil && before != 0 && f.czxid() == before {
			f.w.violate(kindPassedASetBarrier, "p%d's Wait returned while the barrier it began under (czxid %#x) is still set", c.idx, before)
		}
		return err
	})
}

func (f *barrierFamily) check() {}

// live removes the barrier and waits for every waiter to return.
func (f *barrierFamily) live() bool {
	c := f.w.clients[0]
	if c.busy("") {
		return false
	}
	if f.czxid() != 0 {
		f.remove(c)
		return false
	}
	for _, c := range f.w.clients[1:] {
		if c.busy("") {
			return false
		}
	}
	return true
}

func (f *barrierFamily) stuck() string {
	var out []string
	for _, c := range f.w.clients {
		if c.busy("") {
			out = append(out, fmt.Sprintf("p%d still waits", c.idx))
		}
	}
	return strings.Join(out, "; ")
}

// expireWaiting: see ExpireWaiting in actions.
func (f *barrierFamily) expireWaiting(t *rapid.T) {
	var renewing []*client
	for _, c := range f.w.awake() {
		if c.renewing != nil && (c.busy("wait") || !c.busy("")) {
			renewing = append(renewing, c)
		}
	}
	c := drawClient(t, renewing, "expire")
	if !c.busy("wait") {
		if p0 := f.w.clients[0]; f.czxid() == 0 && !p0.paused() && !p0.busy("") {
			f.set(p0)
			f.w.runFor(t, 50*time.Millisecond)
		}
		f.wait(c)
		f.w.runFor(t, 50*time.Millisecond)
	}
	if c.renewing == nil || !c.busy("wait") || f.w.inFlight(c) {
		return
	}
	f.w.inject(t, faults.Expire(c.conn.Index()))
}

// lossBurst loses a waiter's exists requests n times in a row (n drawn),
// then, as then says, expires or closes its session while it waits to
// retry. The waiter is one that waits, or an idle one that begins to.
func (f *barrierFamily) lossBurst(t *rapid.T, then string) {
	var waiting []*client
	for _, c := range f.w.awake() {
		if c.busy("wait") || (c.idx > 0 && !c.busy("")) {
			waiting = append(waiting, c)
		}
	}
	c := drawClient(t, waiting, "burst")
	n := rapid.IntRange(2, 11).Draw(t, "losses")
	for i := range n {
		f.w.inject(t, faults.DropNextRequest(c.conn.Index(), zkmem.OpExists))
		if i == 0 && !c.busy("wait") {
			// An idle waiter begins to wait: its first exists is lost
			// (one that waits on its watch sends none until it fires).
			f.wait(c)
		}
		if i == n-1 {
			// The session expires, or the process closes it, while
			// the waiter waits to retry: its Wait must fail at once,
			// without a further try.
			switch then {
			case "expire":
				f.w.inject(t, faults.Expire(c.conn.Index()))
			case "close":
				conn := c.conn
				f.mu.Lock()
				f.closed[conn] = true
				f.mu.Unlock()
				var closer interface{ Close() error } = conn
				if c.renewing != nil {
					closer = c.renewing // the process closes its client library
				}
				c.start("close", func(context.Context) error { return closer.Close() })
			}
		}
		f.w.runFor(t, 550*time.Millisecond)
	}
}
