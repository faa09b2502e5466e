package explore

import (
	"context"
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

// The barrier machines: the barrier (this file), the double barrier and
// the start barrier (group_machine.go). Their invariants:
// barrier_invariants.go and group_invariants.go.
//
// Barrier: client 0 sets and removes the barrier (and tries to set one
// with an ACL the server refuses), the others wait on it; a third party
// may delete the barrier node or its parent. With faults, each waiter's
// client library is drawn (a plain Conn or a sim.Renewing), and
// ExpireWaiting expires a Renewing waiter's session while it waits on its
// watch. Liveness: once faults stop and the barrier is removed, every
// waiter returns.
//
// In all three, a call returns nil, its context's error, or an error
// saying that its session can no longer act (explainError), and the
// retries keep their documented timing on the virtual clock: the backoff
// between repeats (timedConn), and the cleanup of a cancelled Enter going
// on while its session may live, however long the connection is down, and
// ending soon after the session is known ended or the connection is back
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
	// node its Wait sent was answered other than "unset" (lookConn): set,
	// failed, or none sent yet.
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
		f.bs = append(f.bs, barrier.New(lookConn{tc, f, c.idx}, barrierPath))
	}
	return f
}

func (f *barrierFamily) renew(c *client) {
	f.conns[c.idx] = newTimedConn(f.w, c)
	f.bs[c.idx] = barrier.New(lookConn{f.conns[c.idx], f, c.idx}, barrierPath)
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
