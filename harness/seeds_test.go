package harness_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/harness"
)

// TestBlindElectorOnRandomSeeds, with ZKSIM_FLAW_SEEDS=N, tries the planted
// bug of the README's example from N random seeds at 1,000 checks each and
// reports, for each, whether it was caught and the length of its shrunk
// schedule. It is random exploration, not part of CI. ZKSIM_FLAW_SEED=S
// tries seed S alone (the shrunk schedule and the number of shrink checks
// are a function of S: compare runs on an idle and a loaded machine).
func TestBlindElectorOnRandomSeeds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZKSIM_FLAW_SEEDS"))
	fixed, err := strconv.ParseUint(os.Getenv("ZKSIM_FLAW_SEED"), 10, 64)
	if err == nil {
		n = 1
	}
	if n == 0 {
		t.Skip("set ZKSIM_FLAW_SEEDS=N to try N random seeds, or ZKSIM_FLAW_SEED=S to try seed S")
	}
	if budgetOurs { // measure at the harness's default budget, not the package's
		require.NoError(t, os.Unsetenv(harness.ShrinkBudgetEnv))
		t.Cleanup(func() { _ = os.Setenv(harness.ShrinkBudgetEnv, ciShrinkBudget) })
	}
	caught, longest := 0, 0
	for range n {
		seed := rand.Uint64()>>1 | 1 // math/rand/v2: not the crypto/rand the checks make deterministic
		if fixed != 0 {
			seed = fixed
		}
		c := harness.Catch(t, electionMachine(true), harness.CatchOptions{Checks: 1000, Seed: seed}, "two leaders")
		t.Logf("seed %d: caught %v, shrunk in %d checks to %d actions: %v", seed, c.AsWanted, c.ShrinkChecks, len(c.Schedule), c.Schedule)
		if c.AsWanted {
			caught++
			longest = max(longest, len(c.Schedule))
		}
	}
	t.Logf("caught on %d of %d seeds; longest shrunk schedule %d actions", caught, n, longest)
	if caught < n {
		t.Errorf("missed on %d seeds", n-caught)
	}
}
