package harness_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

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

// sumMachine breaks its invariant once the amounts its processes added
// reach 10: rapid can take an Add out of a failing schedule only if the
// others still reach 10, so where its shrinking stops depends on the
// failure it starts from.
func sumMachine() harness.Machine[*atomic.Int64] {
	return harness.Machine[*atomic.Int64]{
		Processes: 2,
		New:       func(*harness.Process[*atomic.Int64]) *atomic.Int64 { return new(atomic.Int64) },
		Ops: map[string]func(*rapid.T, *harness.Process[*atomic.Int64]){
			"Add": func(t *rapid.T, p *harness.Process[*atomic.Int64]) {
				p.Obj().Add(int64(rapid.IntRange(1, 6).Draw(t, "amount")))
			},
		},
		Invariants: []harness.Invariant[*atomic.Int64]{{Name: "below 10", Check: func(w *harness.World[*atomic.Int64]) error {
			var sum int64
			for _, p := range w.Processes() {
				sum += p.Obj().Load()
			}
			if sum >= 10 {
				return errors.New("the sum reached 10")
			}
			return nil
		}}},
	}
}

// Catch keeps the shortest of the failures it shrinks, and the same seed
// keeps the same one.
func TestCatchKeepsTheShortestShrink(t *testing.T) {
	const seed = 13 // one shrink stops at 6 actions, the best of three at 2
	one := harness.Catch(t, sumMachine(), harness.CatchOptions{Seed: seed, Shrinks: 1}, "below 10")
	three := harness.Catch(t, sumMachine(), harness.CatchOptions{Seed: seed, Shrinks: 3}, "below 10")
	require.True(t, one.AsWanted)
	require.True(t, three.AsWanted)
	require.Less(t, len(three.Schedule), len(one.Schedule))
	again := harness.Catch(t, sumMachine(), harness.CatchOptions{Seed: seed, Shrinks: 3}, "below 10")
	require.Equal(t, three.Schedule, again.Schedule)
	require.Equal(t, three.Seed, again.Seed)
	t.Logf("one shrink: %d actions; the shortest of three: %d actions", len(one.Schedule), len(three.Schedule))
}

// A Catch's shrink is bounded by the machine's budget of checks alone (and
// counts the checks it ran, at most the budget),
// whatever ran before in the process: the same seed shrinks to the same
// schedule in the same number of checks the first time and after other
// catches. (The harness once took its own undo of -rapid.shrinktime for
// the user's choice, and every Catch after the first in a process shrank
// for rapid's wall-clock default instead: 30s, here 1ms.)
func TestCatchShrinksTheSameAfterOtherCatches(t *testing.T) {
	harness.SetRapidShrinkTimeDefault(t, time.Millisecond)
	t.Setenv(harness.ShrinkBudgetEnv, "1000")
	const seed = 26
	o := harness.CatchOptions{Seed: seed, Shrinks: 1}
	first := harness.Catch(t, sumMachine(), o, "below 10")
	for s := range uint64(3) {
		harness.Catch(t, boomMachine(), harness.CatchOptions{Seed: s + 1, Shrinks: 1}, "no boom")
	}
	again := harness.Catch(t, sumMachine(), o, "below 10")
	require.True(t, first.AsWanted, first.Report)
	require.True(t, again.AsWanted, again.Report)
	require.Equal(t, first.Schedule, again.Schedule)
	require.Equal(t, first.ShrinkChecks, again.ShrinkChecks)
	require.Greater(t, first.ShrinkChecks, 20, "a shrink of 1ms of wall-clock time runs a check or two")
	require.LessOrEqual(t, first.ShrinkChecks, 1000, "the checks rapid ran after the budget passed at once: not shrink checks")
	t.Logf("both shrunk in %d checks to %v", again.ShrinkChecks, again.Schedule)
}

// A shrink that runs out of its budget of checks ends as rapid's own
// shrink does, with the smallest failure found: rapid runs a smaller
// schedule that failed the same way once more to record it, and the
// harness runs that second run even when the first spent the last check
// of the budget. (It once passed it at once, and rapid, seeing the failure
// vanish, reported a flaky test with no failure: the shrink of a queue
// mutant that spent its 20,000 checks did.)
func TestShrinkEndsCleanlyAtItsBudget(t *testing.T) {
	const seed = 26
	for budget := 1; budget <= 30; budget++ {
		t.Setenv(harness.ShrinkBudgetEnv, strconv.Itoa(budget))
		c := harness.Catch(t, sumMachine(), harness.CatchOptions{Seed: seed, Shrinks: 1}, "below 10")
		require.True(t, c.AsWanted, "budget %d: %s", budget, c.Report)
		require.Contains(t, c.Report, "[rapid] failed after", "budget %d", budget)
		require.NotContains(t, c.Report, "flaky", "budget %d", budget)
		require.NotEmpty(t, c.Schedule, "budget %d", budget)
		require.LessOrEqual(t, c.ShrinkChecks, budget+1, "budget %d: the budget and the second run of the last smaller failure", budget)
	}
}
