package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Session expiry is decided by the server: all the session's ephemerals go
// in one transaction, other sessions get the events, and the expired
// client learns of it when it next hears from the server: state
// StateExpired, every call ErrSessionExpired, every watch EventNotWatching.
func expiryCases() []testCase {
	// victim opens a session with a short timeout, so expiring it is quick,
	// but not the shortest the server allows: a 200ms session on a loaded
	// machine can expire on its own before the case expires it (a client
	// gives up on a connection after 2/3 of the timeout without a reply).
	victim := func(e *env) zksim.Conn {
		e.t.Helper()
		timeout := max(e.facts().MinSessionTimeout, time.Second)
		return e.connectTimeout(min(timeout, e.facts().MaxSessionTimeout))
	}
	expire := func(e *env, c zksim.Conn) {
		e.t.Helper()
		require.NoError(e.t, e.b.Expire(e.ctx, c), "backend %s: Expire", e.b.Name)
	}
	// expireAndWait expires c and waits until c knows.
	expireAndWait := func(e *env, c zksim.Conn) {
		e.t.Helper()
		states := c.SessionEvents(e.ctx)
		expire(e, c)
		e.waitState(states, zksim.StateExpired, "the expired Conn's session events")
	}
	return []testCase{
		{"deletes-ephemerals", func(e *env) {
			e.needExpire()
			v := victim(e)
			e.create(v, e.p("e"), nil, zksim.ModeEphemeral)
			e.create(v, e.p("s-"), nil, zksim.ModeEphemeralSequential)
			e.create(v, e.p("p"), nil, zksim.ModePersistent)
			expire(e, v)
			require.Equal(e.t, []string{"p"}, e.children(e.c, e.p()))
		}},
		{"deletes-in-one-transaction", func(e *env) {
			e.needExpire()
			v := victim(e)
			e.create(e.c, e.p("p1"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("p2"), nil, zksim.ModePersistent)
			e.create(v, e.p("p1", "e"), nil, zksim.ModeEphemeral)
			e.create(v, e.p("p2", "e"), nil, zksim.ModeEphemeral)
			expire(e, v)
			p1, p2 := e.stat(e.c, e.p("p1")), e.stat(e.c, e.p("p2"))
			require.Equal(e.t, p1.Pzxid, p2.Pzxid, "both parents changed in one transaction")
			require.Equal(e.t, int32(2), p1.Cversion)
			require.Equal(e.t, int32(2), p2.Cversion)
			require.Zero(e.t, p1.NumChildren+p2.NumChildren)
		}},
		{"notifies-other-sessions", func(e *env) {
			e.needExpire()
			v := victim(e)
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(v, e.p("d", "e"), nil, zksim.ModeEphemeral)
			_, _, dataCh, err := e.c.GetW(e.ctx, e.p("d", "e"))
			require.NoError(e.t, err)
			_, _, childCh, err := e.c.ChildrenW(e.ctx, e.p("d"))
			require.NoError(e.t, err)
			expire(e, v)
			e.expectEvent(dataCh, zksim.EventNodeDeleted, e.p("d", "e"))
			e.expectEvent(childCh, zksim.EventNodeChildrenChanged, e.p("d"))
		}},
		{"persistent-nodes-survive", func(e *env) {
			e.needExpire()
			v := victim(e)
			e.create(v, e.p("p"), []byte("x"), zksim.ModePersistent)
			e.create(v, e.p("c"), nil, zksim.ModeContainer)
			expireAndWait(e, v)
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("p")))
			require.True(e.t, e.exists(e.c, e.p("c")))
		}},
		{"conn-reports-expired", func(e *env) {
			e.needExpire()
			v := victim(e)
			expireAndWait(e, v)
			require.Equal(e.t, zksim.StateExpired, v.State())
		}},
		{"calls-fail-session-expired", func(e *env) {
			e.needExpire()
			v := victim(e)
			expireAndWait(e, v)
			_, _, err := v.Get(e.ctx, e.p())
			e.is(err, zksim.ErrSessionExpired, "get on an expired Conn")
			_, err = v.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrSessionExpired, "create on an expired Conn")
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
		{"watches-end-not-watching", func(e *env) {
			e.needExpire()
			v := victim(e)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, _, dataCh, err := v.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, _, existCh, err := v.ExistsW(e.ctx, e.p("missing"))
			require.NoError(e.t, err)
			_, _, childCh, err := v.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			expireAndWait(e, v)
			e.notWatching(dataCh, zksim.ErrSessionExpired, "data watch of an expired session")
			e.notWatching(existCh, zksim.ErrSessionExpired, "exists watch of an expired session")
			e.notWatching(childCh, zksim.ErrSessionExpired, "child watch of an expired session")
		}},
		{"close-after-expiry", func(e *env) {
			e.needExpire()
			v := victim(e)
			expireAndWait(e, v)
			_ = v.Close() // may report the expiry; must not hang or panic
			_, _, err := v.Get(e.ctx, e.p())
			require.Error(e.t, err, "get on a closed, expired Conn")
		}},
		{"timeout-while-disconnected", func(e *env) {
			// No Expire control: the connection stays down longer than the
			// session timeout, and the server expires the session itself.
			e.needDisconnect()
			v := victim(e)
			e.create(v, e.p("e"), nil, zksim.ModeEphemeral)
			require.NoError(e.t, e.b.Disconnect(e.ctx, v))
			e.poll(eventWait+2*v.SessionTimeout(), "expiry of the disconnected session", func() bool {
				return !e.exists(e.c, e.p("e"))
			})
			e.is(e.b.Reconnect(e.ctx, v), zksim.ErrSessionExpired, "reconnect after the session timed out")
			require.Equal(e.t, zksim.StateExpired, v.State())
			_, _, err := v.Get(e.ctx, e.p())
			e.is(err, zksim.ErrSessionExpired, "get on the expired Conn")
		}},
	}
}
