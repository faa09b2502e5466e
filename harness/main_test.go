package harness_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim/harness"
)

// committedSeed is the rapid seed of this package's tests unless
// -rapid.seed or RAPID_SEED gives one: CI explores the same schedules
// every time (random exploration: -rapid.seed=0, or
// TestBlindElectorOnRandomSeeds).
const committedSeed = "20261127"

// ciShrinkBudget is the budget of shrink checks of this package's
// machines unless ZKSIM_SHRINK_BUDGET says otherwise: the shrinks of the
// planted bugs (three each, under -race) at the default budget of 20,000
// took the package's tests past go test's 10 minutes on a loaded machine.
// The shrunk schedules are still a function of the seed.
const ciShrinkBudget = "2000"

// budgetOurs reports whether TestMain set ZKSIM_SHRINK_BUDGET (to
// ciShrinkBudget), rather than the user.
var budgetOurs bool

// TestMain fixes the seed and the budget of shrink checks, keeps plain
// runs from writing fail files, and makes sure no test leaves a goroutine
// behind.
func TestMain(m *testing.M) {
	flag.Parse()
	if _, ok := os.LookupEnv(harness.ShrinkBudgetEnv); !ok {
		budgetOurs = true
		if err := os.Setenv(harness.ShrinkBudgetEnv, ciShrinkBudget); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	for name, v := range map[string]string{"rapid.seed": committedSeed, "rapid.nofailfile": "true"} {
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
		if _, ok := os.LookupEnv(map[string]string{"rapid.seed": "RAPID_SEED", "rapid.nofailfile": "RAPID_NOFAILFILE"}[name]); ok || set {
			continue
		}
		if err := flag.Set(name, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	goleak.VerifyTestMain(m)
}
