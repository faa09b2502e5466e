package barrier_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/zkmem"
)

// TestWaitAfterSetOnALaggingMember: a Wait that begins after a Set
// returned blocks, even when the waiter's member has not applied the Set
// yet (a plain exists there would find the barrier not set): Wait syncs
// first, and passes only once the barrier is removed.
func TestWaitAfterSetOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		setter, err := e.Connect(zkmem.WithMembers(0))
		require.NoError(t, err)
		waiter, err := e.Connect(zkmem.WithMembers(1))
		require.NoError(t, err)
		e.Lag(1)

		b := barrier.New(setter, "/b")
		require.NoError(t, b.Set(ctx))
		require.NotZero(t, e.Pending(1))

		done := make(chan error, 1)
		go func() { done <- barrier.New(waiter, "/b").Wait(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait after Set returned %v on a member behind the Set", err)
		default:
		}
		e.CatchUp(1)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Wait returned %v while the barrier is set", err)
		default:
		}
		require.NoError(t, b.Remove(ctx))
		require.NoError(t, <-done)
		require.NoError(t, setter.Close())
		require.NoError(t, waiter.Close())
	})
}
