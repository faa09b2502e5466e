package zkmem

import (
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// The connection and session lifecycle of a Conn, as its client library
// sees it. What breaks the connection is decided on the server side (see
// Control); the Conn realises it.

// lostConnection is the Conn's side of Control.Disconnect: the connection
// is gone and stays down until Control.Reconnect. Called with srv.mu held.
func (c *Conn) lostConnection() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	if c.state == zksim.StateConnected || c.state == zksim.StateConnectedReadOnly {
		c.publish(zksim.StateDisconnected)
	}
}

// faultDrop follows a response that closed connection conn (the session
// is already detached): subscribers see StateDisconnected, and the Conn
// reconnects after the configured delay, at once by default. A response
// that comes after the Conn has connected again (an ensemble Conn moves
// to another member within the control that dropped it, while a call of
// the old connection was waiting for its member) is the old connection's
// end: the Conn stays on its new one.
func (c *Conn) faultDrop(conn uint64) {
	c.mu.Lock()
	if (c.state != zksim.StateConnected && c.state != zksim.StateConnectedReadOnly) || c.conns != conn {
		c.mu.Unlock()
		return
	}
	c.publish(zksim.StateDisconnected)
	if c.cfg.reconnectDelay <= 0 {
		c.mu.Unlock()
		c.reconnect()
		return
	}
	defer c.mu.Unlock()
	if c.redial != nil {
		c.redial.Stop()
	}
	c.redial = time.AfterFunc(c.cfg.reconnectDelay, func() { c.reconnect() })
}

// reconnect connects a disconnected Conn to its session again (see
// Control.Reconnect): it resumes the session with its id, password and last
// zxid, sends again the credentials of its AddAuth calls (the session comes
// back with only its ip identity, as on a server), then re-registers its
// watches with a setWatches request. The credentials are added as part of
// the reconnection, not as requests: no fault can hit them, and none
// fails (only known schemes were remembered).
func (c *Conn) reconnect() error { return c.resume(true) }

// resume is reconnect. On an ensemble, unless wait, it returns without
// waiting for the new member to answer the setWatches (which waits there
// behind a call of the old connection that reached the member after the
// reconnection): a control of the ensemble (Crash, CatchUp, ...) that
// redials the Conns waiting for a member must not wait for a member that
// only a later control catches up. The Conn's next calls wait for it.
func (c *Conn) resume(wait bool) error {
	c.mu.Lock()
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	st := c.state
	c.mu.Unlock()
	if st != zksim.StateDisconnected {
		return stateErr(st)
	}
	if c.ens != nil {
		return c.ens.reconnect(c, wait)
	}
	s := c.srv
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return zksim.ErrConnectionLoss
	}
	sess := c.sess
	if sess.dead {
		s.mu.Unlock()
		c.learnExpired(false)
		return zksim.ErrSessionExpired
	}
	c.mu.Lock()
	if c.state != zksim.StateDisconnected { // closed meanwhile
		c.mu.Unlock()
		s.mu.Unlock()
		return stateErr(c.State())
	}
	if c.refuseAuth(sess, true) {
		c.mu.Unlock()
		s.mu.Unlock()
		return zksim.ErrAuthFailed
	}
	sess.attach((*connSink)(c))
	// A new connection: the server knows only its address until the client
	// library sends its credentials again, which it does first thing.
	sess.resetAuth(c.cfg.addr)
	for _, cr := range c.creds {
		if id, ok := authenticate(cr.scheme, cr.auth, sess.addr); ok {
			sess.addAuth(id)
		}
	}
	c.publish(zksim.StateConnected)
	w := &SetWatches{RelativeZxid: c.lastZxid}
	w.Data, w.Exist, w.Child, w.Persistent, w.Recursive = c.watchPaths()
	c.sendSetWatches(w, true) // unlocks c.mu and s.mu
	return nil
}

