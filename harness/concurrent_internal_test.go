package harness

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// A concurrent catch does not start its checks while a replay holds
// rapid's flags (its seed and checks set for itself): it would run the
// replay's one check instead of its own.
func TestConcurrentCatchWaitsForTheFlags(t *testing.T) {
	var started atomic.Bool
	m := Machine[int]{
		Processes: 1,
		Parallel:  true,
		New: func(*Process[int]) int {
			started.Store(true)
			return 0
		},
	}
	_, release := holdFlags(func(*rapid.T) {}, nil) // as a replay does
	done := make(chan Caught)
	go func() {
		t.Run("catch", func(t *testing.T) {
			done <- Catch(t, m, CatchOptions{Concurrent: true}, "none")
		})
	}()
	time.Sleep(200 * time.Millisecond)
	require.False(t, started.Load(), "the catch started its checks while the flags were held")
	release()
	c := <-done
	require.True(t, started.Load())
	require.False(t, c.Caught, c.Report)
}
