package harness_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/harness"
)

// blindFailingSeeds are seeds whose check of the blind elector fails
// (seeds 1 to 8 fail none): the dump adds them, so that the traces
// compared include failures of the planted bug.
var blindFailingSeeds = []uint64{9, 11, 22}

// TestElectorTraceDump writes, when ZKSIM_TRACE_OUT names a file, a digest
// of the trace of each of ZKSIM_TRACE_CHECKS checks of the elector's
// machines, with and without the planted bug, and of the blind elector's
// checks of blindFailingSeeds, and whether each failed; run by
// TestElectorDeterminism.
func TestElectorTraceDump(t *testing.T) {
	out := os.Getenv("ZKSIM_TRACE_OUT")
	if out == "" {
		t.Skip("run by TestElectorDeterminism")
	}
	checks, err := strconv.Atoi(os.Getenv("ZKSIM_TRACE_CHECKS"))
	require.NoError(t, err)
	var dump []byte
	for _, blind := range []bool{false, true} {
		for seed := range uint64(checks) {
			trace, failed := harness.Trace(t, electionMachine(blind), seed+1)
			dump = fmt.Appendf(dump, "blind=%v seed=%d failed=%v %x\n", blind, seed+1, failed, sha256.Sum256([]byte(trace)))
		}
	}
	for _, seed := range blindFailingSeeds {
		trace, failed := harness.Trace(t, electionMachine(true), seed)
		dump = fmt.Appendf(dump, "blind=true seed=%d failed=%v %x\n", seed, failed, sha256.Sum256([]byte(trace)))
	}
	require.NoError(t, os.WriteFile(out, dump, 0o644))
}

// Every check of the elector's machines gives the same trace, byte for
// byte, under -cpu 1, 2 and 4 and under -race, failures of the planted bug
// included.
func TestElectorDeterminism(t *testing.T) {
	if os.Getenv("ZKSIM_TRACE_OUT") != "" {
		t.Skip("inside a dump")
	}
	lines := harness.CompareTraceDumps(t, "TestElectorTraceDump", 10)
	failed := 0
	var failedSeeds []uint64
	for _, l := range lines {
		var blind, f bool
		var seed int
		var sum string
		_, err := fmt.Sscanf(l, "blind=%t seed=%d failed=%t %s", &blind, &seed, &f, &sum)
		require.NoError(t, err, l)
		require.False(t, f && !blind, "the correct elector failed a check: %s", l)
		if f {
			failed++
			failedSeeds = append(failedSeeds, uint64(seed))
		}
	}
	require.Subset(t, failedSeeds, blindFailingSeeds, "a check of blindFailingSeeds passed: the traces compared include no failure of the planted bug")
	t.Logf("%d traces the same under -cpu 1, 2, 4 and -race; %d checks of the blind elector failed", len(lines), failed)
}
