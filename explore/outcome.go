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
// or the World is closed). Any other error, or one of these when its cause
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
	default:
		w.violate("unexplained error", "p%d's %s returned %v (session c%d live %v, context done %v)",
			c.idx, op, err, conn.Index(), w.sessionAlive(conn), ctx.Err() != nil)
	}
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
