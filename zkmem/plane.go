package zkmem

import (
	"errors"
	"fmt"
	"time"

	"github.com/zksim/zksim"
)

// The fault plane: the one place a session's faults are armed and decided.
// Whatever carries the session's requests (the in-process Conn, a wire
// connection) reaches it through Server.Control, and every request meets it
// in Session.Do, so a fault means the same thing on every transport.

// FaultHook decides the fault of each request of a session as it reaches
// the server (see Control.SetFaultHook). armed is the fault armed for the
// request with LoseNextReply or DropNextRequest, NoFault if none; a hook
// that only adds faults of its own returns armed when it is set. A hook is
// called with the server's lock held: it must not call the server.
type FaultHook func(r Request, armed ConnFault) ConnFault

type armedFault struct {
	aim   Aim // Count: the matching requests it still hits
	fault ConnFault
}

// decide returns the fault of req: the first fault aimed at it (one hit
// taken off its count, and the fault off the list at zero), then the hook's
// word. Session ops (ping, setWatches, closeSession) meet only faults armed
// for them by name. Called with srv.mu held.
func (sess *Session) decide(req *Request) ConnFault {
	f := NoFault
	for i := range sess.armed {
		a := &sess.armed[i]
		if a.aim.matches(req) {
			f = a.fault
			if a.aim.Count--; a.aim.Count <= 0 {
				sess.armed = append(sess.armed[:i], sess.armed[i+1:]...)
			}
			break
		}
	}
	if sess.hook != nil && !req.Op.session() {
		f = sess.hook(*req, f) // a copy: req stays the caller's
	}
	return f
}

// Control is the control handle of one session: the faults a test or a
// simulator puts the session under, whatever its transport. Get it with
// Server.Control. Each control means one thing everywhere:
//
//   - LoseNextReply: the server applies the request, then the connection
//     closes before the reply leaves;
//   - DropNextRequest: the request never reaches the server; the connection
//     closes;
//   - Disconnect: the connection closes; the session lives until its
//     timeout;
//   - Expire: the server expires the session (its ephemerals go in one
//     transaction, watchers are told);
//   - Pause: the server hears nothing from the client, and so expires the
//     session after its timeout unless Resume comes first;
//   - Delay: replies and notifications to the client are held, in order;
//   - FailNextAuth: the in-process Conn's next reconnection fails
//     authentication (authfail.go).
//
// The in-process Conn realises a closed connection as
// zksim.ErrConnectionLoss and StateDisconnected; a wire transport by closing
// its socket. A Control stays valid after its session ended; its methods
// then do nothing (Reconnect and Resume report zksim.ErrSessionExpired).
type Control Session

// Control returns the control handle of the session with the given id, or
// nil if the server knows no such session (it never opened it, or the
// session ended and no Conn of this server holds it any more).
func (s *Server) Control(id int64) *Control {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[id]; sess != nil {
		return (*Control)(sess)
	}
	for c := range s.conns {
		if c.sess.id == id {
			return (*Control)(c.sess)
		}
	}
	return nil
}

func (c *Control) sess() *Session { return (*Session)(c) }

// SessionID returns the id of the controlled session.
func (c *Control) SessionID() int64 { return c.id }

// LoseNextReply arms a lost reply for the session's next request with op
// (OpAny: any client request): the server applies it, then the connection
// closes before the reply leaves. The in-process Conn's caller gets
// zksim.ErrConnectionLoss and the Conn reconnects after its reconnect delay.
func (c *Control) LoseNextReply(op OpCode) { c.arm(Aim{Op: op, Count: 1}, LoseReply) }

// DropNextRequest arms a dropped request for the session's next request
// with op (OpAny: any client request): it never reaches the server, and the
// connection closes. The in-process Conn's caller gets
// zksim.ErrConnectionLoss and the Conn reconnects after its reconnect delay.
func (c *Control) DropNextRequest(op OpCode) { c.arm(Aim{Op: op, Count: 1}, DropRequest) }

