package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// multi: all or nothing, later ops see earlier ones, one zxid, per-op
// results (create: path, setData: stat, delete and check: empty), and on
// failure: ok before the failing op, its code, RuntimeInconsistency after.
func multiCases() []testCase {
	create := func(p string) *zksim.CreateOp {
		return &zksim.CreateOp{Path: p, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()}
	}
	// requireFailed checks the results of a multi that failed at op i with
	// want.
	requireFailed := func(e *env, res []zksim.OpResult, err error, n, i int, want error) {
		e.t.Helper()
		e.is(err, want, "the error of a multi failing at op %d", i)
		require.Len(e.t, res, n, "one result per op")
		for j, r := range res {
			switch {
			case j < i:
				require.NoError(e.t, r.Err, "op %d, before the failing one", j)
			case j == i:
				e.is(r.Err, want, "op %d, the failing one", j)
			default:
				e.is(r.Err, zksim.ErrRuntimeInconsistency, "op %d, after the failing one", j)
			}
			require.Empty(e.t, r.Path, "op %d of a failed multi has no path", j)
			require.Nil(e.t, r.Stat, "op %d of a failed multi has no stat", j)
		}
	}
	return []testCase{
		{"create-result-is-path", func(e *env) {
			res, err := e.c.Multi(e.ctx, create(e.p("a")), &zksim.CreateOp{Path: e.p("s-"), Mode: zksim.ModeEphemeralSequential, ACL: zksim.OpenACL()})
			require.NoError(e.t, err)
			require.Len(e.t, res, 2)
			require.Equal(e.t, zksim.OpResult{Path: e.p("a")}, res[0])
			require.Equal(e.t, zksim.OpResult{Path: e.p("s-0000000001")}, res[1])
			require.Equal(e.t, e.c.SessionID(), e.stat(e.c, e.p("s-0000000001")).EphemeralOwner)
		}},
		{"set-result-is-stat", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx, &zksim.SetOp{Path: e.p("a"), Data: []byte("xy"), Version: 0})
			require.NoError(e.t, err)
			require.Len(e.t, res, 1)
			require.NoError(e.t, res[0].Err)
			require.Empty(e.t, res[0].Path)
			require.NotNil(e.t, res[0].Stat)
			require.Equal(e.t, e.stat(e.c, e.p("a")), *res[0].Stat)
			require.Equal(e.t, int32(1), res[0].Stat.Version)
			require.Equal(e.t, int32(2), res[0].Stat.DataLength)
		}},
		{"delete-and-check-results-empty", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("b"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx, &zksim.CheckOp{Path: e.p("a"), Version: 0}, &zksim.DeleteOp{Path: e.p("b"), Version: 0})
			require.NoError(e.t, err)
			require.Equal(e.t, []zksim.OpResult{{}, {}}, res)
			require.False(e.t, e.exists(e.c, e.p("b")))
		}},
		{"all-kinds-in-one", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("y"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx,
				create(e.p("a")),
				&zksim.SetOp{Path: e.p("x"), Data: []byte("d"), Version: -1},
				&zksim.CheckOp{Path: e.p("x"), Version: 1},
				&zksim.DeleteOp{Path: e.p("y"), Version: -1},
			)
			require.NoError(e.t, err)
			require.Len(e.t, res, 4)
			require.Equal(e.t, e.p("a"), res[0].Path)
			require.NotNil(e.t, res[1].Stat)
			require.Equal(e.t, int32(1), res[1].Stat.Version)
			require.Equal(e.t, zksim.OpResult{}, res[2])
			require.Equal(e.t, zksim.OpResult{}, res[3])
			require.Equal(e.t, []string{"a", "x"}, e.children(e.c, e.p()))
		}},
		{"later-ops-see-earlier", func(e *env) {
			res, err := e.c.Multi(e.ctx,
				create(e.p("a")),
				create(e.p("a", "b")),
				&zksim.SetOp{Path: e.p("a", "b"), Data: []byte("1"), Version: 0},
				&zksim.SetOp{Path: e.p("a", "b"), Data: []byte("2"), Version: 1},
				&zksim.CheckOp{Path: e.p("a", "b"), Version: 2},
				create(e.p("c")),
				&zksim.DeleteOp{Path: e.p("c"), Version: 0},
			)
			require.NoError(e.t, err)
			require.Len(e.t, res, 7)
			require.Equal(e.t, []byte("2"), e.data(e.c, e.p("a", "b")))
			require.False(e.t, e.exists(e.c, e.p("c")))
		}},
		{"delete-then-recreate", func(e *env) {
			e.create(e.c, e.p("a"), []byte("old"), zksim.ModePersistent)
			_, err := e.c.Multi(e.ctx, &zksim.DeleteOp{Path: e.p("a"), Version: -1},
				&zksim.CreateOp{Path: e.p("a"), Data: []byte("new"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()})
			require.NoError(e.t, err)
			require.Equal(e.t, []byte("new"), e.data(e.c, e.p("a")))
		}},
		{"ephemeral-then-child-fails", func(e *env) {
			res, err := e.c.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("e"), Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL()},
				create(e.p("e", "c")),
			)
			requireFailed(e, res, err, 2, 1, zksim.ErrNoChildrenForEphemerals)
			require.False(e.t, e.exists(e.c, e.p("e")))
		}},
		{"failure-at-first-op", func(e *env) {
			res, err := e.c.Multi(e.ctx,
				&zksim.CheckOp{Path: e.p("missing"), Version: -1},
				create(e.p("a")),
				create(e.p("b")),
			)
			requireFailed(e, res, err, 3, 0, zksim.ErrNoNode)
			require.Empty(e.t, e.children(e.c, e.p()))
		}},
		{"failure-in-the-middle", func(e *env) {
			e.create(e.c, e.p("x"), []byte("old"), zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx,
				create(e.p("a")),
				&zksim.SetOp{Path: e.p("x"), Data: []byte("new"), Version: -1},
				&zksim.SetOp{Path: e.p("x"), Data: []byte("newer"), Version: 7},
				create(e.p("b")),
				&zksim.DeleteOp{Path: e.p("x"), Version: -1},
			)
			requireFailed(e, res, err, 5, 2, zksim.ErrBadVersion)
			require.Equal(e.t, []string{"x"}, e.children(e.c, e.p()))
			require.Equal(e.t, []byte("old"), e.data(e.c, e.p("x")))
			require.Zero(e.t, e.stat(e.c, e.p("x")).Version)
		}},
		{"failure-at-last-op", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx,
				create(e.p("a")),
				&zksim.DeleteOp{Path: e.p("x"), Version: -1},
				create(e.p("x", "c")),
			)
			requireFailed(e, res, err, 3, 2, zksim.ErrNoNode)
			require.Equal(e.t, []string{"x"}, e.children(e.c, e.p()))
		}},
		{"first-failure-wins", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx,
				create(e.p("x")),
				&zksim.CheckOp{Path: e.p("missing"), Version: -1},
			)
			requireFailed(e, res, err, 2, 0, zksim.ErrNodeExists)
		}},
		{"rollback-restores-stats", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			before := e.stat(e.c, e.p())
			x := e.stat(e.c, e.p("x"))
			_, err := e.c.Multi(e.ctx,
				create(e.p("a")),
				&zksim.DeleteOp{Path: e.p("a"), Version: -1},
				&zksim.SetOp{Path: e.p("x"), Data: []byte("d"), Version: -1},
				&zksim.CheckOp{Path: e.p("x"), Version: 0},
			)
			e.is(err, zksim.ErrBadVersion, "check of version 0 after a set in the same multi")
			require.Equal(e.t, before, e.stat(e.c, e.p()))
			require.Equal(e.t, x, e.stat(e.c, e.p("x")))
		}},
		{"check-bad-version", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			res, err := e.c.Multi(e.ctx, &zksim.CheckOp{Path: e.p("x"), Version: 1}, create(e.p("a")))
			requireFailed(e, res, err, 2, 0, zksim.ErrBadVersion)
			_, err = e.c.Multi(e.ctx, &zksim.CheckOp{Path: e.p("x"), Version: -1}, create(e.p("a")))
			require.NoError(e.t, err, "check with version -1 matches any")
		}},
		{"check-missing-no-node", func(e *env) {
			res, err := e.c.Multi(e.ctx, create(e.p("a")), &zksim.CheckOp{Path: e.p("missing"), Version: -1})
			requireFailed(e, res, err, 2, 1, zksim.ErrNoNode)
		}},
		{"check-needs-read", func(e *env) {
			e.createACL(e.c, e.p("x"), nil, zksim.ModePersistent, zksim.WorldACL(zksim.PermAll&^zksim.PermRead))
			res, err := e.c.Multi(e.ctx, &zksim.CheckOp{Path: e.p("x"), Version: 0})
			requireFailed(e, res, err, 1, 0, zksim.ErrNoAuth)
		}},
		{"empty", func(e *env) {
			res, err := e.c.Multi(e.ctx)
			require.NoError(e.t, err)
			require.Empty(e.t, res)
		}},
		{"one-zxid", func(e *env) {
			res, err := e.c.Multi(e.ctx, create(e.p("a")), create(e.p("b")), create(e.p("c")))
			require.NoError(e.t, err)
			require.Len(e.t, res, 3)
			a := e.stat(e.c, e.p("a"))
			for _, name := range []string{"b", "c"} {
				require.Equal(e.t, a.Czxid, e.stat(e.c, e.p(name)).Czxid, name)
			}
			st := e.stat(e.c, e.p())
			require.Equal(e.t, int32(3), st.Cversion)
			require.Equal(e.t, a.Czxid, st.Pzxid)
		}},
		{"bad-path-op-fails-whole-multi", func(e *env) {
			_, err := e.c.Multi(e.ctx, create(e.p("a")), create(e.p("b\u0001")))
			e.is(err, zksim.ErrBadArguments, "multi with a bad path")
			require.Empty(e.t, e.children(e.c, e.p()))
		}},
		{"no-auth-op-fails-whole-multi", func(e *env) {
			e.createACL(e.c, e.p("ro"), nil, zksim.ModePersistent, zksim.ReadACL())
			res, err := e.c.Multi(e.ctx, create(e.p("a")), create(e.p("ro", "b")))
			requireFailed(e, res, err, 2, 1, zksim.ErrNoAuth)
			require.Equal(e.t, []string{"ro"}, e.children(e.c, e.p()))
		}},
		{"no-watch-fired-on-failure", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			c2 := e.connect()
			_, _, dataW, err := c2.GetW(e.ctx, e.p("x"))
			require.NoError(e.t, err)
			_, _, childW, err := c2.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			_, _, existW, err := c2.ExistsW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, err = e.c.Multi(e.ctx,
				create(e.p("a")),
				&zksim.SetOp{Path: e.p("x"), Data: []byte("d"), Version: -1},
				&zksim.DeleteOp{Path: e.p("missing"), Version: -1},
			)
			e.is(err, zksim.ErrNoNode, "multi deleting a missing node")
			e.noEvent(c2, dataW, "data watch on x")
			e.noEvent(c2, childW, "child watch on the root")
			e.noEvent(c2, existW, "exists watch on a")
		}},
		{"watches-fired-on-success", func(e *env) {
			e.create(e.c, e.p("x"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("y"), nil, zksim.ModePersistent)
			c2 := e.connect()
			_, _, dataW, err := c2.GetW(e.ctx, e.p("x"))
			require.NoError(e.t, err)
			_, _, delW, err := c2.GetW(e.ctx, e.p("y"))
			require.NoError(e.t, err)
			_, _, existW, err := c2.ExistsW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, _, childW, err := c2.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			_, err = e.c.Multi(e.ctx,
				create(e.p("a")),
				&zksim.SetOp{Path: e.p("x"), Data: []byte("d"), Version: -1},
				&zksim.DeleteOp{Path: e.p("y"), Version: -1},
			)
			require.NoError(e.t, err)
			e.expectEvent(existW, zksim.EventNodeCreated, e.p("a"))
			e.expectEvent(dataW, zksim.EventNodeDataChanged, e.p("x"))
			e.expectEvent(delW, zksim.EventNodeDeleted, e.p("y"))
			e.expectEvent(childW, zksim.EventNodeChildrenChanged, e.p())
		}},
	}
}
