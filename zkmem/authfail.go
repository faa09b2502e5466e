package zkmem

import (
	"errors"

	"github.com/zksim/zksim"
)

// ErrNotDisconnected is returned by Conn.FailAuth for a Conn whose
// connection is not down.
var ErrNotDisconnected = errors.New("zkmem: the Conn is not disconnected")

// FailAuth moves a disconnected Conn to StateAuthFailed, as ZooKeeper's
// Java client ends when it fails to authenticate on a reconnection (a
// rotated SASL credential): AUTH_FAILED is terminal there. The Conn stops
// reconnecting; every later call fails with zksim.ErrAuthFailed without
// reaching the server (see stateErr); its one-shot and persistent watches
// end with EventNotWatching carrying zksim.ErrAuthFailed, and its
// session-event channels get StateAuthFailed. The session, which the
// server no longer hears from, lives on until it expires (deleting its
// ephemeral nodes), which the Conn is not told. Close then only closes
// the Conn's channels.
//
// It is a client-side control for simulators (package sim's
// Faults.FailAuth): the server's side is the connection already down. It
// returns ErrNotDisconnected unless the Conn is in StateDisconnected. To
// fail the reconnection a Conn makes by itself (an ensemble Conn moving
// to another member), arm Control.FailNextAuth instead.
func (c *Conn) FailAuth() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != zksim.StateDisconnected {
		return ErrNotDisconnected
	}
	c.authFailed()
	return nil
}

// authFailed ends the client library: StateAuthFailed, no more
// reconnecting, watches ended. Called with c.mu held, in
// StateDisconnected.
func (c *Conn) authFailed() {
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	c.publish(zksim.StateAuthFailed)
	c.endWatches(zksim.StateAuthFailed, zksim.ErrAuthFailed)
}

// FailNextAuth arms a failed authentication for the next reconnection of
// the session's in-process Conn (Control.Reconnect, or on an ensemble the
// Conn's own move to another member): when a server takes the
// reconnection, it hears the client (the session's expiry clock starts
// afresh, unless the member serves read-only, which the leader does not
// hear of), refuses its credentials and closes the connection, and the
// Conn ends as Conn.FailAuth ends it (StateAuthFailed), with the
// reconnection returning zksim.ErrAuthFailed. The session lives on,
// unheard, until it expires. A reconnection that finds the session
// expired learns that instead (the fault stays armed, of no use). It
// returns ErrNotInProcess for a session whose client is not an in-process
// Conn (a remote client reconnects by itself).
func (c *Control) FailNextAuth() error {
	s := c.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := c.sink.(reconnector); !ok {
		return ErrNotInProcess
	}
	c.failAuth = true
	return nil
}

// refuseAuth ends the reconnection of c to sess, which a server took, if
// Control.FailNextAuth armed a failed authentication: the server heard
// the client (heard: its expiry clock starts afresh) and dropped the
// connection; the Conn is done (authFailed). It reports whether it did.
// Called with srv.mu and c.mu held, c in StateDisconnected, sess live and
// detached.
func (c *Conn) refuseAuth(sess *Session, heard bool) bool {
	if !sess.failAuth {
		return false
	}
	sess.failAuth = false
	if heard {
		sess.startExpiry(sess.timeout)
	}
	c.authFailed()
	return true
}
