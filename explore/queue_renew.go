package explore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// The queue machines on renewing clients. With faults, each process's
// client library is drawn from the seed: a plain Conn (the process makes
// new queue values on a new session once its session ended), or a
// sim.Renewing (Curator's: it replaces an expired session at once, and the
// process goes on with the same queue values, as a user of such a library
// does). The contract (recipes/doc.go): a call belongs to the session it
// began on; a wait begun on one session returns ErrSessionExpired rather
// than end on another (recipes/internal/retry). So a queue call that began
// on one session of a Renewing and returns while it runs on another
// returns ErrSessionExpired (or its context's error), never an item, nil
// or ErrEmpty (checkSession): an error dropped on the
// old session does not repeat on the new one, and the call would go on
// there.
//
// The action ExpireAt makes the expiry strike where it matters: the
// session of a Renewing client with a call under way (one begins if it
// is idle) expires just as its next
// request of a kind drawn is on its way (the request fails with the
// session's error), or just after that request's reply arrived; with a
// connection loss drawn for that request, the call is then waiting out the
// loss in retry.Pause when the session expires.

// newRenewingQueueFamily is newQueueFamily with each client's library
// drawn from t when the machine has faults and the kind is strict (the
// flawed kinds keep the machine they were tuned on).
func newRenewingQueueFamily(w *world, t *rapid.T, kind queueKind) *queueFamily {
	if w.cfg.faults && kind.strict {
		for _, c := range w.clients {
			if rapid.Bool().Draw(t, fmt.Sprintf("p%d renewing", c.idx)) {
				c.renewing = w.sw.Renewing(c.conn.Index())
			}
		}
	}
	return newQueueFamily(w, kind)
}

// began returns the session c's call begins on: its Renewing's current
// one (nil for a plain Conn, which checkSession does not check).
func began(c *client) *sim.Conn {
	if c.renewing == nil {
		return nil
	}
	return c.renewing.Current()
}

// checkSession records a violation if c's call op, begun on session conn
// (began), returned err while c's Renewing runs on another session, and
// err is not ErrSessionExpired, nor ctx's error, nor ErrClosing once the
// run has ended.
func (f *queueFamily) checkSession(c *client, conn *sim.Conn, ctx context.Context, op string, err error) {
	if conn == nil || !f.kind.strict {
		return
	}
	cur := c.renewing.Current()
	// ErrClaimLost is a final answer an Ack or Release may have from its
	// session before it ended ("our claim is gone (session expired, or the
	// claim was deleted)"), its cleanup failing with the session.
	if cur == conn || errors.Is(err, zksim.ErrSessionExpired) || errors.Is(err, queue.ErrClaimLost) || (ctx.Err() != nil && errors.Is(err, ctx.Err())) || (errors.Is(err, zksim.ErrClosing) && f.w.ctx.Err() != nil) {
		return
	}
	f.w.violate(kindRenewedSession, "p%d's %s began on session c%d and returned %v on session c%d (its Renewing renewed the expired session): want ErrSessionExpired", c.idx, op, conn.Index(), err, cur.Index())
}

// expirePoint is where ExpireAt expires a client's session: at its next
// request op (one of cancelOps), while it is on its way, or (after) once
// its reply has arrived. hit is set (under the family's mu) when the
// client gets there.
type expirePoint struct {
	op    string
	after bool
	hit   bool
}

// requestOps maps cancelOps to the request kinds of the fault plane.
var requestOps = map[string]zkmem.OpCode{
	"create": zkmem.OpCreate, "get": zkmem.OpGetData, "exists": zkmem.OpExists,
	"children": zkmem.OpGetChildren, "multi": zkmem.OpMulti, "delete": zkmem.OpDelete,
}

// expireAtWait bounds the virtual time ExpireAt waits for the client to
// get to its point.
const expireAtWait = 200 * time.Millisecond

// expireAt runs the action ExpireAt on a Renewing client.
func (f *queueFamily) expireAt(t *rapid.T) {
	w := f.w
	c := drawClient(t, renewingReachable(w.awake()), "expire at")
	if !c.busy("") {
		// Idle: a call begins (the producer's Offer, a consumer's Take or
		// TryTake).
		switch {
		case c.idx == 0:
			var prio int32
			if f.kind.priority {
				prio = rapid.SampledFrom(priorities).Draw(t, "priority")
			}
			f.offer(c, prio, false)
		case !f.kind.priority || c.idx == 1:
			f.take(c, rapid.Bool().Draw(t, "wait"), f.drawEnd(t))
		default:
			t.SkipNow()
		}
	}
	p := &expirePoint{op: rapid.SampledFrom(cancelOps).Draw(t, "request"), after: rapid.Bool().Draw(t, "after")}
	loss := ""
	if p.after {
		loss = rapid.SampledFrom([]string{"", "drop", "lose"}).Draw(t, "loss")
	}
	idx := c.conn.Index()
	f.mu.Lock()
	f.expireAts[c.idx] = p
	f.mu.Unlock()
	w.trace("p%d expire at its next %s (after the reply %v, loss %q)", c.idx, p.op, p.after, loss)
	switch loss {
	case "drop":
		w.inject(t, faults.DropNextRequest(idx, requestOps[p.op]))
	case "lose":
		w.inject(t, faults.LoseNextReply(idx, requestOps[p.op]))
	}
	f.expireWhenHit(t, c, p)
}

