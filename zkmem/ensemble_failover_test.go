package zkmem_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// Ensembles losing their leader or their quorum: elections, fresh
// timeouts, read-only mode, observers.

func TestEnsembleLeaderFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		a := connectTo(t, e, []int{0, 1})
		b := connectTo(t, e, []int{1, 0})
		_, err := a.Create(ctx, "/eph", nil, zksim.ModeEphemeral, zksim.OpenACL())
		require.NoError(t, err)
		_, err = a.Create(ctx, "/w", nil, 0, zksim.OpenACL())
		require.NoError(t, err)
		_, _, wch, err := a.ExistsW(ctx, "/w")
		require.NoError(t, err)

		e.Crash(2)
		require.Equal(t, -1, e.Leader())
		for i := range 3 {
			require.NotEqual(t, zkmem.RoleFollower, e.Role(i))
			require.Empty(t, e.Sessions(i))
		}
		require.Equal(t, zksim.StateDisconnected, a.State())
		_, _, err = a.Get(ctx, "/w")
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)
		_, err = e.Connect()
		require.ErrorIs(t, err, zkmem.ErrNoMember)

		leader, err := e.Elect()
		require.NoError(t, err)
		require.Equal(t, 1, leader)
		require.Equal(t, zksim.StateConnected, a.State())
		ok, _, err := b.Exists(ctx, "/eph")
		require.NoError(t, err)
		require.True(t, ok)
		_, err = b.Set(ctx, "/w", []byte("v"), -1)
		require.NoError(t, err)
		require.Equal(t, zksim.EventNodeDataChanged, (<-wch).Type)

		// A write in flight when the leader fails: committed or not, as
		// the caller decided; connection loss either way.
		e.Restart(2)
		for _, committed := range []bool{true, false} {
			e.FailLeaderOnNextWrite(committed)
			path := fmt.Sprintf("/inflight-%v", committed)
			_, err = a.Create(ctx, path, nil, 0, zksim.OpenACL())
			require.ErrorIs(t, err, zksim.ErrConnectionLoss)
			_, err = e.Elect()
			require.NoError(t, err)
			ok, _, err = b.Exists(ctx, path)
			require.NoError(t, err)
			require.Equal(t, committed, ok)
			e.Restart(0)
			e.Restart(1)
			e.Restart(2)
		}
	})
}

func TestEnsembleNewLeaderGivesSessionsAFreshTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		// c knows only the leader: once it goes, c stays disconnected.
		c := connectTo(t, e, []int{2}, zkmem.WithSessionTimeout(4*time.Second))
		timeout := c.SessionTimeout()
		e.Crash(2)
		time.Sleep(10 * timeout) // a long election: nobody expires sessions
		_, err := e.Elect()
		require.NoError(t, err)
		time.Sleep(timeout - time.Millisecond)
		require.Equal(t, []int64{c.SessionID()}, e.Server().SessionIDs())
		time.Sleep(2 * time.Millisecond)
		require.Empty(t, e.Server().SessionIDs())
	})
}

func TestEnsembleReadOnlyMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{ReadOnly: true})
		ro := connectTo(t, e, []int{0}, zkmem.WithCanBeReadOnly())
		rw := connectTo(t, e, []int{0})
		w := connectTo(t, e, []int{1})
		_, err := w.Create(ctx, "/x", []byte("old"), 0, zksim.OpenACL())
		require.NoError(t, err)

		e.Isolate(0)
		require.Equal(t, zkmem.RoleReadOnly, e.Role(0))
		require.Equal(t, zksim.StateConnectedReadOnly, ro.State())
		require.Equal(t, zksim.StateDisconnected, rw.State(), "a client that does not allow read-only mode was accepted")
		_, err = w.Set(ctx, "/x", []byte("new"), -1)
		require.NoError(t, err)

		data, _, err := ro.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("old"), data)
		_, err = ro.Create(ctx, "/y", nil, 0, zksim.OpenACL())
		require.ErrorIs(t, err, zksim.ErrNotReadOnly)
		_, err = ro.Sync(ctx, "/")
		require.ErrorIs(t, err, zksim.ErrNotReadOnly)

		e.Heal(0)
		require.Equal(t, zkmem.RoleFollower, e.Role(0))
		require.Equal(t, zksim.StateConnected, ro.State())
		require.Equal(t, zksim.StateConnected, rw.State())
		data, _, err = ro.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("new"), data)
	})
}

