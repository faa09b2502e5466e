package explore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/harness"
)

func failedWith(seed uint64, actions int) harness.Explored {
	return harness.Explored{Seed: seed, Schedule: strings.Split(strings.Repeat("Step,", actions), ",")[:actions]}
}

// CheckFrom reports a failure whose shrink stayed long only after looking
// for others from seeds derived from it, and keeps the shortest; a short
// or passing first exploration is reported as it is.
func TestShortestFailureLooksAgainOnlyForLongShrinks(t *testing.T) {
	var asked []uint64
	explore := func(lengths ...int) func(uint64) harness.Explored {
		asked = nil
		return func(seed uint64) harness.Explored {
			asked = append(asked, seed)
			n := lengths[len(asked)-1]
			if n < 0 {
				return harness.Explored{Passed: true}
			}
			return failedWith(seed, n)
		}
	}

	best, lengths := shortestFailure(failedWith(7, LongShrink), explore())
	require.Equal(t, []int{LongShrink}, lengths)
	require.Equal(t, uint64(7), best.Seed)
	require.Nil(t, asked, "a short shrink made it look again")

	best, lengths = shortestFailure(harness.Explored{Passed: true}, explore())
	require.Equal(t, []int{0}, lengths)
	require.True(t, best.Passed)
	require.Nil(t, asked)

	best, lengths = shortestFailure(failedWith(7, 22), explore(-1, 18, 6, 3))
	require.Equal(t, []int{22, -1, 18, 6}, lengths, "it stops at the first short one")
	require.Len(t, best.Schedule, 6)
	require.Equal(t, []uint64{harness.ShrinkSeed(7, 1), harness.ShrinkSeed(7, 2), harness.ShrinkSeed(7, 3)}, asked)
	require.Equal(t, asked[2], best.Seed, "the reported seed replays the reported failure")

	best, lengths = shortestFailure(failedWith(7, 30), explore(40, 20, 25, -1))
	require.Equal(t, []int{30, 40, 20, 25, -1}, lengths)
	require.Len(t, best.Schedule, 20)
	require.Len(t, asked, ExtraShrinks)
}
