package zkmem_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestEnsembleLostReplyOfAWaitingSync: a sync that waits for its lagging
// member and whose reply a fault loses closes the connection when the
// member applies what it waits for: the sync fails with ConnectionLoss,
// and so does the read queued behind it, each once.
func TestEnsembleLostReplyOfAWaitingSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		writer := connectTo(t, e, []int{2})
		reader := connectTo(t, e, []int{0})
		e.Lag(0)
		_, err := writer.Create(ctx, "/x", nil, 0, zksim.OpenACL())
		require.NoError(t, err)
		e.Server().Control(reader.SessionID()).LoseNextReply(zkmem.OpSync)
		syncErr, readErr := make(chan error, 1), make(chan error, 1)
		go func() {
			_, err := reader.Sync(ctx, "/")
			syncErr <- err
		}()
		synctest.Wait() // the sync waits for member 0
		go func() {
			_, _, err := reader.Exists(ctx, "/x")
			readErr <- err
		}()
		synctest.Wait() // and the read behind it
		require.Empty(t, syncErr)
		require.True(t, e.ApplyNext(0))
		require.ErrorIs(t, <-syncErr, zksim.ErrConnectionLoss)
		require.ErrorIs(t, <-readErr, zksim.ErrConnectionLoss)
		e.CatchUp(0)
		require.NoError(t, reader.Close())
		require.NoError(t, writer.Close())
	})
}
