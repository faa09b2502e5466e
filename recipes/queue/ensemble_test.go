package queue_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/recipes/queue"
	"github.com/zksim/zksim/zkmem"
)

// laggingPair returns an ensemble of 3 with a producer's Conn on member 0
// and a consumer's on member 1, which lags (applies no commits until
// CatchUp).
func laggingPair(t *testing.T) (*zkmem.Ensemble, *zkmem.Conn, *zkmem.Conn) {
	t.Helper()
	e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
	t.Cleanup(e.Close)
	producer, err := e.Connect(zkmem.WithMembers(0))
	require.NoError(t, err)
	consumer, err := e.Connect(zkmem.WithMembers(1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close(); _ = consumer.Close() })
	e.Lag(1)
	t.Cleanup(func() { e.CatchUp(1) }) // before the Closes, which wait for the member
	return e, producer, consumer
}

// answerAfterCatchUp runs call, checks that it waits while member 1 lags
// (it does not answer from the member's stale state), and returns its
// error once member 1 caught up.
func answerAfterCatchUp(t *testing.T, e *zkmem.Ensemble, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	synctest.Wait()
	select {
	case err := <-done:
		t.Fatalf("answered %v from a member behind the Offer", err)
	default:
	}
	e.CatchUp(1)
	return <-done
}

// TestTryTakeAfterOfferOnALaggingMember: a TryTake (or Peek, Len) that
// begins after an Offer returned finds the item, even when the consumer's
// member has not applied the Offer yet: the listing follows a sync.
func TestTryTakeAfterOfferOnALaggingMember(t *testing.T) {
	t.Run("LockingQueue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			e, producer, consumer := laggingPair(t)
			require.NoError(t, queue.NewLocking(producer, "/q").Offer(ctx, []byte("x")))
			require.NotZero(t, e.Pending(1))
			var it *queue.Item
			err := answerAfterCatchUp(t, e, func() (err error) {
				it, err = queue.NewLocking(consumer, "/q").TryTake(ctx)
				return err
			})
			require.NoError(t, err)
			require.Equal(t, []byte("x"), it.Data())
			require.NoError(t, it.Ack(ctx))
		})
	})
	t.Run("Queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			e, producer, consumer := laggingPair(t)
			require.NoError(t, queue.New(producer, "/q").Offer(ctx, []byte("x")))
			require.NotZero(t, e.Pending(1))
			var data []byte
			err := answerAfterCatchUp(t, e, func() (err error) {
				data, err = queue.New(consumer, "/q").TryTake(ctx)
				return err
			})
			require.NoError(t, err)
			require.Equal(t, []byte("x"), data)
		})
	})
	t.Run("Len", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			e, producer, consumer := laggingPair(t)
			require.NoError(t, queue.New(producer, "/q").Offer(ctx, []byte("x")))
			n := 0
			err := answerAfterCatchUp(t, e, func() (err error) {
				n, err = queue.New(consumer, "/q").Len(ctx)
				return err
			})
			require.NoError(t, err)
			require.Equal(t, 1, n)
		})
	})
}
