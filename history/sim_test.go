package history_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// SeedsEnv overrides the number of simulated histories
// TestSimHistories checks: HISTORY_SEEDS=10000 runs the full count.
const seedsEnv = "HISTORY_SEEDS"

// ciSeeds is the number of simulated histories checked by default.
const ciSeeds = 1000

// simRun runs the workload for seed on the simulator with clients
// clients under the fault mix (faults: probability per step, 0 for none),
// each client's Conn wrapped by wrap (nil: none), and returns the history
// and the result of checking it. The check runs inside the run, so that a
// failing history fails t with the seed and the trace.
func simRun(t *testing.T, seed uint64, clients int, fault float64, wrap func(i int, c zksim.Conn) zksim.Conn) ([]history.Op, error) {
	t.Helper()
	return simRunOpts(t, simOpts{seed: seed, clients: clients, fault: fault, wrap: wrap, paths: 3, ops: 15})
}

// simOpts describes a simulated run.
type simOpts struct {
	seed       uint64
	clients    int
	fault      float64
	wrap       func(i int, c zksim.Conn) zksim.Conn
	paths, ops int
	pct        bool
	members    int               // sim.Config.Members: 3 runs on a 3-member ensemble
	policy     func() sim.Policy // the fault policy, instead of the mix
	noCheck    bool              // leave the check to the caller
	behind     bool              // Workload.Behind: sync-then-read on clients of lagging members
	// prepare, if set, runs in the bubble before the clients start; it
	// returns a function told of every request the server applies.
	prepare func(w *sim.World) func(r *zkmem.Request)
}

func simRunOpts(t *testing.T, o simOpts) ([]history.Op, error) {
	t.Helper()
	seed, clients, fault, wrap := o.seed, o.clients, o.fault, o.wrap
	var clock history.ApplyClock
	var onApply func(r *zkmem.Request)
	cfg := sim.Config{
		Seed:           seed,
		Clients:        clients,
		SessionTimeout: 4 * time.Second,
		ReconnectDelay: 50 * time.Millisecond,
		Server:         zkmem.Options{TickTime: time.Second},
		OnApply: func(_ int, r *zkmem.Request) {
			clock.Applied()
			if onApply != nil {
				onApply(r)
			}
		},
		MaxSteps: 100_000,
		NoTrace:  false,
		Members:  o.members,
	}
	if fault > 0 {
		cfg.Policy = faults.Mix(fault)
	}
	if o.policy != nil {
		cfg.Policy = o.policy()
	}
	if o.pct {
		cfg.PCT = sim.PCT{Depth: 3}
	}
	var ops []history.Op
	var checkErr error
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		if o.prepare != nil {
			onApply = o.prepare(w)
		}
		rec := history.NewRecorder(&clock)
		wl := history.Workload{Root: "/h", Paths: o.paths, Ops: o.ops, Seed: seed, Think: 20 * time.Millisecond, Timeout: 5 * time.Second}
		if o.behind {
			wl.Behind = func(i int) bool { m := w.Member(i); return m >= 0 && w.Lagging(m) }
		}
		var done atomic.Int32
		for i := range clients {
			conn := zksim.Conn(w.Conn(i))
			if wrap != nil {
				conn = wrap(i, conn)
			}
			body := wl.Client(rec, i, conn)
			w.Go(func(ctx context.Context) {
				defer done.Add(1)
				_ = body(ctx)
			})
		}
		err := w.Run(func() bool { return int(done.Load()) == clients })
		if err != nil && !errors.Is(err, sim.ErrIdle) {
			t.Fatalf("run: %v", err)
		}
		ops = rec.History()
		if !o.noCheck {
			checkErr = history.Check(ops)
		}
	})
	return ops, checkErr
}

func seeds(t *testing.T) int {
	t.Helper()
	n := ciSeeds
	if s, ok := os.LookupEnv(seedsEnv); ok {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err, "%s=%q", seedsEnv, s)
	}
	if testing.Short() {
		n = min(n, 30)
	}
	return n
}

// TestSimHistories checks the histories of random workloads of 4 clients
// on zkmem in the simulator, under faults (lost replies, dropped requests,
// disconnections, expiries, pauses): every one must pass. HISTORY_SEEDS
// sets how many (default 1,000; the full count is 10,000).
func TestSimHistories(t *testing.T) {
	n := seeds(t)
	start := time.Now()
	var ops, unknown int
	for seed := range uint64(n) {
		h, err := simRun(t, seed, 4, 0.005, nil)
		if err != nil {
			t.Fatalf("seed %d (replay with ZKSIM_SEED=%d %s=1): %v", seed, seed, seedsEnv, err)
		}
		ops += len(h)
		for i := range h {
			if h[i].Outcome() == history.Unknown {
				unknown++
			}
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d histories, %d operations (%d of unknown outcome), in %v (%v per history)", n, ops, unknown, elapsed.Round(time.Millisecond), (elapsed / time.Duration(n)).Round(time.Microsecond))
	require.Positive(t, unknown, "the faults never left an outcome unknown: the check of indefinite writes went untested")
}

// TestSimHistoryDeterministic: one seed gives one history.
func TestSimHistoryDeterministic(t *testing.T) {
	a, err := simRun(t, 7, 4, 0.005, nil)
	require.NoError(t, err)
	b, err := simRun(t, 7, 4, 0.005, nil)
	require.NoError(t, err)
	require.Equal(t, len(a), len(b))
	for i := range a {
		require.Equal(t, a[i].String(), b[i].String())
	}
}

// TestSimHistoriesStress checks histories with more clients on fewer
// paths, more faults and PCT scheduling. It runs only when HISTORY_SEEDS
// is set (it is not part of the CI budget).
func TestSimHistoriesStress(t *testing.T) {
	if _, ok := os.LookupEnv(seedsEnv); !ok {
		t.Skip("set " + seedsEnv + " to run")
	}
	n := seeds(t)
	for seed := range uint64(n) {
		o := simOpts{seed: seed, clients: 8, fault: 0.02, paths: 2, ops: 25, pct: seed%2 == 1}
		if _, err := simRunOpts(t, o); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
