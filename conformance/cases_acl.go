package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// ACLs: the world, auth and digest schemes, the permission each operation
// needs, and the ACLs the server refuses.
func aclCases() []testCase {
	// noPerm makes p("n") with an ACL granting everything but perm, under a
	// parent granting the same, with a child p("n", "c").
	noPerm := func(e *env, perm int32) {
		e.create(e.c, e.p("n"), []byte("x"), zksim.ModePersistent)
		e.create(e.c, e.p("n", "c"), nil, zksim.ModePersistent)
		_, err := e.c.SetACL(e.ctx, e.p("n"), zksim.WorldACL(zksim.PermAll&^perm), -1)
		require.NoError(e.t, err)
	}
	cases := []testCase{
		{"open-acl-round-trip", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			acl, st, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.OpenACL(), acl)
			require.Equal(e.t, e.stat(e.c, e.p("a")), *st)
		}},
		{"set-acl-round-trip", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			want := append(zksim.DigestACL(zksim.PermAll, "alice", "secret"), zksim.ACL{Perms: zksim.PermRead | zksim.PermCreate, Scheme: "world", ID: "anyone"})
			_, err := e.c.SetACL(e.ctx, e.p("a"), want, -1)
			require.NoError(e.t, err)
			// ADMIN (through the digest) shows the digest ids unredacted.
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			acl, st, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, sortedACL(want), sortedACL(acl))
			require.Equal(e.t, int32(1), st.Aversion)
		}},
		{"read-only-allows-reads", func(e *env) {
			e.createACL(e.c, e.p("a"), []byte("x"), zksim.ModePersistent, zksim.ReadACL())
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("a")))
			require.Empty(e.t, e.children(e.c, e.p("a")))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.ReadACL(), acl)
		}},
		{"get-needs-read", func(e *env) {
			noPerm(e, zksim.PermRead)
			_, _, err := e.c.Get(e.ctx, e.p("n"))
			e.is(err, zksim.ErrNoAuth, "get without READ")
			_, _, w, err := e.c.GetW(e.ctx, e.p("n"))
			e.is(err, zksim.ErrNoAuth, "getW without READ")
			require.Nil(e.t, w, "getW without READ sets no watch")
		}},
		{"children-needs-read", func(e *env) {
			noPerm(e, zksim.PermRead)
			_, _, err := e.c.Children(e.ctx, e.p("n"))
			e.is(err, zksim.ErrNoAuth, "children without READ")
			_, _, w, err := e.c.ChildrenW(e.ctx, e.p("n"))
			e.is(err, zksim.ErrNoAuth, "childrenW without READ")
			require.Nil(e.t, w, "childrenW without READ sets no watch")
		}},
		{"get-acl-needs-read-or-admin", func(e *env) {
			// checked: 3.8 refuses getACL without READ or ADMIN.
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.WorldACL(zksim.PermWrite|zksim.PermCreate|zksim.PermDelete))
			_, _, err := e.c.GetACL(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoAuth, "getACL without READ or ADMIN")
		}},
		{"get-acl-with-admin-only", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.WorldACL(zksim.PermAdmin))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.WorldACL(zksim.PermAdmin), acl)
		}},
		{"get-acl-without-admin-hides-digests", func(e *env) {
			// checked: without ADMIN, getACL shows a digest id as "user:x".
			acl := append(zksim.DigestACL(zksim.PermAll, "alice", "secret"), zksim.ReadACL()...)
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, acl)
			got, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			want := []zksim.ACL{{Perms: zksim.PermAll, Scheme: "digest", ID: "alice:x"}, {Perms: zksim.PermRead, Scheme: "world", ID: "anyone"}}
			require.Equal(e.t, sortedACL(want), sortedACL(got))
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			got, _, err = e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, sortedACL(acl), sortedACL(got), "with ADMIN the digest is shown")
		}},
		{"exists-needs-no-permission", func(e *env) {
			e.createACL(e.c, e.p("a"), []byte("xyz"), zksim.ModePersistent, zksim.WorldACL(0))
			ok, st, err := e.c.Exists(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.True(e.t, ok)
			require.Equal(e.t, int32(3), st.DataLength)
			ok, _, w, err := e.c.ExistsW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.True(e.t, ok)
			require.NotNil(e.t, w)
		}},
		{"set-needs-write", func(e *env) {
			noPerm(e, zksim.PermWrite)
			_, err := e.c.Set(e.ctx, e.p("n"), []byte("y"), -1)
			e.is(err, zksim.ErrNoAuth, "set without WRITE")
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("n")))
			_, err = e.c.Multi(e.ctx, &zksim.SetOp{Path: e.p("n"), Data: []byte("y"), Version: -1})
			e.is(err, zksim.ErrNoAuth, "set op in a multi without WRITE")
		}},
		{"create-needs-create-on-parent", func(e *env) {
			noPerm(e, zksim.PermCreate)
			for _, mode := range []zksim.CreateMode{zksim.ModePersistent, zksim.ModeEphemeral, zksim.ModePersistentSequential, zksim.ModeContainer} {
				_, err := e.c.Create(e.ctx, e.p("n", "d"), nil, mode, zksim.OpenACL())
				e.is(err, zksim.ErrNoAuth, "create a %v child without CREATE on the parent", mode)
			}
			_, err := e.c.Multi(e.ctx, &zksim.CreateOp{Path: e.p("n", "d"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()})
			e.is(err, zksim.ErrNoAuth, "create op in a multi without CREATE on the parent")
			require.Equal(e.t, []string{"c"}, e.children(e.c, e.p("n")))
		}},
		{"delete-needs-delete-on-parent", func(e *env) {
			noPerm(e, zksim.PermDelete)
			e.is(e.c.Delete(e.ctx, e.p("n", "c"), -1), zksim.ErrNoAuth, "delete a child without DELETE on the parent")
			_, err := e.c.Multi(e.ctx, &zksim.DeleteOp{Path: e.p("n", "c"), Version: -1})
			e.is(err, zksim.ErrNoAuth, "delete op in a multi without DELETE on the parent")
			require.True(e.t, e.exists(e.c, e.p("n", "c")))
		}},
		{"delete-ignores-own-acl", func(e *env) {
			// checked: only the parent's DELETE counts.
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.WorldACL(0))
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), -1))
		}},
		{"set-acl-needs-admin", func(e *env) {
			noPerm(e, zksim.PermAdmin)
			_, err := e.c.SetACL(e.ctx, e.p("n"), zksim.OpenACL(), -1)
			e.is(err, zksim.ErrNoAuth, "setACL without ADMIN")
		}},
		{"perms-zero-is-valid", func(e *env) {
			e.createACL(e.c, e.p("a"), []byte("x"), zksim.ModePersistent, zksim.WorldACL(0))
			_, _, err := e.c.Get(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoAuth, "get a node nobody may read")
			_, err = e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			e.is(err, zksim.ErrNoAuth, "setACL on a node nobody may administer")
		}},
		{"set-acl-takes-effect", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), []byte("1"), -1)
			require.NoError(e.t, err)
			_, err = e.c.SetACL(e.ctx, e.p("a"), zksim.ReadACL(), -1)
			require.NoError(e.t, err)
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("2"), -1)
			e.is(err, zksim.ErrNoAuth, "set after the ACL became read-only")
		}},
		{"acl-applies-to-every-session", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.ReadACL())
			c2 := e.connect()
			_, err := c2.Set(e.ctx, e.p("a"), []byte("x"), -1)
			e.is(err, zksim.ErrNoAuth, "another session sets a read-only node")
		}},
		{"invalid-acl-empty-create", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, nil)
			e.is(err, zksim.ErrInvalidACL, "create with a nil ACL")
			_, err = e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, []zksim.ACL{})
			e.is(err, zksim.ErrInvalidACL, "create with an empty ACL")
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
		{"invalid-acl-empty-set-acl", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.SetACL(e.ctx, e.p("a"), nil, -1)
			e.is(err, zksim.ErrInvalidACL, "setACL with an empty ACL")
			require.Zero(e.t, e.stat(e.c, e.p("a")).Aversion)
		}},
		{"invalid-acl-multi-create", func(e *env) {
			_, err := e.c.Multi(e.ctx, &zksim.CreateOp{Path: e.p("a"), Mode: zksim.ModePersistent})
			e.is(err, zksim.ErrInvalidACL, "create op with an empty ACL")
		}},
		{"invalid-acl-world-not-anyone", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, []zksim.ACL{{Perms: zksim.PermAll, Scheme: "world", ID: "someone"}})
			e.is(err, zksim.ErrInvalidACL, "create with world:someone")
		}},
		{"invalid-acl-unknown-scheme", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, []zksim.ACL{{Perms: zksim.PermAll, Scheme: "nosuchscheme", ID: "x"}})
			e.is(err, zksim.ErrInvalidACL, "create with an unknown scheme")
		}},
		{"invalid-acl-digest-without-colon", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, []zksim.ACL{{Perms: zksim.PermAll, Scheme: "digest", ID: "nocolon"}})
			e.is(err, zksim.ErrInvalidACL, "create with digest id without a colon")
		}},
		{"invalid-acl-one-bad-entry", func(e *env) {
			acl := append(zksim.OpenACL(), zksim.ACL{Perms: zksim.PermAll, Scheme: "world", ID: "someone"})
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, acl)
			e.is(err, zksim.ErrInvalidACL, "create with one bad entry among good ones")
		}},
		{"creator-acl-without-auth-invalid", func(e *env) {
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
			e.is(err, zksim.ErrInvalidACL, "create with the creator ACL and no auth")
			_, err = e.c.Create(e.ctx, e.p("b"), nil, zksim.ModePersistent, append(zksim.CreatorACL(zksim.PermAll), zksim.OpenACL()...))
			e.is(err, zksim.ErrInvalidACL, "create with the creator ACL plus world and no auth")
		}},
		{"creator-acl-becomes-digest", func(e *env) {
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.DigestACL(zksim.PermAll, "alice", "secret"), acl)
		}},
		{"creator-acl-two-identities", func(e *env) {
			// checked: one entry per digest identity of the session.
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:a")))
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("bob:b")))
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, append(zksim.CreatorACL(zksim.PermRead), zksim.OpenACL()...))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			want := append(append(zksim.DigestACL(zksim.PermRead, "alice", "a"), zksim.DigestACL(zksim.PermRead, "bob", "b")...), zksim.OpenACL()...)
			require.Equal(e.t, sortedACL(want), sortedACL(acl))
		}},
		{"duplicate-entries-collapse", func(e *env) {
			// checked
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, append(zksim.OpenACL(), zksim.OpenACL()...))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.OpenACL(), acl)
		}},
		{"digest-needs-matching-auth", func(e *env) {
			e.createACL(e.c, e.p("a"), []byte("x"), zksim.ModePersistent, zksim.DigestACL(zksim.PermAll, "alice", "secret"))
			c2 := e.connect()
			_, _, err := c2.Get(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoAuth, "get a digest-protected node without auth")
			require.NoError(e.t, c2.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			got, _, err := c2.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err, "get after addAuth")
			require.Equal(e.t, []byte("x"), got)
			_, err = c2.Set(e.ctx, e.p("a"), []byte("y"), -1)
			require.NoError(e.t, err, "set after addAuth")
		}},
		{"digest-wrong-password", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.DigestACL(zksim.PermAll, "alice", "secret"))
			c2 := e.connect()
			require.NoError(e.t, c2.AddAuth(e.ctx, "digest", []byte("alice:wrong")))
			_, _, err := c2.Get(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoAuth, "get with the wrong password")
		}},
		{"digest-auth-is-per-session", func(e *env) {
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
			_, _, err := e.c.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err, "the creator reads")
			c2 := e.connect()
			_, _, err = c2.Get(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoAuth, "another session reads")
		}},
		{"entries-add-up", func(e *env) {
			acl := append(zksim.ReadACL(), zksim.DigestACL(zksim.PermWrite, "alice", "secret")...)
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, acl)
			c2 := e.connect()
			_, _, err := c2.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err, "anyone reads")
			_, err = c2.Set(e.ctx, e.p("a"), []byte("x"), -1)
			e.is(err, zksim.ErrNoAuth, "set without the digest")
			require.NoError(e.t, c2.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			_, err = c2.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err, "set with the digest")
			_, err = c2.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			e.is(err, zksim.ErrNoAuth, "setACL: neither entry grants ADMIN")
		}},
		{"digest-id-matches-zookeeper", func(e *env) {
			// zksim.DigestID is ZooKeeper's digest: the server accepts
			// "user:password" auth for the id it computes.
			require.Equal(e.t, "alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=", zksim.DigestID("alice", "secret"))
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, []zksim.ACL{{Perms: zksim.PermRead, Scheme: "digest", ID: zksim.DigestID("alice", "secret")}})
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:secret")))
			_, _, err := e.c.Get(e.ctx, e.p("a"))
			require.NoError(e.t, err)
		}},
	}
	return cases
}
