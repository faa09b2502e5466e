package queue_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
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

// claimOf returns the path of the only claim under /q/claims, read by
// conn.
func claimOf(t *testing.T, conn zksim.Conn) string {
	t.Helper()
	claims, _, err := conn.Children(context.Background(), "/q/claims")
	require.NoError(t, err)
	require.Len(t, claims, 1)
	return "/q/claims/" + claims[0]
}

// TestReleaseAfterAThirdPartyDeleteOnALaggingMember: a third party deletes
// a held item's claim, and the holder's member has not applied the delete
// yet. Release must report the claim lost (it syncs before it looks), not
// find it still its own there, have its delete answer ErrNoNode and
// return nil.
func TestReleaseAfterAThirdPartyDeleteOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, other, consumer := laggingPair(t)
		e.CatchUp(1)
		q := queue.NewLocking(consumer, "/q")
		require.NoError(t, q.Offer(ctx, []byte("x")))
		it, err := q.TryTake(ctx)
		require.NoError(t, err)
		e.Lag(1)
		require.NoError(t, other.Delete(ctx, claimOf(t, other), -1))
		require.NotZero(t, e.Pending(1))
		err = answerAfterCatchUp(t, e, func() error { return it.Release(ctx) })
		require.ErrorIs(t, err, queue.ErrClaimLost)
		n, err := q.Len(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}

// deleteBeforeDelete is a Conn whose next Delete is preceded by a third
// party's delete of the same path: a claim deleted by hand just after the
// holder's Release looked at it.
type deleteBeforeDelete struct {
	zksim.Conn
	op    zksim.Conn // the third party
	armed bool
}

func (c *deleteBeforeDelete) Delete(ctx context.Context, p string, version int32) error {
	if c.armed {
		c.armed = false
		if err := c.op.Delete(ctx, p, -1); err != nil {
			return fmt.Errorf("third party's delete: %w", err)
		}
	}
	return c.Conn.Delete(ctx, p, version)
}

// TestReleaseRacingAThirdPartyDelete: a claim deleted by a third party
// after Release found it its own and before Release's delete: the delete
// answers ErrNoNode, and Release must report the claim lost, not nil.
func TestReleaseRacingAThirdPartyDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := zkmem.NewServer(zkmem.Options{})
		t.Cleanup(srv.Close)
		op, err := srv.Connect()
		require.NoError(t, err)
		consumer, err := srv.Connect()
		require.NoError(t, err)
		t.Cleanup(func() { _ = op.Close(); _ = consumer.Close() })
		conn := &deleteBeforeDelete{Conn: consumer, op: op}
		q := queue.NewLocking(conn, "/q")
		require.NoError(t, q.Offer(ctx, []byte("x")))
		it, err := q.TryTake(ctx)
		require.NoError(t, err)
		conn.armed = true
		require.ErrorIs(t, it.Release(ctx), queue.ErrClaimLost)
		require.False(t, conn.armed)
	})
}

// TestAckAfterALostReplyOnALaggingMember: an Ack whose multi is applied
// and whose reply is lost, the consumer then moving to a member that has
// not applied the multi (it never saw its zxid, so the member admits it).
// The Ack looks at its claim after a sync, finds claim and item gone and
// returns nil; without the sync it would find the claim still its own
// there, send its multi again and report the applied Ack lost.
func TestAckAfterALostReplyOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
		t.Cleanup(e.Close)
		consumer, err := e.Connect(zkmem.WithMembers(0, 1))
		require.NoError(t, err)
		observer, err := e.Connect(zkmem.WithMembers(2))
		require.NoError(t, err)
		t.Cleanup(func() { _ = consumer.Close(); _ = observer.Close() })
		q := queue.NewLocking(consumer, "/q")
		require.NoError(t, q.Offer(ctx, []byte("x")))
		it, err := q.TryTake(ctx)
		require.NoError(t, err)
		e.Lag(1)
		t.Cleanup(func() { e.CatchUp(1) })
		e.Server().Control(consumer.SessionID()).LoseNextReply(zkmem.OpMulti)
		done := make(chan error, 1)
		go func() { done <- it.Ack(ctx) }()
		synctest.Wait()
		e.CatchUp(1)
		require.NoError(t, <-done)
		n, err := queue.NewLocking(observer, "/q").Len(ctx)
		require.NoError(t, err)
		require.Equal(t, 0, n)
	})
}

