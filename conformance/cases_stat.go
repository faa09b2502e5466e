package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Stat fields (DataTree.createStat, DataNode.copyStat). The client-visible
// cversion is child creates plus child deletes.
func statCases() []testCase {
	return []testCase{
		{"after-create", func(e *env) {
			e.create(e.c, e.p("a"), []byte("hello"), zksim.ModePersistent)
			st := e.stat(e.c, e.p("a"))
			require.NotZero(e.t, st.Czxid, "%v", st)
			require.Equal(e.t, st.Czxid, st.Mzxid, "mzxid = czxid: %v", st)
			require.Equal(e.t, st.Czxid, st.Pzxid, "pzxid = czxid: %v", st)
			require.Positive(e.t, st.Ctime, "%v", st)
			require.Equal(e.t, st.Ctime, st.Mtime, "mtime = ctime: %v", st)
			require.Zero(e.t, st.Version, "%v", st)
			require.Zero(e.t, st.Cversion, "%v", st)
			require.Zero(e.t, st.Aversion, "%v", st)
			require.Zero(e.t, st.EphemeralOwner, "%v", st)
			require.Equal(e.t, int32(5), st.DataLength, "%v", st)
			require.Zero(e.t, st.NumChildren, "%v", st)
		}},
		{"after-set", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			before := e.stat(e.c, e.p("a"))
			got, err := e.c.Set(e.ctx, e.p("a"), []byte("longer"), -1)
			require.NoError(e.t, err)
			after := e.stat(e.c, e.p("a"))
			require.Equal(e.t, after, *got, "Set returns the new Stat")
			require.Greater(e.t, after.Mzxid, before.Mzxid, "%v", after)
			require.GreaterOrEqual(e.t, after.Mtime, before.Mtime, "%v", after)
			require.Equal(e.t, int32(1), after.Version, "%v", after)
			require.Equal(e.t, int32(6), after.DataLength, "%v", after)
			want := before
			want.Mzxid, want.Mtime, want.Version, want.DataLength = after.Mzxid, after.Mtime, 1, 6
			require.Equal(e.t, want, after, "only mzxid, mtime, version and dataLength change")
		}},
		{"set-same-data-bumps-version", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			before := e.stat(e.c, e.p("a"))
			st, err := e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, int32(1), st.Version)
			require.Greater(e.t, st.Mzxid, before.Mzxid)
		}},
		{"version-counts-sets", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			var last int64
			for i := int32(1); i <= 5; i++ {
				st, err := e.c.Set(e.ctx, e.p("a"), []byte{byte(i)}, -1)
				require.NoError(e.t, err)
				require.Equal(e.t, i, st.Version)
				require.Greater(e.t, st.Mzxid, last)
				last = st.Mzxid
			}
		}},
		{"after-set-acl", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			before := e.stat(e.c, e.p("a"))
			got, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			after := e.stat(e.c, e.p("a"))
			require.Equal(e.t, after, *got, "SetACL returns the new Stat")
			want := before
			want.Aversion = 1
			require.Equal(e.t, want, after, "setACL bumps aversion only")
		}},
		{"parent-after-child-create", func(e *env) {
			e.create(e.c, e.p("d"), []byte("x"), zksim.ModePersistent)
			before := e.stat(e.c, e.p("d"))
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			child := e.stat(e.c, e.p("d", "c"))
			after := e.stat(e.c, e.p("d"))
			want := before
			want.Cversion, want.NumChildren, want.Pzxid = 1, 1, child.Czxid
			require.Equal(e.t, want, after, "a child create sets cversion 1, numChildren 1, pzxid = the child's czxid")
		}},
		{"parent-after-child-delete", func(e *env) {
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			child := e.stat(e.c, e.p("d", "c"))
			mid := e.stat(e.c, e.p("d"))
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("d", "c"), -1))
			next := e.czxid(e.c)
			after := e.stat(e.c, e.p("d"))
			want := mid
			want.Cversion, want.NumChildren, want.Pzxid = 2, 0, next-1
			require.Equal(e.t, want, after, "a child delete sets cversion 2, numChildren 0, pzxid = the delete's zxid")
			require.Greater(e.t, after.Pzxid, child.Czxid)
		}},
		{"cversion-creates-plus-deletes", func(e *env) {
			// Checked on a real server: create + delete + sequential create
			// under a fresh node gives cversion 3.
			e.create(e.c, e.p("t"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("t", "a"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("t", "a"), -1))
			e.create(e.c, e.p("t", "s-"), nil, zksim.ModePersistentSequential)
			st := e.stat(e.c, e.p("t"))
			require.Equal(e.t, int32(3), st.Cversion, "%v", st)
			require.Equal(e.t, int32(1), st.NumChildren, "%v", st)
		}},
		{"cversion-counts-ephemerals-removed-at-close", func(e *env) {
			e.create(e.c, e.p("t"), nil, zksim.ModePersistent)
			c2 := e.connect()
			e.create(c2, e.p("t", "e1"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("t", "e2"), nil, zksim.ModeEphemeral)
			require.NoError(e.t, c2.Close())
			next := e.czxid(e.c)
			st := e.stat(e.c, e.p("t"))
			require.Equal(e.t, int32(4), st.Cversion, "%v", st)
			require.Zero(e.t, st.NumChildren, "%v", st)
			require.Equal(e.t, next-1, st.Pzxid, "pzxid is the close's zxid: %v", st)
		}},
		{"grandchild-leaves-parent-alone", func(e *env) {
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			before := e.stat(e.c, e.p("d"))
			e.create(e.c, e.p("d", "c", "g"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("d", "c", "g"), -1))
			require.Equal(e.t, before, e.stat(e.c, e.p("d")))
		}},
		{"child-set-leaves-parent-alone", func(e *env) {
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			before := e.stat(e.c, e.p("d"))
			_, err := e.c.Set(e.ctx, e.p("d", "c"), []byte("x"), -1)
			require.NoError(e.t, err)
			_, err = e.c.SetACL(e.ctx, e.p("d", "c"), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, before, e.stat(e.c, e.p("d")))
		}},
		{"set-leaves-pzxid-and-cversion", func(e *env) {
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			before := e.stat(e.c, e.p("d"))
			st, err := e.c.Set(e.ctx, e.p("d"), []byte("x"), -1)
			require.NoError(e.t, err)
			require.Equal(e.t, before.Pzxid, st.Pzxid)
			require.Equal(e.t, before.Cversion, st.Cversion)
			require.Equal(e.t, int32(1), st.NumChildren)
		}},
		{"get-exists-children-agree", func(e *env) {
			e.create(e.c, e.p("d"), []byte("abc"), zksim.ModePersistent)
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			_, gst, err := e.c.Get(e.ctx, e.p("d"))
			require.NoError(e.t, err)
			_, cst, err := e.c.Children(e.ctx, e.p("d"))
			require.NoError(e.t, err)
			_, ast, err := e.c.GetACL(e.ctx, e.p("d"))
			require.NoError(e.t, err)
			est := e.stat(e.c, e.p("d"))
			require.Equal(e.t, est, *gst, "get")
			require.Equal(e.t, est, *cst, "children")
			require.Equal(e.t, est, *ast, "getACL")
		}},
		{"ephemeral-owner-per-session", func(e *env) {
			c2 := e.connect()
			require.NotEqual(e.t, e.c.SessionID(), c2.SessionID())
			e.create(e.c, e.p("mine"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("theirs"), nil, zksim.ModeEphemeral)
			require.Equal(e.t, e.c.SessionID(), e.stat(e.c, e.p("mine")).EphemeralOwner)
			require.Equal(e.t, c2.SessionID(), e.stat(e.c, e.p("theirs")).EphemeralOwner)
		}},
		{"czxid-follows-create-order", func(e *env) {
			var last int64
			for _, name := range []string{"a", "b", "c"} {
				e.create(e.c, e.p(name), nil, zksim.ModePersistent)
				st := e.stat(e.c, e.p(name))
				require.Greater(e.t, st.Czxid, last, name)
				last = st.Czxid
			}
		}},
		{"multi-shares-zxid-and-time", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			_, err := e.c.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("a"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.CreateOp{Path: e.p("b"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.SetOp{Path: e.p("x"), Data: []byte("x"), Version: -1},
			)
			require.NoError(e.t, err)
			a, b, x := e.stat(e.c, e.p("a")), e.stat(e.c, e.p("b")), e.stat(e.c, e.p("x"))
			require.Equal(e.t, a.Czxid, b.Czxid, "one zxid for the multi")
			require.Equal(e.t, a.Czxid, x.Mzxid, "one zxid for the multi")
			require.Equal(e.t, a.Ctime, b.Ctime, "one time for the multi")
			require.Equal(e.t, a.Ctime, x.Mtime, "one time for the multi")
			require.Equal(e.t, a.Czxid, e.stat(e.c, e.p()).Pzxid)
		}},
		{"recreate-starts-fresh", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			_, err := e.c.Set(e.ctx, e.p("a"), []byte("y"), -1)
			require.NoError(e.t, err)
			old := e.stat(e.c, e.p("a"))
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), -1))
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			st := e.stat(e.c, e.p("a"))
			require.Greater(e.t, st.Czxid, old.Mzxid)
			require.Zero(e.t, st.Version)
			require.Zero(e.t, st.DataLength)
		}},
		{"failed-set-leaves-stat", func(e *env) {
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			before := e.stat(e.c, e.p("a"))
			_, err := e.c.Set(e.ctx, e.p("a"), []byte("y"), 3)
			e.is(err, zksim.ErrBadVersion, "set with version 3")
			require.Equal(e.t, before, e.stat(e.c, e.p("a")))
			require.Equal(e.t, []byte("x"), e.data(e.c, e.p("a")))
		}},
		{"num-children-and-data-length-computed", func(e *env) {
			e.create(e.c, e.p("d"), []byte("abc"), zksim.ModePersistent)
			for _, name := range []string{"a", "b", "c"} {
				e.create(e.c, e.p("d", name), nil, zksim.ModePersistent)
			}
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("d", "b"), -1))
			_, err := e.c.Set(e.ctx, e.p("d"), nil, -1)
			require.NoError(e.t, err)
			st := e.stat(e.c, e.p("d"))
			require.Equal(e.t, int32(2), st.NumChildren)
			require.Zero(e.t, st.DataLength)
			require.Equal(e.t, int32(4), st.Cversion)
		}},
	}
}
