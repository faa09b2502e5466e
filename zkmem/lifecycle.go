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
func (c *Conn) reconnect() error {
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
		return c.ens.reconnect(c)
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
	c.mu.Unlock()
	s.mu.Unlock()
	c.sess.Do(&Request{Op: OpSetWatches, SetWatches: w})
	return nil
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
