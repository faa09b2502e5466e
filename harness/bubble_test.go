package harness_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
)

// rapid keeps a smaller failing case while shrinking only if it fails the
// same way, which it tells by the stack of the failure; InBubbles (as
// every check of the harness) gives each distinct message of a property a
// stack of its own. The stacks are the property's, not the process's: a
// property run after another that met a hundred distinct failures still
// tells its two failures apart, and shrinks "big" to the smallest big
// case rather than to a "small" one. (A count kept for the whole process
// once grew past the 32 frames rapid compares, and from then on every
// failure looked the same to it.)
func TestFailuresStayApartAfterManyOthers(t *testing.T) {
	defer setRapidFlag(t, "rapid.nofailfile", "true")()
	run := func(prop func(*rapid.T)) *harness.Recorder {
		rec := harness.NewRecorder(t.Name(), nil)
		rapid.Check(rec, harness.InBubbles(t, prop))
		return rec
	}
	seen := map[string]bool{}
	for seed := 1; len(seen) < 100; seed++ {
		undo := setRapidFlag(t, "rapid.seed", strconv.Itoa(seed))
		noisy := run(func(t *rapid.T) {
			for i := range 4 {
				if x := rapid.Uint64().Draw(t, "x"); x > 1 {
					msg := fmt.Sprintf("failure %d of %d", i, x) // a message of its own for most cases rapid tries
					seen[msg] = true
					t.Fatalf("%s", msg)
				}
			}
		})
		undo()
		require.True(t, noisy.Failed())
	}
	defer setRapidFlag(t, "rapid.seed", "1")() // the first failure is a big one
	two := run(func(t *rapid.T) {
		x := rapid.IntRange(0, 1000).Draw(t, "x")
		t.Logf("x=%d", x)
		switch {
		case x >= 500:
			t.Fatalf("big")
		case x >= 1:
			t.Fatalf("small")
		}
	})
	report := strings.Join(two.Errors(), "\n")
	require.Contains(t, report, "tests: big\n", report)
	require.Contains(t, two.Logs(), "x=500")
}
