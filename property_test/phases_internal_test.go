package property_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The scheduler of the parallel tests runs as many tests of a phase at
// once as it has workers, the next test of a phase as soon as a worker is
// free (not once the test that took the other worker ended), and a test
// of the next phase only once every test of the one before ended.
func TestSchedulerRunsPhasesOnItsWorkers(t *testing.T) {
	s := newScheduler()
	s.workers = 2
	tests := []struct {
		name string
		p    phase
	}{{"first", flawPhase}, {"a", flawPhase}, {"b", flawPhase}, {"d", recipePhase}, {"e", recipePhase}}
	for _, tc := range tests {
		s.register(t.Name()+"/"+tc.name, tc.p)
	}
	var running, most, flawsEnded atomic.Int32
	var firstEnded atomic.Bool
	var wg sync.WaitGroup
	for i, tc := range append(tests[1:], tests[0]) {
		if i == len(tests)-1 {
			// The others wait before the first starts: starting it must
			// wake the next.
			time.Sleep(100 * time.Millisecond)
		}
		wg.Go(func() {
			t.Run(tc.name, func(t *testing.T) {
				s.start(t, tc.p)
				if tc.name == "a" {
					require.False(t, firstEnded.Load(), "the second worker waited for the first test to end")
				}
				if tc.p == recipePhase {
					require.Equal(t, int32(3), flawsEnded.Load(), "a recipe test started before the flaws ended")
				}
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if tc.name == "first" {
					time.Sleep(time.Second) // long enough for a to start beside it
				} else {
					time.Sleep(50 * time.Millisecond)
				}
				running.Add(-1)
				if tc.p == flawPhase {
					flawsEnded.Add(1)
				}
				if tc.name == "first" {
					firstEnded.Store(true)
				}
			})
		})
	}
	wg.Wait()
	require.Equal(t, int32(2), most.Load(), "tests at once, with two workers")
}
