package zkmem_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A committed-view session (a test's observer) reads what the leader
// committed, whatever the members do, and its writes reach the members as
// commits.
func TestEnsembleCommittedViewSeesTheCommittedState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		obs, err := e.Server().Connect(zkmem.WithCommittedView())
		require.NoError(t, err)
		require.Equal(t, -1, memberOf(e, obs), "attached to no member")
		w := connectTo(t, e, []int{0})
		r := connectTo(t, e, []int{1})
		e.Lag(1)
		e.Lag(0)
		// A write of w waits for its member; the leader committed it.
		done := async(func() error { _, err := w.Create(ctx, "/a", nil, 0, zksim.OpenACL()); return err })
		require.True(t, blocked(done))
		ok, _, err := obs.Exists(ctx, "/a")
		require.NoError(t, err)
		require.True(t, ok, "the observer reads the committed state")
		e.CatchUp(0)
		require.NoError(t, <-done)

		// The observer's write commits: member 0 keeps up and sees it,
		// member 1 lags and does not until it applies it.
		_, err = obs.Create(ctx, "/b", nil, 0, zksim.OpenACL())
		require.NoError(t, err)
		ok, _, err = w.Exists(ctx, "/b")
		require.NoError(t, err)
		require.True(t, ok)
		ok, _, err = r.Exists(ctx, "/b")
		require.NoError(t, err)
		require.False(t, ok, "member 1 lags")
		e.CatchUp(1)
		ok, _, err = r.Exists(ctx, "/b")
		require.NoError(t, err)
		require.True(t, ok)

		// No leader: the clients are cut off, the observer is not.
		e.Crash(e.Leader())
		require.Equal(t, -1, e.Leader())
		names, _, err := obs.Children(ctx, "/")
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"a", "b", "zookeeper"}, names)
		_, err = e.Elect()
		require.NoError(t, err)
		ok, _, err = obs.Exists(ctx, "/a")
		require.NoError(t, err)
		require.True(t, ok)
		require.Contains(t, e.Server().SessionIDs(), obs.SessionID())
	})
}

// A lost reply of a request that waited for its lagging member fails the
// session's other waiting requests once each (the member once answered
// the request that lost its reply twice, and panicked).
func TestEnsembleLostReplyOfAWaitingRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		w := connectTo(t, e, []int{e.Leader()})
		m := (e.Leader() + 1) % 3
		r := connectTo(t, e, []int{m})
		e.Lag(m)
		_, err := w.Create(ctx, "/a", nil, 0, zksim.OpenACL())
		require.NoError(t, err)
		e.Server().Control(r.SessionID()).LoseNextReply(zkmem.OpSync)
		synced := async(func() error { _, err := r.Sync(ctx, "/"); return err })
		require.True(t, blocked(synced))
		read := async(func() error { _, _, err := r.Exists(ctx, "/a"); return err }) // behind the sync
		require.True(t, blocked(read))
		e.CatchUp(m)
		require.ErrorIs(t, <-synced, zksim.ErrConnectionLoss)
		require.ErrorIs(t, <-read, zksim.ErrConnectionLoss)
	})
}
