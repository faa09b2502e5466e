package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Every write consumes one zxid, failed or not (a failed write is logged as
// an error transaction); reads, sync and addAuth consume none; creating and
// closing a session are writes too (all checked on a real 3.8.0). The cases
// count the zxids consumed between two marks (e.czxid).
func zxidCases() []testCase {
	// consumes checks that write, run between two marks, consumes want zxids.
	consumes := func(e *env, want int64, what string, write func()) {
		e.t.Helper()
		before := e.czxid(e.c)
		write()
		after := e.czxid(e.c)
		require.Equal(e.t, want, after-before-1, "zxids consumed by %s", what)
	}
	return []testCase{
		{"create-consumes-one", func(e *env) {
			consumes(e, 1, "a create", func() { e.create(e.c, e.p("a"), nil, zksim.ModePersistent) })
		}},
		{"failed-create-consumes-one", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			consumes(e, 1, "a create that fails with NodeExists", func() {
				_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, zksim.OpenACL())
				e.is(err, zksim.ErrNodeExists, "create again")
			})
			consumes(e, 1, "a create that fails with NoNode", func() {
				_, err := e.c.Create(e.ctx, e.p("missing", "a"), nil, zksim.ModePersistent, zksim.OpenACL())
				e.is(err, zksim.ErrNoNode, "create under a missing parent")
			})
		}},
		{"set-consumes-one", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			consumes(e, 1, "a set", func() {
				st, err := e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
				require.NoError(e.t, err)
				require.Greater(e.t, st.Mzxid, st.Czxid)
			})
		}},
		{"failed-set-consumes-one", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			consumes(e, 1, "a set that fails with BadVersion", func() {
				_, err := e.c.Set(e.ctx, e.p("a"), nil, 9)
				e.is(err, zksim.ErrBadVersion, "set with version 9")
			})
			consumes(e, 1, "a set that fails with NoNode", func() {
				_, err := e.c.Set(e.ctx, e.p("missing"), nil, -1)
				e.is(err, zksim.ErrNoNode, "set a missing node")
			})
		}},
		{"delete-consumes-one", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			consumes(e, 1, "a delete", func() { require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), -1)) })
		}},
		{"failed-delete-consumes-one", func(e *env) {
			consumes(e, 1, "a delete that fails with NoNode", func() {
				e.is(e.c.Delete(e.ctx, e.p("missing"), -1), zksim.ErrNoNode, "delete a missing node")
			})
		}},
		{"set-acl-consumes-one", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			consumes(e, 1, "a setACL", func() {
				_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
				require.NoError(e.t, err)
			})
			consumes(e, 1, "a setACL that fails with BadVersion", func() {
				_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), 9)
				e.is(err, zksim.ErrBadVersion, "setACL with version 9")
			})
		}},
		{"multi-consumes-one", func(e *env) {
			consumes(e, 1, "a multi of three creates", func() {
				_, err := e.c.Multi(e.ctx,
					&zksim.CreateOp{Path: e.p("a"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
					&zksim.CreateOp{Path: e.p("b"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
					&zksim.CreateOp{Path: e.p("c"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				)
				require.NoError(e.t, err)
			})
		}},
		{"failed-multi-consumes-one", func(e *env) {
			consumes(e, 1, "a multi that fails", func() {
				_, err := e.c.Multi(e.ctx,
					&zksim.CreateOp{Path: e.p("a"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
					&zksim.CreateOp{Path: e.p("a"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				)
				e.is(err, zksim.ErrNodeExists, "multi creating a twice")
			})
		}},
		{"reads-consume-none", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			consumes(e, 0, "reads, sync and addAuth", func() {
				_, _, err := e.c.Get(e.ctx, e.p("a"))
				require.NoError(e.t, err)
				_, _, err = e.c.Exists(e.ctx, e.p("missing"))
				require.NoError(e.t, err)
				_, _, err = e.c.Children(e.ctx, e.p())
				require.NoError(e.t, err)
				_, _, err = e.c.GetACL(e.ctx, e.p("a"))
				require.NoError(e.t, err)
				_, _, _, err = e.c.GetW(e.ctx, e.p("a"))
				require.NoError(e.t, err)
				_, err = e.c.Sync(e.ctx, e.p("a"))
				require.NoError(e.t, err)
				require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("zxid:reader")))
			})
		}},
		{"failed-reads-consume-none", func(e *env) {
			consumes(e, 0, "failed reads", func() {
				_, _, err := e.c.Get(e.ctx, e.p("missing"))
				e.is(err, zksim.ErrNoNode, "get a missing node")
				_, _, err = e.c.Children(e.ctx, e.p("missing"))
				e.is(err, zksim.ErrNoNode, "children of a missing node")
			})
		}},
		{"session-create-consumes-one", func(e *env) {
			consumes(e, 1, "opening a session", func() { e.connect() })
		}},
		{"session-close-consumes-one", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("e1"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("e2"), nil, zksim.ModeEphemeral)
			consumes(e, 1, "closing a session that owns two ephemerals", func() { require.NoError(e.t, c2.Close()) })
		}},
		{"mzxid-is-the-set-zxid", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			st, err := e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, st.Mzxid+1, e.czxid(e.c))
		}},
	}
}