func TestEnsembleNewSessionOnReadOnlyMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{ReadOnly: true})
		w := connectTo(t, e, []int{2})
		_, err := w.Create(ctx, "/x", []byte("old"), 0, zksim.OpenACL())
		require.NoError(t, err)
		e.Isolate(0)
		_, err = w.Set(ctx, "/x", []byte("new"), -1)
		require.NoError(t, err)

		_, err = e.Connect(zkmem.WithMembers(0))
		require.ErrorIs(t, err, zkmem.ErrNoMember, "a client that does not allow read-only mode was accepted")
		ro := connectTo(t, e, []int{0}, zkmem.WithCanBeReadOnly())
		require.Equal(t, zksim.StateConnectedReadOnly, ro.State())
		require.Equal(t, 0, memberOf(e, ro))
		data, _, err := ro.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("old"), data, "the read-only session reads the isolated member's state")
		_, err = ro.Create(ctx, "/y", nil, 0, zksim.OpenACL())
		require.ErrorIs(t, err, zksim.ErrNotReadOnly)

		// A member that serves normally comes first in the list.
		rw := connectTo(t, e, []int{1, 0}, zkmem.WithCanBeReadOnly())
		require.Equal(t, zksim.StateConnected, rw.State())
		require.Equal(t, 1, memberOf(e, rw))

		e.Heal(0)
		require.Equal(t, zksim.StateConnected, ro.State())
		data, _, err = ro.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("new"), data)
	})
}

func TestEnsembleOfFiveNeedsAQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 5, zkmem.EnsembleOptions{})
		c := connectTo(t, e, []int{0, 1, 2, 3, 4})
		e.Crash(0)
		e.Crash(1)
		require.Equal(t, 4, e.Leader())
		_, err := c.Create(ctx, "/x", nil, 0, zksim.OpenACL())
		require.NoError(t, err)
		require.Equal(t, 2, memberOf(e, c))
		e.Crash(2)
		require.Equal(t, -1, e.Leader())
		_, err = e.Elect()
		require.ErrorIs(t, err, zkmem.ErrNoQuorum)
		e.Restart(0)
		leader, err := e.Elect()
		require.NoError(t, err)
		require.Equal(t, 4, leader)
		require.Equal(t, e.LastZxid(), e.Applied(0))
		ok, _, err := c.Exists(ctx, "/x")
		require.NoError(t, err)
		require.True(t, ok)
	})
}

func TestEnsembleObserversServeButDoNotVote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 5, zkmem.EnsembleOptions{Observers: 2})
		require.Equal(t, 2, e.Leader())
		require.Equal(t, zkmem.RoleObserver, e.Role(4))
		c := connectTo(t, e, []int{4})
		_, err := c.Create(ctx, "/x", nil, 0, zksim.OpenACL())
		require.NoError(t, err)

		// Two voters of three down: no quorum, whatever the observers.
		e.Crash(0)
		require.Equal(t, 2, e.Leader())
		e.Crash(1)
		require.Equal(t, -1, e.Leader())
		require.Equal(t, zkmem.RoleLooking, e.Role(4))
		require.Equal(t, zksim.StateDisconnected, c.State())
		_, err = e.Elect()
		require.ErrorIs(t, err, zkmem.ErrNoQuorum)
		e.Restart(1)
		leader, err := e.Elect()
		require.NoError(t, err)
		require.Equal(t, 2, leader, "an observer led")
		require.Equal(t, zksim.StateConnected, c.State())
		ok, _, err := c.Exists(ctx, "/x")
		require.NoError(t, err)
		require.True(t, ok)
	})
}