// expireWhenHit waits (at most expireAtWait of virtual time) for client c
// to get to its expire point p, armed, and expires its session then.
func (f *queueFamily) expireWhenHit(t *rapid.T, c *client, p *expirePoint) {
	idx := c.conn.Index()
	if f.runUntilHit(t, c, p) && !f.w.violated() {
		f.w.inject(t, faults.Expire(idx))
	}
}

// runUntilHit runs the simulator (at most expireAtWait of virtual time)
// until client c gets to its point p, armed, and reports whether it did;
// the point is disarmed then.
func (f *queueFamily) runUntilHit(t *rapid.T, c *client, p *expirePoint) bool {
	w := f.w
	defer func() {
		f.mu.Lock()
		delete(f.expireAts, c.idx)
		f.mu.Unlock()
	}()
	hit := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return p.hit
	}
	// As runFor, stopping at once when the point is hit.
	w.hw.RunUntil(t, expireAtWait, func() bool { return hit() || !c.busy("") })
	return hit()
}

// expireGone runs the action ExpireGone on a locking queue: an idle
// consumer on a Renewing calls TryTake with one or two unclaimed items
// (drawn) queued, offered first if there are fewer; as the reply of its
// claim's create
// arrives a third party deletes the claimed item (as if another consumer
// had taken and acknowledged it), and as the reply of its read of the
// item (ErrNoNode) arrives its session expires: the call, deleting its
// claim again, meets the expiry, and the Renewing goes on with a new
// session. The call began on the old session and must end with
// ErrSessionExpired, not claim the next item on the new one, nor report
// the queue empty there (checkSession).
func (f *queueFamily) expireGone(t *rapid.T) {
	w := f.w
	c := drawClient(t, renewingReachable(f.consumers()), "expire gone")
	// One unclaimed item (the call then finds no other to claim) or two
	// (it would claim the second).
	want := rapid.IntRange(1, 2).Draw(t, "unclaimed")
	for i := 0; len(f.present())-len(w.children(queueDir+"/claims")) < want; i++ {
		p := w.clients[0]
		if i == 2 || p.paused() || p.busy("") {
			t.SkipNow()
		}
		f.offer(p, 0, false)
		w.runFor(t, 50*time.Millisecond)
	}
	created := &expirePoint{op: "create", after: true}
	f.mu.Lock()
	f.expireAts[c.idx] = created
	f.mu.Unlock()
	w.trace("p%d: its claimed item goes, then its session as it reads the item", c.idx)
	f.take(c, false, "")
	if !f.runUntilHit(t, c, created) || w.violated() {
		return
	}
	name := ""
	for _, n := range w.children(queueDir + "/claims") {
		if w.owner(queueDir+"/claims/"+n) == c.session().SessionID() {
			name = n
		}
	}
	if name == "" {
		return // the create was another (the claims directory's, say)
	}
	p := f.kind.itemsDir + "/" + name
	data, _, err := w.observer.Get(w.ctx, p)
	if err != nil {
		return // the item is gone already (acknowledged, or deleted by hand)
	}
	if k, ok := itemNumber(data); ok {
		f.mu.Lock()
		f.deleted[k] = true
		f.mu.Unlock()
	}
	w.inject(t, faults.DeleteNode(p))
	read := &expirePoint{op: "get", after: true}
	f.mu.Lock()
	f.expireAts[c.idx] = read
	f.mu.Unlock()
	f.expireWhenHit(t, c, read)
}

// expireHit marks c's expire point hit if it is op (after or not).
func (f *queueFamily) expireHit(c *client, op string, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.expireAts[c.idx]; p != nil && p.op == op && p.after == after && !p.hit {
		p.hit = true
		c.note("expire point: %s (after the reply %v)", op, after)
	}
}

// renewingReachable returns the clients of cs that run on a Renewing and
// are not cut off by a Partition.
func renewingReachable(cs []*client) []*client {
	var out []*client
	for _, c := range cs {
		if c.renewing != nil && !c.partitioned {
			out = append(out, c)
		}
	}
	return out
}
