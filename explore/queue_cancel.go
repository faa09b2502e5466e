package explore

import (
	"context"
	"io"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
)

// The action CancelAt: a queue call is cancelled at a point drawn, not
// whenever the machine's Cancel action happens to come: just before the
// client's next request of a kind drawn (create, getData, exists,
// getChildren, multi, delete) or just as its reply arrives. The second is
// the race of a cancel with a reply (a Go select with both ready picks
// either): the recipe sees the result of its request and a done context.
// The checks are the machine's: the call returns nil or its context's
// error; an Offer that returns nil added its item, one that fails does
// not leave it queued; a Take that returns an item delivered it, and a
// failed one loses at most that one (for the locking queue none), and
// leaves no claim behind.

// cancelPoint is where CancelAt cancels a client's call.
type cancelPoint struct {
	op     string // the request: "create", "get", "exists", "children", "multi", "delete"
	after  bool   // as its reply arrives, rather than before it is sent
	cancel context.CancelFunc
}

var cancelOps = []string{"create", "get", "exists", "children", "multi", "delete"}

// cancelAt runs the action CancelAt on a client with a call under way.
func (f *queueFamily) cancelAt(t *rapid.T) {
	var busy []*client
	for _, c := range f.w.awake() {
		if c.busy("take") || c.busy("offer") {
			busy = append(busy, c)
		}
	}
	c := drawClient(t, busy, "cancel at")
	name := "take"
	if c.idx == 0 {
		name = "offer"
	}
	op := rapid.SampledFrom(cancelOps).Draw(t, "request")
	after := rapid.Bool().Draw(t, "after")
	c.mu.Lock()
	cancel := c.running[name]
	c.mu.Unlock()
	if name == "offer" {
		// The item of a cancelled Offer may be withdrawn (see offer);
		// one that succeeds is not.
		f.mu.Lock()
		f.withdrawn[f.offered-1] = true
		f.mu.Unlock()
	}
	f.mu.Lock()
	f.cancelAts[c.idx] = &cancelPoint{op: op, after: after, cancel: cancel}
	f.mu.Unlock()
	f.w.trace("p%d cancel %s at its next %s (after the reply %v)", c.idx, name, op, after)
	if after && f.w.cfg.faults {
		// With a connection loss on that request the cancel comes as
		// the recipe learns of the loss: it gives up in retry.Pause,
		// not knowing the request's outcome (the next call learns it).
		switch rapid.SampledFrom([]string{"", "drop", "lose"}).Draw(t, "loss") {
		case "drop":
			f.w.inject(t, faults.DropNextRequest(c.conn.Index(), requestOps[op]))
		case "lose":
			f.w.inject(t, faults.LoseNextReply(c.conn.Index(), requestOps[op]))
		}
	}
}

// cancelConn is the Conn of a strict queue kind's values: client c's
// recipe Conn, on which CancelAt cancels a call at a request, its
// requests sent through t, the client's timedConn (shared: a client's
// offer and take may overlap), which checks the queue's retry timing
// (retrycheck.go).
type cancelConn struct {
	guardedConn
	c *client
	t *timedConn
}

// State implements zksim.Conn: the recipe's reads of the state are the
// timedConn's (it notes when the recipe saw the connection back).
func (cc cancelConn) State() zksim.State { return cc.t.State() }

// at cancels the call if CancelAt armed op, before (after false) or after
// the request.
func (cc cancelConn) at(op string, after bool) {
	f, ok := cc.c.w.fam.(*queueFamily)
	if !ok {
		return
	}
	f.expireHit(cc.c, op, after)
	f.mu.Lock()
	p := f.cancelAts[cc.c.idx]
	if p == nil || p.op != op || p.after != after {
		f.mu.Unlock()
		return
	}
	delete(f.cancelAts, cc.c.idx)
	f.mu.Unlock()
	p.cancel()
	cc.c.note("cancelled at %s (after the reply %v)", op, after)
}

