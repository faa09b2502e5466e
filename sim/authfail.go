package sim

import (
	"errors"
	"time"

	"github.com/zksim/zksim"
)

// Authentication failing on reconnect, as ZooKeeper's Java client meets
// it when its SASL credentials were rotated or revoked while it was
// disconnected: it reconnects to its session, fails to authenticate, and
// the server drops the connection. The client library then enters
// AUTH_FAILED, a terminal state (ZooKeeper.States.isAlive is false): it
// tells its watcher (StateAuthFailed), fails every outstanding and later
// call with AUTHFAILED (ClientCnxn.conLossPacket) without sending it, and
// never reconnects; Close sends nothing. As this module's Conns do when a
// session ends, its watches end with EventNotWatching (zkmem.Conn.FailAuth),
// here carrying zksim.ErrAuthFailed. The server, which heard the
// client for the last time at that reconnection, expires the session one
// session timeout later, deleting its ephemeral nodes.
//
// go-zookeeper never enters StateAuthFailed (it ignores a failed re-auth
// and reconnects), so the fault is not modelled for go-zookeeper clients.

// ErrNoAuthFailure is returned by Faults.FailAuth for a go-zookeeper
// client, which has no terminal authentication failure.
var ErrNoAuthFailure = errors.New("sim: a go-zookeeper client never enters StateAuthFailed")

// FailAuth arms a failed authentication for client i's next reconnection
// (the one under way if its connection is down): when the client
// reconnects it hears StateAuthFailed instead of StateConnected, and from
// then on every request it sends, or has sent and not yet had served,
// fails with zksim.ErrAuthFailed without reaching the server. The session
// lives on at the server, unheard, until its timeout expires it (counted
// from the failed reconnection). If the session has expired before the
// client reconnects, the client learns of the expiry instead, as it
// would.
//
// The failure is armed in zkmem (zkmem.Control.FailNextAuth), which fails
// the reconnection where the server takes it and starts the session's
// expiry clock afresh (authFailedInZkmem). On an ensemble a client that
// loses its member moves to another by itself (within the fault or the
// election that dropped it), and one that finds no member waits; the
// leader expires the session a session timeout after the failed
// reconnection (or after the election that follows, whose new leader
// gives every session a fresh timeout).
func (f *Faults) FailAuth(i int) error {
	w := f.w
	s := w.sessions[i]
	if s.wire != nil {
		return ErrNoAuthFailure
	}
	if s.gone || s.authFailed {
		return ErrGone
	}
	if err := s.ctl.FailNextAuth(); err != nil {
		return err
	}
	s.failAuth = true
	return nil
}

// AuthFailed reports whether client i's authentication failed: it is in
// StateAuthFailed (or will be once it hears so). It asks the client
// library (the zkmem Conn), which fails the reconnection and ends its
// watches at once, within the step: a goroutine of the client that a
// watch's end wakes may ask before the scheduler follows the failure. Safe
// to call from any goroutine.
func (w *World) AuthFailed(i int) bool {
	zc := w.sessions[i].zc
	return zc != nil && zc.State() == zksim.StateAuthFailed
}

// refuseAuthFailed serves req, sent by a client whose authentication
// failed, as its client library does: at once, without the server, with
// zksim.ErrAuthFailed (a close: with nothing to do). A call to a service
// outside ZooKeeper (Conn.External) is not the client library's and goes
// on as usual.
func (w *World) refuseAuthFailed(s *session, req *request) {
	if req.name != opClose {
		req.res = result{err: zksim.ErrAuthFailed}
	} else {
		req.res = result{}
	}
	w.coverApplied(req)
	s.push(-1, item{kind: itemReply, req: req})
	if w.trace.on {
		w.stepf("%s refuse %s %s%s -> %s [auth failed]", s.name, req.name, req.desc.Path, req.watchMark(), req.summary())
	} else {
		w.step++
	}
}

// authFailedInZkmem follows a reconnection of s that zkmem failed
// (Control.FailNextAuth): the server (a member) heard the client (the
// session's expiry clock starts again, its timeout from now) and dropped
// it; the client stays down for good and hears StateAuthFailed, after
// StateDisconnected if it had not heard that (it was connected on another
// member, or dropped while paused). It returns the states the client is
// to hear. The session's generation stays: a paused client resumes when
// its pause ends (zkmem moves a paused client's Conn, whose reconnection
// may fail meanwhile); the expiries scheduled before (from the
// disconnection, or the pause) find the clock started again
// (authExpiryDue).
func (w *World) authFailedInZkmem(s *session, before zksim.State) []zksim.State {
	s.failAuth, s.authFailed = false, true
	w.coverStrike(s, "AuthFailed")
	s.down, s.downSince = true, w.now
	w.schedule(w.now+s.zc.SessionTimeout()-time.Nanosecond, &timed{kind: tExpire, s: s, gen: s.gen})
	var tell []zksim.State
	if before == zksim.StateConnected || s.hiddenDrop {
		tell = append(tell, zksim.StateDisconnected)
	}
	s.hiddenDrop = false
	return append(tell, zksim.StateAuthFailed)
}

// authExpiryDue reports whether the expiry of s, due now, may happen as
// far as a failed authentication goes: the server heard a client whose
// authentication failed at that reconnection (downSince), so its session
// expires a session timeout after it, not before.
func (w *World) authExpiryDue(s *session) bool {
	return !s.authFailed || w.now >= s.downSince+s.zc.SessionTimeout()-time.Nanosecond
}