// Arm arms fault f (LoseReply or DropRequest, as LoseNextReply and
// DropNextRequest do) for the session's next a.Count requests that a
// matches. Each matching request takes one off the count: the fault is
// gone when it reaches zero. A request meets the first armed fault that
// matches it, in the order they were armed. It returns an error naming the
// bad field, and arms nothing, for another fault, a path that does not
// start with "/", or a count below 1.
func (c *Control) Arm(f ConnFault, a Aim) error {
	if f != LoseReply && f != DropRequest {
		return fmt.Errorf("zkmem: Arm: fault %v: only LoseReply and DropRequest are armed for requests", f)
	}
	if err := a.check(); err != nil {
		return err
	}
	c.arm(a, f)
	return nil
}

func (c *Control) arm(a Aim, f ConnFault) {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	c.armed = append(c.armed, armedFault{aim: a, fault: f})
}

// SetFaultHook installs h, which decides the fault of every client request
// of the session (ping, setWatches and closeSession excepted) as it reaches
// the server; nil removes it. It is installed once and consulted for every
// request, after the faults armed with LoseNextReply and DropNextRequest,
// which it is told of.
func (c *Control) SetFaultHook(h FaultHook) {
	c.srv.mu.Lock()
	defer c.srv.mu.Unlock()
	c.hook = h
}

// Disconnect closes the session's connection while the session lives on:
// the server drops its watches and expires it unless a connection resumes
// it within its timeout. The transport hears Sink.Closed with
// zksim.ErrConnectionLoss (it is told even if already detached, so that an
// in-process Conn waiting to reconnect after a fault stays down): the
// in-process Conn's calls fail with zksim.ErrConnectionLoss, subscribers see
// StateDisconnected, and it stays down until Reconnect.
func (c *Control) Disconnect() {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disconnect(c.sess())
	if c.sink != nil && !s.closed {
		c.sink.Closed(zksim.ErrConnectionLoss)
	}
}

// ErrNotInProcess is returned by Control.Reconnect for a session whose
// transport is not an in-process Conn: a remote client reconnects by
// itself.
var ErrNotInProcess = errors.New("zkmem: the session's client is not in-process")

// reconnector is the transport that can be told to reconnect: the
// in-process Conn.
type reconnector interface{ reconnect() error }

// Reconnect makes the session's in-process Conn connect to its session
// again, as its client library would: subscribers see StateConnected, and
// its watches are re-registered against the last zxid it saw (a watch whose
// node changed meanwhile fires at once). If the session expired meanwhile
// the Conn learns it now (StateExpired, watches end with EventNotWatching)
// and Reconnect returns zksim.ErrSessionExpired. With a failed
// authentication armed (FailNextAuth) the Conn ends in
// zksim.StateAuthFailed instead and Reconnect returns zksim.ErrAuthFailed.
// Reconnecting a connected Conn does nothing. For another transport it
// returns ErrNotInProcess.
// It returns once the new member answered the Conn's setWatches, which
// goes out ahead of the Conn's other calls, as a client library sends it
// first on a new connection. On an ensemble that answer waits only behind
// a write or sync that the Conn sent on its old connection and that reached
// the new member after the reconnection (what waited at the old member
// failed with the old connection), until the member applies it (it may
// lag: see Ensemble.Lag). A control of the ensemble (Crash, Restart,
// CatchUp, ...) that moves the Conns waiting for a member does not wait
// for their setWatches: their next calls do.
func (c *Control) Reconnect() error {
	c.srv.mu.Lock()
	r, ok := c.sink.(reconnector)
	c.srv.mu.Unlock()
	if !ok {
		return ErrNotInProcess
	}
	return r.reconnect()
}

// Expire makes the server expire the session now, as if its client had
// been silent for the whole timeout: its ephemerals are deleted in one
// transaction and other sessions' watches fire. An attached transport hears
// at once (Sink.Closed with zksim.ErrSessionExpired: the in-process Conn
// sees StateDisconnected then StateExpired); a paused one when it resumes;
// a detached one when it tries to resume.
func (c *Control) Expire() {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(c.sess())
}

