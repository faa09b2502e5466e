package lock_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/zkmem"
)

// TestLockAfterLossWithoutALeader: a hold is Lost after a session timeout
// with no leader, but on an ensemble its session lives on (no member
// expires it, the next leader gives it a fresh timeout), and its node
// with it. The next Lock of the same Mutex deletes that node first; when
// its ctx is done before the ensemble has a leader again, it still waits
// to delete it (a cleanup outlives the ctx) instead of leaving the node
// of a live session to block every other contender.
func TestLockAfterLossWithoutALeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		connect := func() *zkmem.Conn {
			c, err := e.Connect(zkmem.WithMembers(0, 1, 2))
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
		conn, observer := connect(), connect()
		m := lock.New(conn, "/lock")
		require.NoError(t, m.Lock(ctx))
		old := m.Key()

		e.Crash(e.Leader()) // an election starts: no member serves
		time.Sleep(2 * conn.SessionTimeout())
		synctest.Wait()
		require.Equal(t, recipes.Lost, m.State())

		lctx, cancel := context.WithCancel(ctx)
		cancel()
		done := make(chan error, 1)
		go func() { done <- m.Lock(lctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Lock returned %v with no leader, the node %s of its live session left", err, old)
		default:
		}

		_, err := e.Elect()
		require.NoError(t, err)
		require.ErrorIs(t, <-done, context.Canceled)
		ok, _, err := observer.Exists(ctx, old)
		require.NoError(t, err)
		require.False(t, ok, "the Lost hold's node %s outlived the Lock", old)
	})
}
