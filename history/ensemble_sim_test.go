package history_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim/faults"
	"github.com/zksim/zksim/history"
	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// ensemblePolicy is the fault mix, with the ensemble's faults drawn more
// often: at about one step in 100, mostly a follower that starts lagging,
// so that reads are often stale.
func ensemblePolicy() sim.Policy {
	lag := faults.Lag(faults.AnyMember)
	return faults.Combine(faults.Mix(0.005),
		faults.Sometimes(0.01, lag, lag, lag, lag, lag, lag, faults.CatchUp(faults.AnyMember),
			faults.Crash(faults.AnyMember, time.Second), faults.Isolate(faults.AnyMember, time.Second), faults.FailLeader(faults.AnyOutcome)))
}

// ensembleSeedsEnv overrides the number of simulated ensemble histories
// TestSimEnsembleHistories checks.
const ensembleSeedsEnv = "HISTORY_ENSEMBLE_SEEDS"

// TestSimEnsembleHistories checks the histories of random workloads of 4
// clients on a simulated 3-member ensemble under the fault mix, the
// ensemble's faults included (a lagging follower and its stale reads, a
// member crashed or isolated, the leader failing on a write), clients of
// a lagging member syncing and reading every path (Workload.Behind): every
// one must pass. HISTORY_ENSEMBLE_SEEDS sets how many (default 100).
func TestSimEnsembleHistories(t *testing.T) {
	n := 100
	if s, ok := os.LookupEnv(ensembleSeedsEnv); ok {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err, "%s=%q", ensembleSeedsEnv, s)
	}
	if testing.Short() {
		n = min(n, 20)
	}
	start := time.Now()
	var ops, unknown int
	seen := map[string]int{}
	kinds := []string{"fault Lag(", "waits for its member", "fault Crash(", "fault Isolate(", "the leader failed on this write", "elected leader"}
	for seed := range uint64(n) {
		var w *sim.World
		o := simOpts{seed: seed, clients: 4, paths: 3, ops: 15, members: 3, policy: ensemblePolicy, behind: true,
			prepare: func(sw *sim.World) func(*zkmem.Request) { w = sw; return nil }}
		h, err := simRunOpts(t, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		trace := w.TraceString()
		for _, k := range kinds {
			if strings.Contains(trace, k) {
				seen[k]++
			}
		}
		ops += len(h)
		for i := range h {
			if h[i].Outcome() == history.Unknown {
				unknown++
			}
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d ensemble histories, %d operations (%d of unknown outcome), in %v; runs with %v", n, ops, unknown, elapsed.Round(time.Millisecond), seen)
	if n >= 50 {
		for _, k := range kinds {
			require.NotZero(t, seen[k], "no run of %d had %q", n, k)
		}
	}
}