// Pause models a client process that stops running (a long GC, a stopped
// VM): the server hears nothing from it, not even heartbeats, while its
// connection stays open, so the session's expiry clock starts; if the
// timeout passes before Resume, the session expires (ephemerals deleted,
// other sessions notified) and the client learns it when it resumes.
// zkmem does not stop the in-process Conn's callers: a scheduler that
// pauses a client must also stop issuing its calls.
func (c *Control) Pause() {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.connected || c.dead || c.paused || s.closed {
		return
	}
	c.paused = true
	c.sess().startExpiry(c.timeout)
}

// Resume ends a Pause. If the session expired meanwhile, the transport hears
// Sink.Closed with zksim.ErrSessionExpired (the in-process Conn sees
// StateDisconnected then StateExpired) and Resume returns
// zksim.ErrSessionExpired. Resuming a session that is not paused does
// nothing (it reports zksim.ErrSessionExpired if the session ended).
func (c *Control) Resume() error {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.paused {
		if c.dead {
			return zksim.ErrSessionExpired
		}
		return nil
	}
	c.paused = false
	if c.dead {
		if c.sink != nil && !s.closed {
			c.sink.Closed(zksim.ErrSessionExpired)
		}
		return zksim.ErrSessionExpired
	}
	if c.connected && c.expiryTimer != nil {
		if c.heartbeat {
			c.lastHeard = time.Now()
			c.sess().startExpiry(c.timeout)
		} else {
			c.expiryTimer.Stop()
			c.expiryTimer = nil
		}
	}
	return nil
}

// Delay holds the session's replies and notifications for d from now (or
// until an earlier Delay ends, if that is later): they leave in the order
// the server produced them when it ends, and Session.Do blocks until its
// reply leaves. Requests are still applied as they come. A connection that
// closes meanwhile loses what was held.
func (c *Control) Delay(d time.Duration) {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	until := time.Now().Add(d)
	if d <= 0 || !until.After(c.delayUntil) {
		return
	}
	c.delayUntil = until
	if c.delayTimer != nil {
		c.delayTimer.Stop()
	}
	sess := c.sess()
	c.delayTimer = time.AfterFunc(d, sess.releaseHeld)
}

// heldItem is a notification or a reply held by a Delay.
type heldItem struct {
	ev   zksim.Event
	zxid int64
	req  *Request  // a reply, if set
	resp *Response // its response
	done chan struct{}
}

// delayed reports whether a Delay holds the session's output. Called with
// srv.mu held.
func (sess *Session) delayed() bool {
	return !sess.delayUntil.IsZero() && time.Now().Before(sess.delayUntil)
}

// holdReply queues a reply behind a Delay, unlocks the server and waits
// until the reply leaves (or is lost with the connection). Called with
// srv.mu held; returns with it released.
func (sess *Session) holdReply(req *Request, resp Response) Response {
	r, p := *req, resp
	it := heldItem{req: &r, resp: &p, done: make(chan struct{})}
	sess.held = append(sess.held, it)
	sess.srv.mu.Unlock()
	<-it.done
	return p
}

// releaseHeld runs when a Delay ends: what was held leaves, in order.
func (sess *Session) releaseHeld() {
	s := sess.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if left := time.Until(sess.delayUntil); left > 0 {
		return // a later Delay's timer will come
	}
	sess.delayUntil = time.Time{}
	sess.delayTimer = nil
	held := sess.held
	sess.held = nil
	closed := false
	for _, it := range held {
		if it.req == nil {
			if sess.connected && !closed {
				sess.sink.Event(it.ev, it.zxid)
			}
			continue
		}
		if sess.connected && !closed {
			sess.sink.Reply(it.req, it.resp)
			if it.resp.Closed {
				closed = true
			}
		} else {
			it.resp.Err, it.resp.Closed = zksim.ErrConnectionLoss, true
		}
		close(it.done)
	}
	if closed {
		s.disconnect(sess)
	}
}

// dropHeld discards what a Delay held, as the connection closes: the
// notifications are lost, and every held reply's Do returns
// zksim.ErrConnectionLoss. Called with srv.mu held.
func (sess *Session) dropHeld() {
	if len(sess.held) == 0 {
		return
	}
	for _, it := range sess.held {
		if it.req != nil {
			it.resp.Err, it.resp.Closed = zksim.ErrConnectionLoss, true
			close(it.done)
		}
	}
	sess.held = nil
}
