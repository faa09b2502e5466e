package zkmem

import (
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// The connection and session lifecycle of a Conn, and its test controls.

// Disconnect drops the connection while the session lives on. Calls fail
// with ErrConnectionLoss, subscribers see StateDisconnected, the server
// forgets the session's watches (the client keeps them), and the server
// expires the session if Reconnect does not come within its timeout. The
// Conn stays down until Reconnect. Disconnecting a Conn that is not
// connected does nothing.
func (c *Conn) Disconnect() {
	c.mu.Lock()
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	c.mu.Unlock()
	c.drop()
}

// drop breaks the connection and reports whether it was up.
func (c *Conn) drop() bool {
	c.srv.mu.Lock()
	c.srv.disconnect(c.sess)
	c.srv.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != zksim.StateConnected {
		return false
	}
	c.publish(zksim.StateDisconnected)
	return true
}

// faultDrop breaks the connection after a fault and reconnects after the
// configured delay, at once by default.
func (c *Conn) faultDrop() {
	if !c.drop() {
		return
	}
	if c.cfg.reconnectDelay <= 0 {
		c.Reconnect()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.redial != nil {
		c.redial.Stop()
	}
	c.redial = time.AfterFunc(c.cfg.reconnectDelay, func() { c.Reconnect() })
}

// Reconnect connects a disconnected Conn to its session again. Subscribers
// see StateConnected, and the client's watches are re-registered against
// the last zxid it saw: a watch whose node changed meanwhile fires at once
// (DataTree.setWatches). If the session expired meanwhile the Conn learns
// it now: subscribers see StateExpired, watches end with EventNotWatching,
// and Reconnect returns ErrSessionExpired. Reconnecting a connected Conn
// does nothing.
func (c *Conn) Reconnect() error {
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
	c.srv.mu.Lock()
	if c.srv.closed {
		c.srv.mu.Unlock()
		return zksim.ErrConnectionLoss
	}
	if c.sess.dead {
		c.srv.mu.Unlock()
		c.learnExpired(false)
		return zksim.ErrSessionExpired
	}
	if c.sess.expiryTimer != nil {
		c.sess.expiryTimer.Stop()
		c.sess.expiryTimer = nil
	}
	c.sess.connected = true
	c.mu.Lock()
	if c.state != zksim.StateDisconnected { // closed meanwhile
		c.mu.Unlock()
		c.srv.mu.Unlock()
		return stateErr(c.State())
	}
	c.publish(zksim.StateConnected)
	data, exist, child, persistent, recursive := c.watchPaths()
	c.mu.Unlock()
	c.srv.setWatches(c.sess, c.lastZxid, data, exist, child, persistent, recursive)
	c.lastZxid = c.srv.zxid
	c.srv.mu.Unlock()
	return nil
}

// Expire makes the server expire this Conn's session now (see
// Server.ExpireSession). A connected Conn sees StateDisconnected then
// StateExpired at once; a disconnected one learns on Reconnect.
func (c *Conn) Expire() { c.srv.ExpireSession(c.sess.id) }

// learnExpired moves the Conn to StateExpired: the client has heard that
// its session is gone.
func (c *Conn) learnExpired(wasConnected bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == zksim.StateClosed || c.state == zksim.StateExpired {
		return
	}
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	if wasConnected && c.state == zksim.StateConnected {
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
	c.srv.mu.Lock()
	if c.sess.connected && !c.sess.dead && !c.srv.closed {
		c.srv.endSession(c.sess)
	}
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

// DeliverEvent hands the client a watch event that an event transport (see
// WithEventTransport) held back. Events must be delivered in the order they
// were held for a session to see ZooKeeper's ordering guarantees.
func (c *Conn) DeliverEvent(ev zksim.Event) { c.receive(ev) }

// Pause models a client process that stops running: it sends nothing, not
// even heartbeats, while its connection stays open. The server starts the
// session's expiry clock; if the timeout passes before Resume, the session
// expires (ephemerals deleted, other sessions notified) and the client
// learns it when it resumes. zkmem does not stop the caller's goroutines:
// a scheduler that pauses a client must also stop issuing its calls.
func (c *Conn) Pause() {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	sess := c.sess
	if !sess.connected || sess.dead || sess.paused || c.srv.closed {
		return
	}
	sess.paused = true
	sess.expiryTimer = time.AfterFunc(sess.timeout, func() { c.srv.expireIfSilent(sess) })
}

// Resume ends a Pause. If the session expired meanwhile, the Conn sees
// StateDisconnected then StateExpired and Resume returns ErrSessionExpired.
func (c *Conn) Resume() error {
	c.srv.mu.Lock()
	sess := c.sess
	if !sess.paused {
		c.srv.mu.Unlock()
		return stateErr(c.State())
	}
	sess.paused = false
	if sess.expiryTimer != nil {
		sess.expiryTimer.Stop()
		sess.expiryTimer = nil
	}
	dead := sess.dead
	c.srv.mu.Unlock()
	if dead {
		c.learnExpired(true)
		return zksim.ErrSessionExpired
	}
	return nil
}
