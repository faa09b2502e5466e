package sim_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

func zkmemOptions() zkmem.Options {
	return zkmem.Options{TickTime: time.Second}
}

// TestReplaySameSeedSameTrace runs 5 lock contenders under the whole
// fault mix for many seeds, twice each, and requires byte-identical traces.
func TestReplaySameSeedSameTrace(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 20
	}
	distinct := map[string]bool{}
	// Every kind of fault of the mix must strike in some run, or the
	// replay would prove little.
	kinds := []string{"fault Pause(", "fault Expire(", "fault Disconnect(", "fault Delay(",
		"[LoseReply]", "[DropRequest]", "[shuffled]", "session expired by the server", "deliver state StateExpired"}
	struck := map[string]int{}
	acquired := 0
	for seed := range uint64(seeds) {
		first, work := runLockWorld(t, seed, 5)
		second, _ := runLockWorld(t, seed, 5)
		if first != second {
			t.Fatalf("seed %d: traces differ:\n%s", seed, firstDifference(first, second))
		}
		distinct[first] = true
		for _, k := range kinds {
			if strings.Contains(first, k) {
				struck[k]++
			}
		}
		for _, n := range work.acquired {
			acquired += n
		}
		if work.resource.refusals != 0 {
			t.Errorf("seed %d: the fenced resource refused %d writes from fresh holders", seed, work.resource.refusals)
		}
	}
	if len(distinct) < seeds*9/10 {
		t.Errorf("only %d distinct traces for %d seeds: the seed hardly matters", len(distinct), seeds)
	}
	if !testing.Short() {
		for _, k := range kinds {
			if struck[k] == 0 {
				t.Errorf("no run of %d had %q", seeds, k)
			}
		}
	}
	if acquired < seeds*5 {
		t.Errorf("only %d locks taken in %d runs of 5 contenders", acquired, seeds)
	}
	t.Logf("%d seeds x 2 runs: identical traces; %d distinct; locks taken %d; runs struck: %v", seeds, len(distinct), acquired, struck)
}

func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			lo := max(0, i-5)
			return "first run:\n" + strings.Join(la[lo:min(len(la), i+3)], "\n") + "\nsecond run:\n" + strings.Join(lb[lo:min(len(lb), i+3)], "\n")
		}
	}
	return "one trace is a prefix of the other"
}

// TestReplayManyClients: the same with 20 contenders, fewer seeds.
func TestReplayManyClients(t *testing.T) {
	for seed := range uint64(10) {
		first, work := runLockWorld(t, 1000+seed, 20)
		second, _ := runLockWorld(t, 1000+seed, 20)
		if first != second {
			t.Fatalf("seed %d: traces differ:\n%s", 1000+seed, firstDifference(first, second))
		}
		if work.resource.refusals != 0 {
			t.Errorf("seed %d: %d refused writes", 1000+seed, work.resource.refusals)
		}
	}
}

// TestReplayCancelledLocks: contenders whose Lock times out (a cancelled
// call cleans up its node, waiting through the faults for as long as its
// session may live) replay byte for byte too.
func TestReplayCancelledLocks(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 10
	}
	cancelled := 0
	for seed := range uint64(seeds) {
		first, n := runCancelWorld(t, 5000+seed, 5)
		second, _ := runCancelWorld(t, 5000+seed, 5)
		if first != second {
			t.Fatalf("seed %d: traces differ:\n%s", 5000+seed, firstDifference(first, second))
		}
		cancelled += n
	}
	if cancelled < seeds {
		t.Errorf("only %d Locks timed out in %d runs: the test hardly cancels", cancelled, seeds)
	}
	t.Logf("%d seeds x 2 runs: identical traces; %d Locks timed out and cleaned up", seeds, cancelled)
}

// runCancelWorld runs clients that try six times each to take a lock with
// a short timeout under the fault mix, holding it a while when they get it.
// It returns the trace and how many Locks timed out.
func runCancelWorld(t *testing.T, seed uint64, clients int) (trace string, timedOut int) {
	t.Helper()
	cfg := sim.Config{
		Seed: seed, Clients: clients, SessionTimeout: 4 * time.Second,
		ReconnectDelay: 50 * time.Millisecond, Server: zkmemOptions(),
		Cost:   sim.CostModel{PerRequest: time.Millisecond},
		Policy: faults.Mix(0.05), MaxSteps: 20000,
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		var finished, timeouts atomic.Int64
		for i := range clients {
			conn := w.Conn(i)
			w.Go(func(ctx context.Context) {
				defer finished.Add(1)
				for r := range 6 {
					m := lock.New(conn, "/lock")
					lctx, cancel := context.WithTimeout(ctx, time.Duration(200+100*((i+r)%5))*time.Millisecond)
					err := m.Lock(lctx)
					cancel()
					switch {
					case errors.Is(err, context.DeadlineExceeded):
						timeouts.Add(1)
						continue
					case err != nil:
						return // the session ended, or the World closed
					}
					time.Sleep(150 * time.Millisecond)
					if m.Unlock(ctx) != nil {
						return
					}
				}
			})
		}
		err := w.Run(func() bool { return finished.Load() == int64(clients) })
		if err != nil && !errors.Is(err, sim.ErrIdle) && !errors.Is(err, sim.ErrMaxSteps) {
			t.Errorf("run: %v", err)
		}
		trace, timedOut = w.TraceString(), int(timeouts.Load())
	})
	return trace, timedOut
}
