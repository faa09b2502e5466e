package faults_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/sim"
)

// ensembleChurn runs three clients churning ephemerals (a create, a
// getChildren, a delete, 30 times each) on a 3-member ensemble under
// policy, and returns the trace and the coverage.
func ensembleChurn(t *testing.T, seed uint64, policy sim.Policy) (trace string, cover sim.Coverage) {
	t.Helper()
	sim.Test(t, sim.Config{Seed: seed, Clients: 3, Members: 3, Policy: policy}, func(t *testing.T, w *sim.World) {
		zc, err := w.Server().Connect()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zc.Create(context.Background(), "/app", nil, zksim.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
		_ = zc.Close()
		var done [3]flag
		for i := range 3 {
			c := w.Conn(i)
			w.Go(func(ctx context.Context) {
				defer done[i].set()
				for range 30 {
					p, err := c.Create(ctx, "/app/n-", nil, zksim.ModeEphemeralSequential, open)
					if err == nil {
						_, _, _ = c.Children(ctx, "/app")
						_ = c.Delete(ctx, p, -1)
					}
					if c.State() == zksim.StateExpired {
						return
					}
				}
			})
		}
		mustRun(t, w, func() bool { return done[0].get() && done[1].get() && done[2].get() })
		trace = w.TraceString()
		cover = w.Coverage()
	})
	return trace, cover
}

// TestEnsembleFaultsDrawn: on a 3-member ensemble, Swarm and Mix draw every
// ensemble fault of the catalogue in some run, the trace shows each and
// what followed (a member applying a commit, a restart, a heal, an
// election), the coverage counts the requests they struck, and a seed
// replays byte for byte.
func TestEnsembleFaultsDrawn(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 15
	}
	want := []string{"fault Lag(m", "fault CatchUp(m", "fault Crash(m", "fault Isolate(m",
		"fault FailLeader(committed)", "fault FailLeader(lost)", "the leader failed on this write",
		"apply commit (", "restarts", "heals", "elected leader", "-> waits for its member"}
	seen := map[string]int{}
	cover := sim.Coverage{}
	policies := []func() sim.Policy{
		func() sim.Policy { return faults.Swarm(faults.SwarmOptions{Intensity: 0.2}) },
		func() sim.Policy { return faults.Mix(0.05) },
	}
	for seed := range uint64(seeds) {
		for _, p := range policies {
			trace, c := ensembleChurn(t, seed, p())
			cover.Add(c)
			for _, k := range want {
				if strings.Contains(trace, k) {
					seen[k]++
				}
			}
			if seed < 3 {
				again, _ := ensembleChurn(t, seed, p())
				require.Equal(t, trace, again, "seed %d: same seed, different trace", seed)
			}
		}
	}
	t.Logf("seen %v", seen)
	for _, k := range want {
		require.NotZero(t, seen[k], "no run of %d shows %q", 2*seeds, k)
	}
	struck := map[string]int{}
	for k, n := range cover {
		struck[k.Fault] += n
	}
	for _, f := range sim.EnsembleCoverage {
		require.NotZero(t, struck[f], "coverage counts no request struck by %s:\n%v", f, cover)
	}
	require.Contains(t, cover.String(), "Failover")
}

// TestEnsembleRowsLeftOutOnAStandaloneWorld: the ensemble's rows are
// neither drawn nor printed by Swarm and Mix on a standalone World.
func TestEnsembleRowsLeftOutOnAStandaloneWorld(t *testing.T) {
	for seed := range uint64(20) {
		trace := churnTrace(t, seed, faults.Swarm(faults.SwarmOptions{Intensity: 0.3}))
		for _, k := range []string{"Lag", "CatchUp", "Crash", "Isolate", "FailLeader"} {
			require.NotContains(t, trace, k, "seed %d", seed)
		}
	}
	sim.Test(t, sim.Config{Seed: 1, Clients: 1, Policy: faults.Swarm(faults.SwarmOptions{})}, func(t *testing.T, w *sim.World) {
		// An ensemble fault aimed at any member strikes nothing here.
		require.Nil(t, faults.Lag(faults.AnyMember).Resolve(w))
		require.ErrorIs(t, faults.Lag(0).Inject(w), sim.ErrNotEnsemble)
	})
}

func TestEnsembleFaultsPrint(t *testing.T) {
	require.Equal(t, "Lag(m?)", faults.Lag(faults.AnyMember).String())
	require.Equal(t, "Crash(m1, 2s)", faults.Crash(1, 2e9).String())
	require.Equal(t, "Crash(m1)", faults.Crash(1, -1).String())
	require.Equal(t, "Heal(m0)", faults.Heal(0).String())
	require.Equal(t, "FailLeader(?)", faults.FailLeader(faults.AnyOutcome).String())
	require.Equal(t, "FailLeader(lost)", faults.FailLeader(faults.Lost).String())
}
