package explore

import (
	"strconv"
	"sync"
	"testing"
)

// TestExploreConcurrently: machines explored at once (zksim explore
// -parallel) run the same checks as one after the other: the same counts
// and the same traces, each run counting its own checks.
func TestExploreConcurrently(t *testing.T) {
	const checks = 4
	defer setFlagForTest(t, "rapid.checks", "RAPID_CHECKS", strconv.Itoa(checks))()
	defer setFlagForTest(t, "rapid.seed", "RAPID_SEED", "9")()
	defer setFlagForTest(t, "rapid.nofailfile", "RAPID_NOFAILFILE", "true")()
	ms := Recipes[:3]
	explore := func(concurrently bool) []Result {
		out := make([]Result, len(ms))
		var wg sync.WaitGroup
		for i, m := range ms {
			run := func() { t.Run(m.Name, func(t *testing.T) { out[i] = m.Explore(t, nil) }) }
			if concurrently {
				wg.Go(run)
			} else {
				run()
			}
		}
		wg.Wait()
		return out
	}
	one, all := explore(false), explore(true)
	for i, m := range ms {
		a, b := one[i], all[i]
		if !a.Passed || !b.Passed {
			t.Fatalf("%s failed: %s / %s", m.Name, a.Report, b.Report)
		}
		if a.Checks != checks || b.Checks != checks {
			t.Errorf("%s: %d and %d checks, want %d each", m.Name, a.Checks, b.Checks, checks)
		}
		if len(a.Digest) != 64 || a.Digest != b.Digest || a.Steps != b.Steps || a.Actions != b.Actions || a.Virtual != b.Virtual {
			t.Errorf("%s: one at a time %d actions, %d steps, %s, digest %q; at once %d, %d, %s, %q",
				m.Name, a.Actions, a.Steps, a.Virtual, a.Digest, b.Actions, b.Steps, b.Virtual, b.Digest)
		}
	}
}
