package zkmem_test

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/zkmem"
)

// TestEnsembleDelayHoldsRepliesAndEventsInOrder: Control.Delay holds an
// ensemble session's replies with its notifications, in order, as on a
// standalone server (TestDelayHoldsRepliesAndEventsInOrder): a reply its
// member answers at once, and one that waited for the member to apply.
// (An ensemble's replies once left at once while the events waited, so a
// client read the new data before it heard the watch fire.)
func TestEnsembleDelayHoldsRepliesAndEventsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		rec := &recorder{}
		a, _, err := e.OpenSessionAt(1, 10*time.Second, 0, zkmem.DefaultClientAddr, rec, false)
		require.NoError(t, err)
		b, _, err := e.OpenSessionAt(0, 10*time.Second, 0, zkmem.DefaultClientAddr, &recorder{}, false)
		require.NoError(t, err)
		mkdir(t, b, "/x")
		require.NoError(t, a.Do(&zkmem.Request{Op: zkmem.OpSync, Path: "/x"}).Err)
		require.NoError(t, a.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/x", Watch: true}).Err)
		rec.take()

		// Answered at once by its member.
		ctl := e.Server().Control(a.ID())
		ctl.Delay(time.Second)
		start := time.Now()
		require.NoError(t, b.Do(&zkmem.Request{Op: zkmem.OpSetData, Path: "/x", Version: -1}).Err)
		resp := a.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/x", Watch: true})
		require.NoError(t, resp.Err)
		require.Equal(t, time.Second, time.Since(start), "the reply waited for the delay")
		require.Equal(t, []string{
			fmt.Sprintf("event EventNodeDataChanged /x zxid=%d", resp.Zxid),
			fmt.Sprintf("reply getData /x err=<nil> zxid=%d", resp.Zxid),
		}, rec.take())

		// Answered once its lagging member applied what it waits for.
		e.Lag(1)
		require.NoError(t, b.Do(&zkmem.Request{Op: zkmem.OpSetData, Path: "/x", Version: -1}).Err)
		ctl.Delay(time.Second)
		start = time.Now()
		done := make(chan zkmem.Response, 1)
		go func() { done <- a.Do(&zkmem.Request{Op: zkmem.OpSync, Path: "/x"}) }()
		synctest.Wait()
		require.Empty(t, done, "the sync waits for member 1")
		e.CatchUp(1)
		synctest.Wait()
		require.Empty(t, done, "member 1 applied it, the delay holds the reply")
		require.Equal(t, []string(nil), rec.take())
		resp = <-done
		require.NoError(t, resp.Err)
		require.Equal(t, time.Second, time.Since(start), "the reply waited for the delay")
		require.Equal(t, []string{
			fmt.Sprintf("event EventNodeDataChanged /x zxid=%d", resp.Zxid),
			fmt.Sprintf("reply sync /x err=<nil> zxid=%d", resp.Zxid),
		}, rec.take())
	})
}
