package explore

import (
	"context"
	"errors"
	"slices"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// What a recipe call may return. The recipes document the errors of their
// blocking calls: every call waits out connection losses, so it returns
// nil (it did what it says), ctx's error (its context is done), or an
// error saying that its session can no longer act (zksim.ErrSessionExpired
// once the server has expired the session, zksim.ErrClosing once the Conn
// or the World is closed, zksim.ErrAuthFailed once the client has failed
// to authenticate: authfail.go). Any other error, or one of these when its cause
// is absent (ctx.Err() while ctx is not done, ErrSessionExpired from a
// session the server still has), is a dropped or invented error: a
// violation. Machines check the calls that document only these outcomes.

// explainError records a violation when err, returned by the call op of
// client c on session conn under ctx, is not one of the documented
// outcomes above.
func (w *world) explainError(c *client, conn *sim.Conn, ctx context.Context, op string, err error) {
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
	case errors.Is(err, zksim.ErrSessionExpired) && !w.sessionAlive(conn):
	case errors.Is(err, zksim.ErrClosing) && w.ctx.Err() != nil:
	case errors.Is(err, zksim.ErrAuthFailed) && w.sw.AuthFailed(conn.Index()):
	default:
		w.violate(kindUnexplainedError, "p%d's %s returned %v (session c%d live %v, context done %v)",
			c.idx, op, err, conn.Index(), w.sessionAlive(conn), ctx.Err() != nil)
	}
}

// checkSession: a call of a Renewing client that began on session conn and
// returns when the Renewing runs on another session returns ErrSessionExpired
// or ctx's error, never nil nor another error: what it did (a member node,
// a watch) is gone with its session (a wait that began on
// one session never ends on another, recipes/internal/retry). The node
// invariants of the call's own checks then do not apply (its session is
// gone), so this is the check that sees a call going on with the new
// session.
func (w *world) checkSession(c *client, conn *sim.Conn, ctx context.Context, op string, err error) {
	if c.renewing == nil {
		return
	}
	cur := c.renewing.Current()
	if cur == conn || errors.Is(err, zksim.ErrSessionExpired) || (ctx.Err() != nil && errors.Is(err, ctx.Err())) || (errors.Is(err, zksim.ErrClosing) && w.ctx.Err() != nil) {
		return
	}
	w.violate(kindRenewedSession, "p%d's %s began on session c%d and returned %v on session c%d (its Renewing renewed the expired session): want ErrSessionExpired", c.idx, op, conn.Index(), err, cur.Index())
}

// sessionAlive reports whether the server still has conn's session.
func (w *world) sessionAlive(conn *sim.Conn) bool {
	return slices.Contains(w.sw.Server().SessionIDs(), conn.SessionID())
}

// ownedUnder lists the children of dir whose ephemeral owner is session.
func (w *world) ownedUnder(dir string, session int64) []string {
	var out []string
	for _, n := range w.children(dir) {
		if w.owner(dir+"/"+n) == session {
			out = append(out, n)
		}
	}
	return out
}