// sendSetWatches sends a reconnection's setWatches. The Conn's calls wait
// until it has gone out (awaitResumed): a client library sends it ahead of
// everything else on a new connection. It returns once the reply came,
// unless wait is false and the reply waits at an ensemble's member; the
// Conn's calls then wait for that reply. Called with c.srv.mu and c.mu
// held; it releases both.
func (c *Conn) sendSetWatches(w *SetWatches, wait bool) {
	gate := make(chan struct{})
	c.resuming = gate
	var hook func()
	if c.ens != nil {
		hook = c.ens.beforeSetWatches
	}
	c.mu.Unlock()
	c.srv.mu.Unlock()
	if hook != nil {
		hook()
	}
	req := &Request{Op: OpSetWatches, SetWatches: w}
	var p *pendingReply
	if c.sess.onMember() {
		var resp Response
		p = c.sess.ensStart(req, &resp)
	} else {
		c.sess.Do(req)
	}
	if p != nil && wait {
		<-p.done
		p = nil
	}
	c.mu.Lock()
	if c.resuming == gate {
		c.resuming = nil
		if p != nil {
			c.resuming = p.done
		}
	}
	c.mu.Unlock()
	close(gate)
}

// awaitResumed waits while a reconnection's setWatches has not gone out
// (or, after a reconnection that did not wait for it, has not been
// answered): the calls behind it wait, as they would in the client's
// outgoing queue. A call that passed its context check is sent, so the
// wait does not end with the context. Called with c.mu held, which it
// releases while it waits.
func (c *Conn) awaitResumed() {
	for c.resuming != nil {
		g := c.resuming
		c.mu.Unlock()
		<-g
		c.mu.Lock()
		if c.resuming == g {
			c.resuming = nil
		}
	}
}

// learnExpired moves the Conn to StateExpired: the client has heard that
// its session is gone.
func (c *Conn) learnExpired(wasConnected bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == zksim.StateClosed || c.state == zksim.StateExpired || c.state == zksim.StateAuthFailed {
		return
	}
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	if wasConnected && (c.state == zksim.StateConnected || c.state == zksim.StateConnectedReadOnly) {
		c.publish(zksim.StateDisconnected)
	}
	c.publish(zksim.StateExpired)
	c.endWatches(zksim.StateExpired, zksim.ErrSessionExpired)
}

// Close implements zksim.Conn. A connected Conn closes its session: its
// ephemerals are deleted in one transaction. A disconnected Conn cannot
// tell the server, so its session lives until it expires, as with a real
// client. Pending one-shot watches receive EventNotWatching with
// ErrClosing; channels from SessionEvents and AddWatch are closed, and
// events they had not delivered are dropped.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.awaitResumed()
	closed := c.state == zksim.StateClosed
	c.mu.Unlock()
	if closed {
		return nil
	}
	c.sess.Do(&Request{Op: OpCloseSession})
	c.srv.mu.Lock()
	delete(c.srv.conns, c)
	c.srv.mu.Unlock()
	c.finish(zksim.StateClosed, zksim.ErrClosing)
	return nil
}

// finish makes the Conn unusable for good. One-shot watches receive
// EventNotWatching with err; each persistent watch channel and session-event
// channel is closed after a last event (EventNotWatching, or the StateClosed
// session event) if its reader had taken everything before it.
func (c *Conn) finish(st zksim.State, err error) {
	c.mu.Lock()
	if c.state == zksim.StateClosed {
		c.mu.Unlock()
		return
	}
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	c.state = st
	type ending struct {
		p    *pump.Pump
		last zksim.Event
	}
	var endings []ending
	for _, path := range sortedKeys(c.persistent) {
		for _, sub := range c.persistent[path] {
			endings = append(endings, ending{sub.p, zksim.Event{Type: zksim.EventNotWatching, State: st, Path: path, Err: err}})
		}
		delete(c.persistent, path)
	}
	for _, p := range c.subs {
		endings = append(endings, ending{p, zksim.Event{Type: zksim.EventSession, State: st}})
	}
	c.subs = nil
	c.endWatches(st, err)
	close(c.closed)
	c.mu.Unlock()
	for _, e := range endings {
		e.p.CloseWith(&e.last)
	}
}
