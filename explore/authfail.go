package explore

import (
	"slices"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
)

// Authentication failing on reconnect (faults.FailAuth), drawn while a
// recipe call waits out a connection loss: when the client reconnects it
// fails to authenticate (a rotated credential) and enters
// StateAuthFailed for good, as ZooKeeper's Java client does; every call it
// makes then fails with zksim.ErrAuthFailed, and the server expires its
// session a session timeout later. The call that was waiting must give up
// with an error (retry.WaitConnected returns zksim.ErrAuthFailed), never
// return nil as if it had done its work (unless a reply the server sent
// before the connection dropped answered it: authFailureIgnored), and a
// hold of the client must
// become Lost (the machines' own checks: the lock machine's "hold not
// lost"). Once the process has heard of the failure and runs nothing, it
// makes a new client, as after an expiry (look).

// failAuthMidCall arms a failed authentication for the reconnection of a
// client drawn among the awake ones that run an operation while their
// connection is down, skipping the action when there is none. It marks
// the operations under way: each must return an error if the failure
// strikes before it returns (checkAuthOutcome).
func (w *world) failAuthMidCall(t *rapid.T) {
	var waiting []*client
	for _, c := range w.awake() {
		i := c.conn.Index()
		if c.busy("") && c.conn.State() == zksim.StateDisconnected && w.sw.Live(i) && !w.sw.AuthFailed(i) {
			waiting = append(waiting, c)
		}
	}
	c := drawClient(t, waiting, "fail auth")
	c.armAuthCheck(c.conn.Index())
	w.inject(t, faults.FailAuth(c.conn.Index()))
}

// armAuthCheck marks the operations of c under way that began on session,
// the client about to fail authentication: each must return an error if
// the failure strikes before it returns (checkAuthOutcome). An operation
// begun on a session its Renewing has left since works for that session,
// which is gone whatever happens to this one: it is not held to the
// check.
func (c *client) armAuthCheck(session int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.authStruck == nil {
		c.authStruck = map[string]int{}
	}
	for name := range c.running {
		if c.startedOn[name] == session {
			c.authStruck[name] = session
		}
	}
}

// nilAfterAuthFailure are the operations that may return nil although
// their client failed to authenticate while they ran, and why.
var nilAfterAuthFailure = map[string]string{
	"close": "a Close of a failed client has nothing to do and returns nil, as ZooKeeper.close does",
	"acquire": "an acquisition may have been granted before the failure, and still be releasing what it used to wait " +
		"(a semaphore's internal lock) when it strikes: it returns its hold, which must say Lost (the lock machine's \"hold not lost\")",
	"write": "a holder's write goes to a service outside ZooKeeper",
}

// The election API's operations (apiOps) are left out too: most run on
// sessions of their own (electionAPI.apiConn), not on the client's, and
// the election machine checks every result (failedOK).

// checkAuthOutcome checks what the operation name of c returned, err,
// when it was under way as its client (session) was armed to fail
// authentication: once the failure struck, nil is a violation (but see
// nilAfterAuthFailure and authFailureIgnored).
func (w *world) checkAuthOutcome(c *client, name string, session int, err error) {
	if _, ok := nilAfterAuthFailure[name]; ok || slices.Contains(apiOps, name) {
		return
	}
	heard := zksim.StateDisconnected
	if sc := w.sw.Conn(session); sc != nil {
		heard = sc.State()
	}
	if authFailureIgnored(err, w.sw.AuthFailed(session), heard) {
		w.violate(kindAuthFailureIgnored, "p%d's %s was waiting out a connection loss when its client (c%d) failed to authenticate, and returned nil: want an error (ErrAuthFailed)", c.idx, name, session)
	}
}

// authFailureIgnored reports whether an operation that returned err
// ignored a failed authentication of its client: failed says the client
// failed to authenticate (World.AuthFailed: the client library knows it,
// although the process may not have heard yet), heard is the state the
// process had heard of its client when the operation returned.
//
// A nil is a violation only once the process has heard the connection
// drop that the failed reconnection followed (or the failure itself). A
// nil returned while the process still hears StateConnected came from a
// reply the server sent on the connection before it dropped: the
// simulator's FIFO, as one TCP connection, delivers it before the drop, as
// ZooKeeper's Java client reads a reply that precedes the end of its
// socket and finishes the call before it notices the loss (and only then
// reconnects and meets AUTH_FAILED). On an ensemble zkmem fails the
// reconnection within the step that dropped the member (a crash), so
// World.AuthFailed says so while such a reply, held back by a Delay, is
// still on its way.
func authFailureIgnored(err error, failed bool, heard zksim.State) bool {
	return err == nil && failed && heard != zksim.StateConnected
}

// authFailed reports whether c's process has heard that its client's
// authentication failed: its session is of no use any more.
func (c *client) authFailed() bool { return c.conn.State() == zksim.StateAuthFailed }
