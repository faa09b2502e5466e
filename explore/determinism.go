package explore

import (
	"flag"
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
)

// CompareTraceDumps is harness.CompareTraceDumps, the determinism check of
// a machine: see there.
func CompareTraceDumps(t *testing.T, dump string, checks int) []string {
	t.Helper()
	return harness.CompareTraceDumps(t, dump, checks)
}

// CheckSeed runs one check of prop, from rapid's seed seed, in a synctest
// bubble of t, and reports whether it failed. A failure does not fail t and
// is not shrunk (so the check's trace is the only one the seed gives), and
// no fail file is written: it is for trace dumps, where a failing check is
// recorded like any other. The rapid flags it sets are restored when it
// returns.
func CheckSeed(t *testing.T, prop func(*rapid.T), seed uint64) (failed bool) {
	t.Helper()
	for name, v := range map[string]string{
		"rapid.checks":     "1",
		"rapid.seed":       strconv.FormatUint(seed, 10),
		"rapid.shrinktime": "1ms",
		"rapid.nofailfile": "true",
	} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = flag.Set(name, old) }()
	}
	c := harness.NewRecorder(t.Name(), nil)
	rapid.Check(c, harness.InBubbles(t, prop))
	return c.Failed()
}
