package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// A request larger than jute.maxbuffer makes the server close the
// connection: the client sees connection loss, not an error code, and the
// request is not applied (checked). The session survives: the client
// reconnects to it. The oversized requests go through a session of their
// own, big; e.c checks the outcome.
func payloadCases() []testCase {
	over := func(e *env) []byte { return make([]byte, e.facts().MaxRequestBytes+1) }
	// A request carries a few dozen bytes besides the data; 1 KiB under
	// the limit is safely accepted.
	under := func(e *env) []byte { return make([]byte, e.facts().MaxRequestBytes-1024) }
	return []testCase{
		{"under-limit-accepted", func(e *env) {
			data := under(e)
			data[0], data[len(data)-1] = 1, 2
			e.create(e.c, e.p("a"), data, zksim.ModePersistent)
			got, st, err := e.c.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, data, got)
			require.Equal(e.t, int32(len(data)), st.DataLength)
			_, err = e.c.Set(e.ctx, e.p("a"), data[1:], -1)
			require.NoError(e.t, err)
		}},
		{"over-limit-create-loses-connection", func(e *env) {
			big := e.connect()
			_, err := big.Create(e.ctx, e.p("a"), over(e), zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrConnectionLoss, "create with %d bytes of data", e.facts().MaxRequestBytes+1)
			require.False(e.t, e.exists(e.c, e.p("a")), "the oversized create was applied")
		}},
		{"over-limit-set-loses-connection", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			big := e.connect()
			_, err := big.Set(e.ctx, e.p("a"), over(e), -1)
			e.is(err, zksim.ErrConnectionLoss, "set with %d bytes of data", e.facts().MaxRequestBytes+1)
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("a")))
			require.Zero(e.t, e.stat(e.c, e.p("a")).Version)
		}},
		{"over-limit-multi-loses-connection", func(e *env) {
			big := e.connect()
			half := make([]byte, e.facts().MaxRequestBytes/2+1)
			_, err := big.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("a"), Data: half, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("b"), Data: half, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
			)
			e.is(err, zksim.ErrConnectionLoss, "multi whose ops together exceed the limit")
			require.Empty(e.t, e.children(e.c, e.p()))
		}},
		{"session-survives-the-lost-connection", func(e *env) {
			big := e.connect()
			e.create(big, e.p("e"), nil, zksim.ModeEphemeral)
			sid := big.SessionID()
			_, err := big.Create(e.ctx, e.p("a"), over(e), zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrConnectionLoss, "oversized create")
			e.poll(eventWait+e.facts().MaxSessionTimeout, "the session reconnects", func() bool {
				_, _, err := big.Get(e.ctx, e.p("e"))
				return err == nil
			})
			require.Equal(e.t, sid, big.SessionID())
			require.Equal(e.t, sid, e.stat(e.c, e.p("e")).EphemeralOwner)
			e.create(big, e.p("b"), nil, zksim.ModePersistent)
		}},
	}
}
