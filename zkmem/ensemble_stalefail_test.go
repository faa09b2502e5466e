package zkmem_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// A write waiting for its lagging member fails with connection loss when
// the member is cut off, but the Conn has moved to another member by then
// (within the same call of Isolate): the failure is the old connection's,
// and the Conn stays connected on its new member. It used to take the old
// connection's end for the new one's: the Conn said StateDisconnected (and
// waited for a redial) while the server had its session attached to the
// new member, so a later expiry reached a Conn that had never been told
// its connection came back.
func TestEnsembleStaleConnectionLossKeepsTheNewConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		require.Equal(t, 2, e.Leader())
		c := connectTo(t, e, []int{1, 0})
		events := c.SessionEvents(ctx)
		e.Lag(1)
		var err error
		done := make(chan struct{})
		go func() {
			_, err = c.Create(ctx, "/x", nil, zksim.ModePersistent, zksim.OpenACL())
			close(done)
		}()
		synctest.Wait() // the create waits for member 1
		e.Isolate(1)
		<-done
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)
		require.Equal(t, 0, memberOf(e, c))
		require.Equal(t, zksim.StateConnected, c.State())
		require.Equal(t, zksim.StateDisconnected, (<-events).State)
		require.Equal(t, zksim.StateConnected, (<-events).State)
		synctest.Wait() // every event published so far is in the channel
		select {
		case ev := <-events:
			t.Fatalf("a session event after the move: %+v", ev)
		default:
		}
		ok, _, err := c.Exists(ctx, "/x")
		require.NoError(t, err)
		require.True(t, ok, "the create reached the leader before the member was cut off")
	})
}
