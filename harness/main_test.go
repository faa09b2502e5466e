package harness_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// committedSeed is the rapid seed of this package's tests unless
// -rapid.seed or RAPID_SEED gives one: CI explores the same schedules
// every time (random exploration: -rapid.seed=0, or
// TestBlindElectorOnRandomSeeds).
const committedSeed = "20261127"

// TestMain fixes the seed, keeps plain runs from writing fail files, and
// makes sure no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	flag.Parse()
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