// lostReplyOnALaggingMember returns an ensemble of 3, a client on members
// 0 then 1, and an observer on member 2: after a lost reply the client
// moves to member 1, which the caller makes lag.
func lostReplyOnALaggingMember(t *testing.T) (*zkmem.Ensemble, *zkmem.Conn, *zkmem.Conn) {
	t.Helper()
	e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
	t.Cleanup(e.Close)
	client, err := e.Connect(zkmem.WithMembers(0, 1))
	require.NoError(t, err)
	observer, err := e.Connect(zkmem.WithMembers(2))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close(); _ = observer.Close() })
	return e, client, observer
}

// TestReceiptAfterALostReplyOnALaggingMember: an Offer or a TryTake whose
// multi is applied and whose reply is lost, the client then moving to a
// member that has not applied the multi (it never saw its zxid, so the
// member admits it). The receipt is read after a sync, so the call learns
// that its multi was applied: without the sync the Offer would add its
// item a second time, and the TryTake would find its item gone on trying
// again and lose it (it was removed by its own first multi).
func TestReceiptAfterALostReplyOnALaggingMember(t *testing.T) {
	t.Run("Offer", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			e, producer, observer := lostReplyOnALaggingMember(t)
			q := queue.New(producer, "/q")
			require.NoError(t, q.Offer(ctx, []byte("a")))
			e.Lag(1)
			t.Cleanup(func() { e.CatchUp(1) })
			e.Server().Control(producer.SessionID()).LoseNextReply(zkmem.OpMulti)
			done := make(chan error, 1)
			go func() { done <- q.Offer(ctx, []byte("b")) }()
			synctest.Wait()
			e.CatchUp(1)
			require.NoError(t, <-done)
			n, err := queue.New(observer, "/q").Len(ctx)
			require.NoError(t, err)
			require.Equal(t, 2, n)
		})
	})
	t.Run("TryTake", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			e, consumer, observer := lostReplyOnALaggingMember(t)
			p := queue.New(observer, "/q")
			require.NoError(t, p.Offer(ctx, []byte("a")))
			require.NoError(t, p.Offer(ctx, []byte("b")))
			q := queue.New(consumer, "/q")
			data, err := q.TryTake(ctx) // makes the consumer's receipt
			require.NoError(t, err)
			require.Equal(t, []byte("a"), data)
			e.Lag(1)
			t.Cleanup(func() { e.CatchUp(1) })
			e.Server().Control(consumer.SessionID()).LoseNextReply(zkmem.OpMulti)
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, err := q.TryTake(ctx)
				done <- result{data, err}
			}()
			synctest.Wait()
			e.CatchUp(1)
			r := <-done
			require.NoError(t, r.err)
			require.Equal(t, []byte("b"), r.data)
		})
	})
}

// TestPriorityTakeAfterOfferOnALaggingMember: a PriorityQueue Take that
// begins after an Offer of a higher priority returned gets that item,
// even when the consumer's member has not applied the Offer yet: the
// Take syncs first, where a listing on the member would show only the
// item of lower priority.
func TestPriorityTakeAfterOfferOnALaggingMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, producer, consumer := laggingPair(t)
		e.CatchUp(1)
		p := queue.NewPriority(producer, "/q")
		require.NoError(t, p.Offer(ctx, []byte("low"), 5))
		n, err := queue.NewPriority(consumer, "/q").Len(ctx) // the member has it
		require.NoError(t, err)
		require.Equal(t, 1, n)
		e.Lag(1)
		require.NoError(t, p.Offer(ctx, []byte("high"), 1))
		require.NotZero(t, e.Pending(1))
		var data []byte
		err = answerAfterCatchUp(t, e, func() (err error) {
			data, err = queue.NewPriority(consumer, "/q").Take(ctx)
			return err
		})
		require.NoError(t, err)
		require.Equal(t, []byte("high"), data)
	})
}
