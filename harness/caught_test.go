package harness_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
)

// boomMachine breaks its invariant once any process was asked to Boom.
func boomMachine() harness.Machine[*atomic.Bool] {
	return harness.Machine[*atomic.Bool]{
		Processes: 2,
		New:       func(*harness.Process[*atomic.Bool]) *atomic.Bool { return new(atomic.Bool) },
		Ops: map[string]func(*rapid.T, *harness.Process[*atomic.Bool]){
			"Boom": func(_ *rapid.T, p *harness.Process[*atomic.Bool]) { p.Obj().Store(true) },
		},
		Invariants: []harness.Invariant[*atomic.Bool]{{Name: "no boom", Check: func(w *harness.World[*atomic.Bool]) error {
			for _, p := range w.Processes() {
				if p.Obj().Load() {
					return errors.New("boom at " + w.Now().String()) // details differ from run to run
				}
			}
			return nil
		}}},
	}
}

// ExpectCaught shrinks to the one action that matters, replays it, and
// leaves no fail file behind (a second run would read it).
func TestExpectCaughtShrinksAndLeavesNoFailFile(t *testing.T) {
	c := harness.ExpectCaught(t, boomMachine(), "no boom")
	require.Equal(t, []string{"Boom p0"}, c.Schedule)
	_, err := os.Stat(filepath.Join("testdata", "rapid", t.Name()))
	require.True(t, os.IsNotExist(err), "a fail file was left behind: %v", err)
	again := harness.Catch(t, boomMachine(), harness.CatchOptions{Seed: c.Seed}, "no boom")
	require.Equal(t, c.Schedule, again.Schedule, "the same seed shrank to another schedule")
}

// A machine that cannot run says why, in every check.
func TestMachineWithoutNewFails(t *testing.T) {
	c := harness.Catch(t, harness.Machine[int]{}, harness.CatchOptions{Checks: 1})
	require.True(t, c.Caught)
	require.Contains(t, c.Report, "harness: Machine.New is nil")
}
