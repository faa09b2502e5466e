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
// returns ErrNotDisconnected unless the Conn is in StateDisconnected.
func (c *Conn) FailAuth() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != zksim.StateDisconnected {
		return ErrNotDisconnected
	}
	if c.redial != nil {
		c.redial.Stop()
		c.redial = nil
	}
	c.publish(zksim.StateAuthFailed)
	c.endWatches(zksim.StateAuthFailed, zksim.ErrAuthFailed)
	return nil
}
