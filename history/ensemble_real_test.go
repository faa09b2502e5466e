package history_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/zktest"
)

// TestRealEnsembleHistory checks the history of a random workload of 6
// clients, two starting on each member of a real 3-member ZooKeeper
// ensemble, while a follower lags and catches up and then the leader
// crashes (its clients move on, the others elect a new leader) and
// restarts. With CI=true a missing ZooKeeper fails the test.
func TestRealEnsembleHistory(t *testing.T) {
	opts := zktest.FastOptions()
	opts.MaxSessionTimeout = 10 * time.Second
	ens := zktest.OpenRealEnsemble(t, 3, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	leader, err := ens.Leader(ctx)
	require.NoError(t, err)
	follower := (leader + 1) % 3
	n := ens.Size()
	var conns []zksim.Conn
	for k := range 2 * n {
		i := k % n
		c, err := ens.Connect(ctx, opts.MaxSessionTimeout, i, (i+1)%n, (i+2)%n)
		require.NoError(t, err, "connect client %d to member %d", k, i)
		t.Cleanup(func() { _ = c.Close() })
		conns = append(conns, c)
	}
	rec := history.NewRecorder(nil)
	wl := history.Workload{Root: "/history-ensemble", Paths: 3, Ops: 150, Seed: 1, Think: 10 * time.Millisecond, Timeout: 10 * time.Second}

	start := time.Now()
	var (
		logMu sync.Mutex
		log   []string
	)
	note := func(what string) {
		logMu.Lock()
		defer logMu.Unlock()
		log = append(log, fmt.Sprintf("%v %s", time.Since(start).Round(time.Millisecond), what))
	}
	var wg sync.WaitGroup
	var faultErr error
	wg.Go(func() {
		faultErr = func() error {
			time.Sleep(200 * time.Millisecond)
			if err := ens.Lag(ctx, follower); err != nil {
				return err
			}
			note(fmt.Sprintf("member %d lags", follower))
			time.Sleep(400 * time.Millisecond)
			if err := ens.CatchUp(ctx, follower); err != nil {
				return err
			}
			note(fmt.Sprintf("member %d caught up", follower))
			time.Sleep(200 * time.Millisecond)
			if err := ens.Crash(ctx, leader); err != nil {
				return err
			}
			note(fmt.Sprintf("leader %d crashed", leader))
			time.Sleep(300 * time.Millisecond)
			if err := ens.Restart(ctx, leader); err != nil {
				return err
			}
			note(fmt.Sprintf("member %d restarted", leader))
			return nil
		}()
	})
	require.NoError(t, wl.Run(ctx, rec, conns))
	note("workload done")
	wg.Wait()
	require.NoError(t, faultErr)
	h := rec.History()
	unknown := 0
	for i := range h {
		if h[i].Outcome() == history.Unknown {
			unknown++
		}
	}
	t.Logf("%d operations, %d of unknown outcome; %v", len(h), unknown, log)
	require.Len(t, h, 2*n*wl.Ops)
	require.NoError(t, history.Check(h))
}
