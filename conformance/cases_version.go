package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Versioned setData, delete and setACL: version -1 matches any version.
func versionCases() []testCase {
	return []testCase{
		{"set-matching-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			for v := int32(0); v < 3; v++ {
				st, err := e.c.Set(e.ctx, e.p("a"), []byte{byte(v)}, v)
				require.NoError(e.t, err, "set with version %d", v)
				require.Equal(e.t, v+1, st.Version)
			}
		}},
		{"set-stale-version", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), []byte("y"), 0)
			require.NoError(e.t, err)
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("z"), 0)
			e.is(err, zksim.ErrBadVersion, "set with version 0 when it is 1")
			require.Equal(e.t, []byte("y"), e.data(e.c, e.p("a")))
		}},
		{"set-future-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), []byte("y"), 1)
			e.is(err, zksim.ErrBadVersion, "set with version 1 when it is 0")
		}},
		{"set-any-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			for i := 0; i < 3; i++ {
				_, err := e.c.Set(e.ctx, e.p("a"), nil, -1)
				require.NoError(e.t, err)
			}
			require.Equal(e.t, int32(3), e.stat(e.c, e.p("a")).Version)
		}},
		{"set-version-minus-two", func(e *env) {
			// Only -1 is the wildcard.
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), nil, -2)
			e.is(err, zksim.ErrBadVersion, "set with version -2")
		}},
		{"set-missing-no-node", func(e *env) {
			_, err := e.c.Set(e.ctx, e.p("missing"), nil, -1)
			e.is(err, zksim.ErrNoNode, "set a missing node")
		}},
		{"delete-matching-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), nil, -1)
			require.NoError(e.t, err)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), 1))
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
		{"delete-stale-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), nil, -1)
			require.NoError(e.t, err)
			e.is(e.c.Delete(e.ctx, e.p("a"), 0), zksim.ErrBadVersion, "delete with version 0 when it is 1")
			require.True(e.t, e.exists(e.c, e.p("a")))
		}},
		{"delete-any-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), nil, -1)
			require.NoError(e.t, err)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), -1))
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
		{"delete-missing-no-node", func(e *env) {
			e.is(e.c.Delete(e.ctx, e.p("missing"), -1), zksim.ErrNoNode, "delete a missing node")
		}},
		{"delete-not-empty", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.is(e.c.Delete(e.ctx, e.p("a"), -1), zksim.ErrNotEmpty, "delete a node with a child")
			e.is(e.c.Delete(e.ctx, e.p("a"), 0), zksim.ErrNotEmpty, "delete a node with a child, right version")
			require.True(e.t, e.exists(e.c, e.p("a", "b")))
		}},
		{"delete-not-empty-ephemeral-child", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			c2 := e.connect()
			e.create(c2, e.p("a", "e"), nil, zksim.ModeEphemeral)
			e.is(e.c.Delete(e.ctx, e.p("a"), -1), zksim.ErrNotEmpty, "delete a node with an ephemeral child")
		}},
		{"set-acl-matching-aversion", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			for v := int32(0); v < 3; v++ {
				st, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), v)
				require.NoError(e.t, err, "setACL with version %d", v)
				require.Equal(e.t, v+1, st.Aversion)
			}
		}},
		{"set-acl-stale-aversion", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), 0)
			require.NoError(e.t, err)
			_, err = e.c.SetACL(e.ctx, e.p("a"), zksim.ReadACL(), 0)
			e.is(err, zksim.ErrBadVersion, "setACL with aversion 0 when it is 1")
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.OpenACL(), acl)
		}},
		{"set-acl-any-aversion", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			st, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, int32(2), st.Aversion)
		}},
		{"set-acl-checks-aversion-not-version", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), nil, -1)
			require.NoError(e.t, err)
			_, err = e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), 1)
			e.is(err, zksim.ErrBadVersion, "setACL with the data version")
			_, err = e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), 0)
			require.NoError(e.t, err)
		}},
		{"set-checks-version-not-aversion", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			_, err = e.c.Set(e.ctx, e.p("a"), nil, 1)
			e.is(err, zksim.ErrBadVersion, "set with the ACL version")
			e.is(e.c.Delete(e.ctx, e.p("a"), 1), zksim.ErrBadVersion, "delete with the ACL version")
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), 0))
		}},
		{"set-acl-missing-no-node", func(e *env) {
			_, err := e.c.SetACL(e.ctx, e.p("missing"), zksim.OpenACL(), -1)
			e.is(err, zksim.ErrNoNode, "setACL on a missing node")
		}},
	}
}
