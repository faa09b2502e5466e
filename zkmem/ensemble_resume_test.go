package zkmem_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestCrashDoesNotWaitForAMovedConnsSetWatches: a Conn whose member
// crashes moves to the next member of its list within Crash. A call made
// as soon as the Conn is connected again, while that member lags, waits
// behind the Conn's setWatches and is not sent ahead of it; and Crash returns
// without waiting for the lagging member. (A call that got in ahead of the
// setWatches queued it behind its own write at the lagging member, and
// Crash waited for a CatchUp that only its caller could make: a CI run of
// TestEnsembleHistories hung so.)
func TestCrashDoesNotWaitForAMovedConnsSetWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		var followers []int
		for i := range e.Size() {
			if i != e.Leader() {
				followers = append(followers, i)
			}
		}
		from, to := followers[0], followers[1]
		c := connectTo(t, e, []int{from, to})
		onLeader := connectTo(t, e, []int{e.Leader()})
		e.Lag(to)

		var created atomic.Bool
		createErr := make(chan error, 1)
		proceed := make(chan struct{})
		zkmem.BeforeSetWatches(e, func() {
			go func() {
				_, err := c.Create(context.Background(), "/x", nil, zksim.ModePersistent, zksim.OpenACL())
				created.Store(true)
				createErr <- err
			}()
			<-proceed
		})
		var crashed atomic.Bool
		go func() {
			e.Crash(from)
			crashed.Store(true)
		}()
		synctest.Wait() // the Create has gone as far as it can
		ok, _, err := onLeader.Exists(context.Background(), "/x")
		require.NoError(t, err)
		require.False(t, ok, "the Create went out ahead of the setWatches")
		close(proceed)
		synctest.Wait()
		crashedBeforeCatchUp := crashed.Load()
		require.False(t, created.Load(), "the Create returned before the lagging member applied it")
		e.CatchUp(to)
		synctest.Wait()
		require.True(t, crashedBeforeCatchUp, "Crash waited for the lagging member to catch up")
		require.True(t, crashed.Load())
		require.NoError(t, <-createErr)
		require.Equal(t, zksim.StateConnected, c.State())
	})
}
