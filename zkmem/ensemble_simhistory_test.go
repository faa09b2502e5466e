package zkmem_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
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

// History checks of zkmem ensembles in the simulator, with a planted bug
// that only a sync on a lagging member shows: the member answers the sync
// before it applied what the leader had committed (PlantSyncEarly). The
// workload draws sync-then-read pairs on clients whose member is behind
// (history.Workload.Behind), so that the bug meets a stale member.

// syncLagPolicy is the policy of these runs: at the first step, the
// follower with the most clients starts lagging; now and then it catches
// up and lags again; the mix's faults stay rare.
type syncLagPolicy struct{ inner sim.Policy }

func (p *syncLagPolicy) String() string { return "lag the busiest follower" }

func (p *syncLagPolicy) Step(w *sim.World, rng *rand.Rand) sim.StepFault {
	if p.inner != nil {
		return p.inner.Step(w, rng)
	}
	e := w.Ensemble()
	count := make([]int, e.Size())
	for i := range w.NumClients() {
		if m := w.Member(i); m >= 0 && m != e.Leader() {
			count[m]++
		}
	}
	m := 0
	for k, n := range count {
		if n > count[m] {
			m = k
		}
	}
	p.inner = faults.Combine(faults.Mix(0.002), faults.Sometimes(0.02, faults.CatchUp(m), faults.Lag(m), faults.Lag(m)))
	sim.StartPolicy(p.inner, w)
	return faults.Lag(m)
}

func (p *syncLagPolicy) Request(w *sim.World, client int, r *zkmem.Request, rng *rand.Rand) sim.Fate {
	if p.inner == nil {
		return sim.Fate{}
	}
	return p.inner.Request(w, client, r, rng)
}

// simEnsembleHistory runs the workload of seed, 6 clients on a simulated
// 3-member ensemble, with the planted bug if bug, and returns how
// many syncs waited for their member and what history.Check says.
func simEnsembleHistory(t *testing.T, seed uint64, bug bool) (waited int, checkErr error) {
	t.Helper()
	const clients = 6
	var clock history.ApplyClock
	var world *sim.World
	cfg := sim.Config{
		Seed: seed, Clients: clients, Members: 3,
		SessionTimeout: 4 * time.Second, ReconnectDelay: 50 * time.Millisecond,
		Server:   zkmem.Options{TickTime: time.Second},
		OnApply:  func(int, *zkmem.Request) { clock.Applied() },
		Policy:   &syncLagPolicy{},
		MaxSteps: 100_000,
		Choose:   membersBehind(seed, &world),
	}
	sim.Test(t, cfg, func(t *testing.T, w *sim.World) {
		world = w
		e := w.Ensemble()
		if bug {
			zkmem.PlantSyncEarly(e)
		}
		rec := history.NewRecorder(&clock)
		wl := history.Workload{Root: "/h", Paths: 3, Ops: 60, Seed: seed, Think: 2 * time.Millisecond, Timeout: 5 * time.Second,
			Behind: func(i int) bool {
				m := w.Member(i)
				return m >= 0 && w.Lagging(m)
			}}
		var done atomic.Int32
		for i := range clients {
			body := wl.Client(rec, i, zksim.Conn(w.Conn(i)))
			w.Go(func(ctx context.Context) {
				defer done.Add(1)
				_ = body(ctx)
			})
		}
		if err := w.Run(func() bool { return int(done.Load()) == clients }); err != nil && !errors.Is(err, sim.ErrIdle) {
			t.Fatalf("seed %d: run: %v", seed, err)
		}
		for _, line := range strings.Split(w.TraceString(), "\n") {
			if strings.Contains(line, " apply sync /h/") && strings.HasSuffix(line, "-> waits for its member") {
				waited++
			}
		}
		checkErr = history.Check(rec.History())
	})
	return waited, checkErr
}

// TestSimEnsembleCatchesEarlySync: the histories of 20 seeds pass on a
// correct ensemble, and with members answering a sync before they caught
// up, history.Check finds a read after a sync that misses a write
// acknowledged before it on at least 19 of the 20.
func TestSimEnsembleCatchesEarlySync(t *testing.T) {
	const seeds = 20
	caught, waited := 0, 0
	for seed := range uint64(seeds) {
		n, err := simEnsembleHistory(t, seed, false)
		require.NoError(t, err, "seed %d without the bug", seed)
		waited += n
		_, err = simEnsembleHistory(t, seed, true)
		if err == nil {
			t.Logf("seed %d: not caught", seed)
			continue
		}
		var herr *history.Error
		require.True(t, errors.As(err, &herr), "seed %d: Check returned %v", seed, err)
		require.True(t, herr.Has(history.SyncRead), "seed %d: caught by another rule: %v", seed, err)
		caught++
	}
	t.Logf("the planted bug was caught on %d of %d seeds; without it, %d syncs waited for their member", caught, seeds, waited)
	require.GreaterOrEqual(t, caught, seeds-1)
}

// membersBehind is a Config.Choose that keeps lagging members behind: when
// a client's event is enabled besides the members' it takes a client's
// (uniformly) 29 times in 30, and when only the members' are it lets time
// pass with them behind nine times in ten, from its own generator
// seeded by seed; every other choice it leaves to the World's seed. A
// member then stays behind for a while, and a write can be acknowledged,
// and a client of the member sync and read, before the member applies it.
func membersBehind(seed uint64, w **sim.World) func([]sim.Choice) int {
	rng := rand.New(rand.NewPCG(seed, 0xbe41d))
	return func(cs []sim.Choice) int {
		n := len(cs)
		if *w == nil {
			return -1
		}
		e := (*w).Ensemble()
		k := 0
		for m := range e.Size() {
			if r := e.Role(m); (*w).Lagging(m) && e.Pending(m) > 0 && r != zkmem.RoleDown && r != zkmem.RoleLooking {
				k++
			}
		}
		clients := false
		for i := range (*w).NumClients() {
			clients = clients || (*w).InFlight(i)
		}
		switch {
		case k == 0 || n <= k:
			return -1
		case clients && rng.IntN(30) != 0:
			return rng.IntN(n - k) // the clients' events come first
		case !clients && rng.IntN(10) < 9:
			return n - 1 // asked whether to let time pass: yes
		}
		return -1
	}
}
