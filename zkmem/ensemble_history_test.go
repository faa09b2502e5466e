package zkmem_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/zkmem"
)

// History checks of zkmem ensembles: clients on every member run a random
// workload on real goroutines while a seeded fault loop makes members lag,
// apply one commit, catch up, crash and restart, and moves clients between
// members; history.Check must accept every history. With a planted bug (a
// member accepting a client that has seen a newer zxid) it must catch most.

// ensembleHistorySeeds is how many seeds TestEnsembleHistories runs
// (ZKSIM_ENSEMBLE_HISTORY_SEEDS overrides it).
const ensembleHistorySeeds = 100

// ensembleHistory runs the workload of seed on a fresh 3-member ensemble,
// with the planted bug if bug, and returns the history.
func ensembleHistory(t *testing.T, seed uint64, bug bool) []history.Op {
	t.Helper()
	const n, clients = 3, 4
	opts := zkmem.Options{TickTime: 100 * time.Millisecond, MaxSessionTimeout: time.Minute}
	e := zkmem.NewEnsemble(n, zkmem.EnsembleOptions{Options: opts})
	t.Cleanup(e.Close)
	if bug {
		zkmem.PlantAcceptAhead(e)
	}
	var conns []zksim.Conn
	var raw []*zkmem.Conn
	for k := range clients {
		c, err := e.Connect(zkmem.WithMembers(k%n, (k+1)%n, (k+2)%n), zkmem.WithSessionTimeout(time.Minute))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		raw = append(raw, c)
		conns = append(conns, c)
	}
	rec := history.NewRecorder(nil)
	wl := history.Workload{Root: "/h", Paths: 3, Ops: 60, Seed: seed, Think: 200 * time.Microsecond}
	done := make(chan struct{})
	faults := make(chan error, 1)
	go func() { faults <- ensembleFaults(e, raw, rand.New(rand.NewPCG(seed, 0x5eed)), done) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wl.Run(ctx, rec, conns)
	close(done)
	require.NoError(t, <-faults)
	require.NoError(t, err)
	return rec.History()
}

// ensembleFaults draws member faults and client moves from rng until done
// is closed, then restarts and catches up every member. At most one member
// is down at a time, so a quorum always remains and every election
// succeeds; the leader never lags.
func ensembleFaults(e *zkmem.Ensemble, conns []*zkmem.Conn, rng *rand.Rand, done <-chan struct{}) error {
	n := e.Size()
	down := -1
	var wg sync.WaitGroup
	moving := make([]atomic.Bool, len(conns))
	failed := make(chan error, 1)
	for {
		select {
		case <-done:
			if down >= 0 {
				e.Restart(down)
			}
			for i := range n {
				e.CatchUp(i)
			}
			var err error
			if e.Leader() < 0 {
				_, err = e.Elect()
			}
			wg.Wait()
			select {
			case err = <-failed:
			default:
			}
			return err
		case <-time.After(time.Duration(rng.IntN(300)) * time.Microsecond):
		}
		i := rng.IntN(n)
		switch r := rng.IntN(20); {
		case r < 6:
			if i != e.Leader() {
				e.Lag(i)
			}
		case r < 10:
			e.ApplyNext(i)
		case r < 11:
			e.CatchUp(i)
		case r < 12:
			if down < 0 {
				e.Crash(i)
				down = i
			}
		case r < 14:
			if down >= 0 {
				e.Restart(down)
				down = -1
			}
		default:
			// The client's connection drops; it moves on to the next
			// member of its list that takes it. Reconnect returns once
			// the member answered the client's setWatches, which may
			// wait for a lagging member: the client reconnects on a
			// goroutine of its own, as a client library does.
			k := rng.IntN(len(conns))
			if !moving[k].CompareAndSwap(false, true) {
				break
			}
			ctl := e.Server().Control(conns[k].SessionID())
			ctl.Disconnect()
			wg.Go(func() {
				defer moving[k].Store(false)
				if err := ctl.Reconnect(); err != nil && !errors.Is(err, zksim.ErrConnectionLoss) {
					select {
					case failed <- fmt.Errorf("reconnect session %#x: %w", ctl.SessionID(), err):
					default:
					}
				}
			})
		}
		if e.Leader() < 0 {
			if _, err := e.Elect(); err != nil {
				return fmt.Errorf("elect with member %d down: %w", down, err)
			}
		}
	}
}

// TestEnsembleHistories: history.Check accepts the histories of many
// seeds on a correct ensemble.
func TestEnsembleHistories(t *testing.T) {
	seeds := ensembleHistorySeeds
	if s := os.Getenv("ZKSIM_ENSEMBLE_HISTORY_SEEDS"); s != "" {
		var err error
		seeds, err = strconv.Atoi(s)
		require.NoError(t, err, "ZKSIM_ENSEMBLE_HISTORY_SEEDS")
	}
	start := time.Now()
	ops, unknown := 0, 0
	for seed := range uint64(seeds) {
		h := ensembleHistory(t, seed, false)
		for i := range h {
			if h[i].Outcome() == history.Unknown {
				unknown++
			}
		}
		ops += len(h)
		if err := history.Check(h); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	t.Logf("%d seeds, %d operations (%d of unknown outcome) checked in %v", seeds, ops, unknown, time.Since(start).Round(time.Millisecond))
}

// TestEnsembleHistoryCatchesAcceptAhead: with members accepting clients
// that have seen a newer zxid, history.Check finds a stale read on most
// seeds (more than half; typically 14 to 18 of 20); the same seeds
// without the bug pass (TestEnsembleHistories).
func TestEnsembleHistoryCatchesAcceptAhead(t *testing.T) {
	const seeds = 20
	caught := 0
	for seed := range uint64(seeds) {
		err := history.Check(ensembleHistory(t, seed, true))
		if err == nil {
			continue
		}
		var herr *history.Error
		require.True(t, errors.As(err, &herr), "seed %d: Check returned %v", seed, err)
		require.True(t, herr.Has(history.Monotonic) || herr.Has(history.ReadYourWrites) || herr.Has(history.SyncRead),
			"seed %d: %v", seed, err)
		caught++
	}
	t.Logf("the planted bug was caught on %d of %d seeds", caught, seeds)
	require.Greater(t, caught, seeds/2, "the planted bug was caught on only %d of %d seeds", caught, seeds)
}
