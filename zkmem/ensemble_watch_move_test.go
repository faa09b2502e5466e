package zkmem_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// TestEnsembleWatchFiresAfterAMoveBehindTheEvent: a client hears of a
// deletion from its member, moves to a member that has not applied it (a
// watch event carries no zxid, so the member takes the client), reads the
// node there and watches it: the watch fires when that member applies the
// deletion. (Each member counted its trigger epochs apart, and the two
// members' counts agreed at the deletion: the second member took the
// session for one it had notified of that event already, and dropped the
// watch without a word.)
func TestEnsembleWatchFiresAfterAMoveBehindTheEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		require.Equal(t, 2, e.Leader())
		w := connectTo(t, e, []int{2})
		c := connectTo(t, e, []int{1, 0})
		_, err := w.Create(ctx, "/n", nil, zksim.ModePersistent, zksim.OpenACL())
		require.NoError(t, err)
		ok, _, ch, err := c.ExistsW(ctx, "/n")
		require.NoError(t, err)
		require.True(t, ok)

		e.Lag(0)
		require.NoError(t, w.Delete(ctx, "/n", -1))
		synctest.Wait()
		require.Equal(t, zksim.Event{Type: zksim.EventNodeDeleted, State: zksim.StateConnected, Path: "/n"}, <-ch)

		e.Crash(1)
		require.Equal(t, 0, memberOf(e, c))
		ok, _, ch, err = c.ExistsW(ctx, "/n")
		require.NoError(t, err)
		require.True(t, ok, "member 0 has not applied the delete")
		e.CatchUp(0)
		synctest.Wait()
		select {
		case ev := <-ch:
			require.Equal(t, zksim.Event{Type: zksim.EventNodeDeleted, State: zksim.StateConnected, Path: "/n"}, ev)
		default:
			t.Fatal("member 0 applied the delete: the watch did not fire")
		}
	})
}
