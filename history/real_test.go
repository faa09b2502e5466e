package history_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// realRun runs the workload with n clients on a real ZooKeeper (started
// by zktest; with CI=true a missing ZooKeeper fails the test), each
// client's Conn wrapped by wrap (nil: none). With cut set, a goroutine
// cuts client 0's connection and restores it a few times during the run,
// so that some outcomes are unknown.
func realRun(t *testing.T, n int, cut bool, wrap func(i int, c zksim.Conn) zksim.Conn) []history.Op {
	t.Helper()
	b := zktest.OpenReal(t, zktest.FastOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var conns, raw []zksim.Conn
	for range n {
		c, err := b.Connect(ctx, 2*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		raw = append(raw, c)
		if wrap != nil {
			c = wrap(len(conns), c)
		}
		conns = append(conns, c)
	}
	rec := history.NewRecorder(nil)
	wl := history.Workload{Root: "/history-real", Paths: 3, Ops: 60, Seed: 1, Think: 3 * time.Millisecond, Timeout: 5 * time.Second}
	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	if cut {
		wg.Go(func() {
			for range 6 {
				select {
				case <-time.After(60 * time.Millisecond):
				case <-runCtx.Done():
					return
				}
				if err := b.Disconnect(ctx, raw[0]); err != nil {
					t.Errorf("disconnect: %v", err)
					return
				}
				time.Sleep(30 * time.Millisecond)
				if err := b.Reconnect(ctx, raw[0]); err != nil && !errors.Is(err, zksim.ErrSessionExpired) {
					t.Errorf("reconnect: %v", err)
					return
				}
			}
		})
	}
	require.NoError(t, wl.Run(ctx, rec, conns))
	stop()
	wg.Wait()
	return rec.History()
}

// TestRealHistory checks the history of a random workload of 4 clients on
// a real ZooKeeper, with one client's connection cut now and then.
func TestRealHistory(t *testing.T) {
	h := realRun(t, 4, true, nil)
	unknown := 0
	for i := range h {
		if h[i].Outcome() == history.Unknown {
			unknown++
		}
	}
	t.Logf("%d operations, %d of unknown outcome", len(h), unknown)
	require.Len(t, h, 4*60)
	require.NoError(t, history.Check(h))
}

// TestRealCatchesLaggingReads runs the planted bug on the real server.
func TestRealCatchesLaggingReads(t *testing.T) {
	h := realRun(t, 4, false, lagging)
	err := history.Check(h)
	var herr *history.Error
	require.True(t, errors.As(err, &herr), "Check returned %v", err)
	require.True(t, herr.Has(history.Monotonic) || herr.Has(history.ReadYourWrites), "%v", err)
}
