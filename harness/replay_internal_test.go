package harness

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// A replay runs the check of its seed once: it neither lets rapid run the
// failure again to reproduce it nor lets rapid's shrinker try smaller
// schedules (each try a check), and still tells that the check failed.
func TestReplayRunsItsCheckOnce(t *testing.T) {
	var checks atomic.Int32
	m := Machine[int]{
		Processes: 1,
		Parallel:  true,
		New:       func(*Process[int]) int { return 0 },
		Init:      func(*rapid.T, *World[int]) { checks.Add(1) },
		Invariants: []Invariant[int]{{Name: "never", Check: func(*World[int]) error {
			return errors.New("fails at once")
		}}},
	}
	trace := Replay(t, m, 7)
	require.NotEmpty(t, trace)
	require.Equal(t, int32(2), checks.Load(), "two replays, one check each")
	checks.Store(0)
	traces, failed := replayOnceConcurrently(t, m, 7)
	require.True(t, failed)
	require.Len(t, traces, 1)
	require.Equal(t, int32(1), checks.Load())
}
