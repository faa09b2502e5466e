package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// A reaping case waits for a node to go for its TTL (at most
// reapMaxTTLChecks check intervals), then reapSlackChecks more intervals
// and reapSlack.
const (
	reapMaxTTLChecks = 5
	reapSlackChecks  = 20
	reapSlack        = 5 * time.Second
)

// reapsInTime reports whether a server that looks for containers and TTL
// nodes to delete every interval does so fast enough for the reaping cases
// to end within a case's time limit.
func reapsInTime(interval time.Duration) bool {
	return (reapMaxTTLChecks+reapSlackChecks)*interval+reapSlack <= caseTimeout
}

// Containers and TTL nodes are deleted by the server's periodic check
// (znode.container.checkIntervalMs): a container once it has had a child
// and has none; a TTL node once it has no children and was not modified
// for its ttl. Both are ordinary deletes that fire watches. The cases poll
// with a deadline of a few check intervals, and check that nodes that must
// stay are still there after several intervals.
func reapingCases() []testCase {
	// reapLimit bounds the wait for a node the check must delete.
	reapLimit := func(e *env, ttl time.Duration) time.Duration {
		return ttl + reapSlackChecks*e.facts().ContainerCheckInterval + reapSlack
	}
	// checks waits n check intervals, for the cases where nothing must
	// happen.
	checks := func(e *env, n int) { e.sleep(time.Duration(n) * e.facts().ContainerCheckInterval) }
	gone := func(e *env, p string, limit time.Duration) {
		e.t.Helper()
		e.poll(limit, "deletion of "+p, func() bool { return !e.exists(e.c, p) })
	}
	createTTL := func(e *env, p string, mode zksim.CreateMode, ttl time.Duration) string {
		e.t.Helper()
		got, err := e.c.CreateTTL(e.ctx, p, nil, mode, zksim.OpenACL(), ttl)
		require.NoError(e.t, err, "CreateTTL %s", p)
		return got
	}
	return []testCase{
		{"container-deleted-after-last-child", func(e *env) {
			e.needReaping()
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			e.create(e.c, e.p("c", "a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("c", "b"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("c", "a"), -1))
			checks(e, 3)
			require.True(e.t, e.exists(e.c, e.p("c")), "a container with a child left must stay")
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("c", "b"), -1))
			gone(e, e.p("c"), reapLimit(e, 0))
		}},
		{"container-deletion-fires-watches", func(e *env) {
			e.needReaping()
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			e.create(e.c, e.p("c", "a"), nil, zksim.ModePersistent)
			w := e.connect()
			_, _, dataCh, err := w.GetW(e.ctx, e.p("c"))
			require.NoError(e.t, err)
			_, _, existCh, err := w.ExistsW(e.ctx, e.p("c"))
			require.NoError(e.t, err)
			_, _, parentCh, err := w.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("c", "a"), -1))
			e.expectEvent(dataCh, zksim.EventNodeDeleted, e.p("c"))
			e.expectEvent(existCh, zksim.EventNodeDeleted, e.p("c"))
			e.expectEvent(parentCh, zksim.EventNodeChildrenChanged, e.p())
			st := e.stat(e.c, e.p())
			require.Equal(e.t, int32(2), st.Cversion, "the reaping is an ordinary child delete: %v", st)
		}},
		{"container-never-used-kept", func(e *env) {
			// checked: a container that never had a child stays.
			e.needReaping()
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			checks(e, 5)
			require.True(e.t, e.exists(e.c, e.p("c")))
		}},
		{"container-deleted-after-ephemeral-child-session-ends", func(e *env) {
			e.needReaping()
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			c2 := e.connect()
			e.create(c2, e.p("c", "lock-"), nil, zksim.ModeEphemeralSequential)
			require.NoError(e.t, c2.Close())
			gone(e, e.p("c"), reapLimit(e, 0))
		}},
		{"nested-containers-cascade", func(e *env) {
			e.needReaping()
			e.create(e.c, e.p("outer"), nil, zksim.ModeContainer)
			e.create(e.c, e.p("outer", "inner"), nil, zksim.ModeContainer)
			e.create(e.c, e.p("outer", "inner", "x"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("outer", "inner", "x"), -1))
			gone(e, e.p("outer", "inner"), reapLimit(e, 0))
			gone(e, e.p("outer"), reapLimit(e, 0))
		}},
		{"container-deleted-with-multi-child-delete", func(e *env) {
			e.needReaping()
			e.create(e.c, e.p("c"), nil, zksim.ModeContainer)
			_, err := e.c.Multi(e.ctx,
				&zksim.CreateOp{Path: e.p("c", "a"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()},
				&zksim.DeleteOp{Path: e.p("c", "a"), Version: -1},
			)
			require.NoError(e.t, err)
			gone(e, e.p("c"), reapLimit(e, 0))
		}},
		{"ttl-node-deleted-after-ttl", func(e *env) {
			e.needExtendedTypes()
			e.needReaping()
			ttl := 2 * e.facts().ContainerCheckInterval
			createTTL(e, e.p("t"), zksim.ModePersistentWithTTL, ttl)
			gone(e, e.p("t"), reapLimit(e, ttl))
		}},
		{"ttl-sequential-deleted-after-ttl", func(e *env) {
			e.needExtendedTypes()
			e.needReaping()
			ttl := 2 * e.facts().ContainerCheckInterval
			p := createTTL(e, e.p("t-"), zksim.ModePersistentSequentialWithTTL, ttl)
			require.Equal(e.t, e.p("t-0000000000"), p)
			gone(e, p, reapLimit(e, ttl))
		}},
		{"ttl-deletion-fires-watches", func(e *env) {
			e.needExtendedTypes()
			e.needReaping()
			ttl := reapMaxTTLChecks * e.facts().ContainerCheckInterval
			w := e.connect()
			_, _, parentCh, err := w.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			createTTL(e, e.p("t"), zksim.ModePersistentWithTTL, ttl)
			e.expectEvent(parentCh, zksim.EventNodeChildrenChanged, e.p())
			_, _, dataCh, err := w.GetW(e.ctx, e.p("t"))
			require.NoError(e.t, err)
			_, _, parentCh, err = w.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			e.expectEvent(dataCh, zksim.EventNodeDeleted, e.p("t"))
			e.expectEvent(parentCh, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"ttl-node-with-child-kept-until-childless", func(e *env) {
			e.needExtendedTypes()
			e.needReaping()
			ttl := e.facts().ContainerCheckInterval
			createTTL(e, e.p("t"), zksim.ModePersistentWithTTL, ttl)
			e.create(e.c, e.p("t", "a"), nil, zksim.ModePersistent)
			checks(e, 5)
			require.True(e.t, e.exists(e.c, e.p("t")), "a TTL node with a child must stay")
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("t", "a"), -1))
			gone(e, e.p("t"), reapLimit(e, ttl))
		}},
		{"ttl-node-kept-before-ttl", func(e *env) {
			e.needExtendedTypes()
			e.needReaping()
			createTTL(e, e.p("t"), zksim.ModePersistentWithTTL, time.Hour)
			checks(e, 5)
			require.True(e.t, e.exists(e.c, e.p("t")))
		}},
		{"plain-nodes-never-reaped", func(e *env) {
			e.needReaping()
			e.create(e.c, e.p("p"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("p", "a"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("p", "a"), -1))
			checks(e, 5)
			require.True(e.t, e.exists(e.c, e.p("p")))
		}},
	}
}