// SessionID implements zksim.Conn: the session of the Conn the requests
// go to (a Renewing's current one).
func (cc cancelConn) SessionID() int64 { return cc.t.SessionID() }

// SessionTimeout implements zksim.Conn.
func (cc cancelConn) SessionTimeout() time.Duration { return cc.t.SessionTimeout() }

// SessionEvents implements zksim.Conn: those of the Conn the requests go
// to (a Renewing's: every session it runs on).
func (cc cancelConn) SessionEvents(ctx context.Context) <-chan zksim.Event {
	return cc.t.SessionEvents(ctx)
}

// RandReader implements zksim.RandSource: that of the Conn the requests
// go to (a Renewing's current client's stream).
func (cc cancelConn) RandReader() io.Reader { return cc.t.RandReader() }

// Create implements zksim.Conn.
func (cc cancelConn) Create(ctx context.Context, path string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	cc.at("create", false)
	defer cc.at("create", true)
	cc.guard(ctx)
	return cc.t.Create(ctx, path, data, mode, acl)
}

// Delete implements zksim.Conn.
func (cc cancelConn) Delete(ctx context.Context, path string, version int32) error {
	cc.at("delete", false)
	defer cc.at("delete", true)
	cc.guard(ctx)
	cc.w.sent(ctx, cc.idx, path)
	return cc.t.Delete(ctx, path, version)
}

// Exists implements zksim.Conn.
func (cc cancelConn) Exists(ctx context.Context, path string) (bool, *zksim.Stat, error) {
	cc.at("exists", false)
	defer cc.at("exists", true)
	cc.guard(ctx)
	return cc.t.Exists(ctx, path)
}

// Get implements zksim.Conn.
func (cc cancelConn) Get(ctx context.Context, path string) ([]byte, *zksim.Stat, error) {
	cc.at("get", false)
	defer cc.at("get", true)
	cc.guard(ctx)
	return cc.t.Get(ctx, path)
}

// Children implements zksim.Conn.
func (cc cancelConn) Children(ctx context.Context, path string) ([]string, *zksim.Stat, error) {
	cc.at("children", false)
	defer cc.at("children", true)
	cc.guard(ctx)
	return cc.t.Children(ctx, path)
}

// ChildrenW implements zksim.Conn.
func (cc cancelConn) ChildrenW(ctx context.Context, path string) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	cc.at("children", false)
	defer cc.at("children", true)
	cc.guard(ctx)
	return cc.t.ChildrenW(ctx, path)
}

// Sync implements zksim.Conn: on the Conn the requests go to (a
// Renewing's current session), as the other requests.
func (cc cancelConn) Sync(ctx context.Context, path string) (string, error) {
	cc.guard(ctx)
	return cc.t.Sync(ctx, path)
}

// Multi implements zksim.Conn.
func (cc cancelConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	cc.at("multi", false)
	defer cc.at("multi", true)
	cc.guard(ctx)
	for _, op := range ops {
		if d, ok := op.(*zksim.DeleteOp); ok {
			cc.w.sent(ctx, cc.idx, d.Path)
		}
	}
	return cc.t.Multi(ctx, ops...)
}

// queueConn returns the Conn client c's queue values use. Its requests
// go through c's timedConn for its current session (made here, shared).
func queueConn(c *client) zksim.Conn {
	if c.timed == nil || c.timed.Conn != c.library() {
		c.timed = newTimedConn(c.w, c)
		c.timed.shared = true
	}
	return cancelConn{guardedConn: c.recipeConn().(guardedConn), c: c, t: c.timed}
}

// beginQueueOp begins an operation of c's queue values on its timedConn
// (its losses so far are not the operation's), unless another operation
// of c is under way: that one's losses count on (the check of the first
// request after a loss then allows a longer pause, never a shorter one).
func beginQueueOp(c *client) {
	c.mu.Lock()
	alone := len(c.running) <= 1
	c.mu.Unlock()
	if alone {
		resetTimed(c)
	}
}
