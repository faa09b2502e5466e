package sim_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
)

// TestReplayZKClients runs go-zookeeper clients taking go-zookeeper's own
// zk.Lock, beside native clients taking recipes/lock on another path,
// under the whole fault mix, for 100 seeds, twice each, and requires
// byte-identical traces: go-zookeeper's pings, reconnections and
// setWatches included.
func TestReplayZKClients(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 20
	}
	kinds := []string{"fault Pause(", "fault Expire(", "fault Disconnect(", "fault Delay(",
		"[LoseReply]", "[DropRequest]", "[shuffled]", "session expired by the server",
		"apply ping", "apply setWatches", "connect answer", "session expired", "hangup", "deliver close"}
	struck := map[string]int{}
	distinct := map[string]bool{}
	locks := 0
	for seed := range uint64(seeds) {
		first, n := runZKLockWorld(t, seed, 3, 2)
		second, _ := runZKLockWorld(t, seed, 3, 2)
		if first != second {
			t.Fatalf("seed %d: traces differ:\n%s", seed, firstDifference(first, second))
		}
		distinct[first] = true
		locks += n
		for _, k := range kinds {
			if strings.Contains(first, k) {
				struck[k]++
			}
		}
	}
	if len(distinct) < seeds*9/10 {
		t.Errorf("only %d distinct traces for %d seeds", len(distinct), seeds)
	}
	if !testing.Short() {
		for _, k := range kinds {
			if struck[k] == 0 {
				t.Errorf("no run of %d had %q", seeds, k)
			}
		}
	}
	if locks < seeds {
		t.Errorf("only %d zk.Locks taken in %d runs", locks, seeds)
	}
	t.Logf("%d seeds x 2 runs: identical traces; %d distinct; zk.Locks taken %d; runs struck: %v", seeds, len(distinct), locks, struck)
}

// runZKLockWorld runs zkClients go-zookeeper clients, each taking zk.Lock
// on /zklock three times, and native clients taking recipes/lock on /lock,
// under faults.Mix. It returns the trace and how many zk.Locks were taken.
func runZKLockWorld(t *testing.T, seed uint64, zkClients, native int) (trace string, taken int) {
	t.Helper()
	return runZKLockWorldOn(t, seed, 0, zkClients, native)
}

// runZKLockWorldOn is runZKLockWorld on an ensemble of members (0: a
// standalone server).
func runZKLockWorldOn(t *testing.T, seed uint64, members, zkClients, native int) (trace string, taken int) {
	t.Helper()
	cfg := sim.Config{
		Seed: seed, Clients: native, Members: members, SessionTimeout: 4 * time.Second,
		Server: zkmemOptions(), Cost: sim.CostModel{PerRequest: time.Millisecond},
		Policy: faults.Mix(0.03), MaxSteps: 6000,
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		var finished, locks atomic.Int64
		for i := range native {
			conn := w.Conn(i)
			w.Go(func(ctx context.Context) {
				defer finished.Add(1)
				for range 2 {
					m := lock.New(conn, "/lock")
					if m.Lock(ctx) != nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
					if m.Unlock(ctx) != nil {
						return
					}
				}
			})
		}
		for range zkClients {
			zc, events, err := w.ConnectZK()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for range events {
				}
			}()
			w.Go(func(ctx context.Context) {
				defer finished.Add(1)
				for tries := 0; tries < 3 && ctx.Err() == nil; tries++ {
					l := zk.NewLock(zc, "/zklock", zk.WorldACL(zk.PermAll))
					if err := l.Lock(); err != nil {
						time.Sleep(time.Second)
						continue
					}
					locks.Add(1)
					time.Sleep(100 * time.Millisecond)
					l.Unlock()
				}
			})
		}
		all := int64(native + zkClients)
		err := w.Run(func() bool { return finished.Load() == all })
		if err != nil && !errors.Is(err, sim.ErrMaxSteps) {
			t.Errorf("run: %v", err)
		}
		trace, taken = w.TraceString(), int(locks.Load())
	})
	return trace, taken
}
