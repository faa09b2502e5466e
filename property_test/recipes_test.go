package property_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim/explore"
)

// The real recipes under their machines (package explore), with every
// fault of the catalogue: each must pass with no violation. They run in
// parallel (t.Parallel: -test.parallel of them at once, GOMAXPROCS by
// default), once every sequential test of the package and every flawed
// recipe has run (the recipe phase, phases_test.go): a check of
// theirs draws only from its seed (explore's machine), never from
// crypto/rand's global source, so it is the same check whatever runs beside
// it, and Machine.CheckFrom hands each machine its seed without a race on
// rapid's flags. (Under -failfast, as internal/tools/mutate runs them, a
// failure stops the machines not yet started; -test.parallel=1 runs them
// one at a time.)
func TestBarrier(t *testing.T)       { checkRecipe(t, "Barrier") }
func TestBarrierDouble(t *testing.T) { checkRecipe(t, "BarrierDouble") }
func TestBarrierStart(t *testing.T)  { checkRecipe(t, "BarrierStart") }

func TestLockMutex(t *testing.T)          { checkRecipe(t, "LockMutex") }
func TestLockRWMutex(t *testing.T)        { checkRecipe(t, "LockRWMutex") }
func TestLockSemaphore(t *testing.T)      { checkRecipe(t, "LockSemaphore") }
func TestElection(t *testing.T)           { checkRecipe(t, "Election") }
func TestElectionSingleNode(t *testing.T) { checkRecipe(t, "ElectionSingleNode") }
func TestQueueFIFO(t *testing.T)          { checkRecipe(t, "QueueFIFO") }
func TestQueuePriority(t *testing.T)      { checkRecipe(t, "QueuePriority") }
func TestQueueLocking(t *testing.T)       { checkRecipe(t, "QueueLocking") }

// Every machine again on a 3-member ensemble (explore/ensemble.go), at a
// tenth of the budget unless -rapid.checks says otherwise.
func TestBarrierEnsemble(t *testing.T)       { checkRecipe(t, "BarrierEnsemble") }
func TestBarrierDoubleEnsemble(t *testing.T) { checkRecipe(t, "BarrierDoubleEnsemble") }
func TestBarrierStartEnsemble(t *testing.T)  { checkRecipe(t, "BarrierStartEnsemble") }

func TestLockMutexEnsemble(t *testing.T)          { checkRecipe(t, "LockMutexEnsemble") }
func TestLockRWMutexEnsemble(t *testing.T)        { checkRecipe(t, "LockRWMutexEnsemble") }
func TestLockSemaphoreEnsemble(t *testing.T)      { checkRecipe(t, "LockSemaphoreEnsemble") }
func TestElectionEnsemble(t *testing.T)           { checkRecipe(t, "ElectionEnsemble") }
func TestElectionSingleNodeEnsemble(t *testing.T) { checkRecipe(t, "ElectionSingleNodeEnsemble") }
func TestQueueFIFOEnsemble(t *testing.T)          { checkRecipe(t, "QueueFIFOEnsemble") }
func TestQueuePriorityEnsemble(t *testing.T)      { checkRecipe(t, "QueuePriorityEnsemble") }
func TestQueueLockingEnsemble(t *testing.T)       { checkRecipe(t, "QueueLockingEnsemble") }

// checkRecipe checks the recipe machine called name from the suite's
// seed, in parallel with the other recipe machines.
func checkRecipe(t *testing.T, name string) {
	t.Helper()
	inPhase(t, recipePhase)
	m, ok := explore.Recipe(name)
	if !ok {
		t.Fatalf("no recipe machine %q", name)
	}
	replayInOrder(t, m)
	m.CheckFrom(t, testSeed(t))
}

// inOrderDir holds the fail files recorded before each action drew a seed
// of its own (harness.Machine.DrawsInOrder), by test as rapid lays them
// out: rapid's own glob of testdata/rapid/<test>/ would replay them with
// today's draws, another schedule.
const inOrderDir = "testdata/rapid-inorder"

// replayInOrder replays the fail files of m's test under inOrderDir, each
// with the draws it was recorded with.
func replayInOrder(t *testing.T, m explore.Machine) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(inOrderDir, t.Name(), "*.fail"))
	if err != nil {
		t.Fatal(err)
	}
	m.DrawsInOrder = true
	for _, f := range files {
		m.ReplayFailFile(t, f)
	}
}

// TestEveryInOrderFailFileHasAMachine: replayInOrder replays the files of
// every directory under inOrderDir; a directory no recipe machine's test
// reads would be a regression test that never runs.
func TestEveryInOrderFailFileHasAMachine(t *testing.T) {
	dirs, err := os.ReadDir(inOrderDir)
	require.NoError(t, err)
	files := 0
	for _, d := range dirs {
		_, ok := explore.Recipe(strings.TrimPrefix(d.Name(), "Test"))
		require.True(t, ok && d.IsDir() && strings.HasPrefix(d.Name(), "Test"), "%s/%s: no recipe machine's test", inOrderDir, d.Name())
		fs, err := filepath.Glob(filepath.Join(inOrderDir, d.Name(), "*.fail"))
		require.NoError(t, err)
		require.NotEmpty(t, fs, "%s/%s holds no fail file", inOrderDir, d.Name())
		files += len(fs)
	}
	t.Logf("%d fail files in %d directories", files, len(dirs))
}

// TestEveryRecipeHasATest: every machine of explore.Recipes runs here.
func TestEveryRecipeHasATest(t *testing.T) {
	tests := map[string]bool{"LockMutex": true, "LockRWMutex": true, "LockSemaphore": true, "Election": true,
		"ElectionSingleNode": true, "QueueFIFO": true, "QueuePriority": true, "QueueLocking": true,
		"Barrier": true, "BarrierDouble": true, "BarrierStart": true,
		"BarrierEnsemble": true, "BarrierDoubleEnsemble": true, "BarrierStartEnsemble": true,
		"LockMutexEnsemble": true, "LockRWMutexEnsemble": true, "LockSemaphoreEnsemble": true,
		"ElectionEnsemble": true, "ElectionSingleNodeEnsemble": true, "QueueFIFOEnsemble": true,
		"QueuePriorityEnsemble": true, "QueueLockingEnsemble": true}
	for _, m := range explore.Recipes {
		if !tests[m.Name] {
			t.Errorf("explore.Recipes has %s, which has no Test%[1]s", m.Name)
		}
		delete(tests, m.Name)
	}
	for name := range tests {
		t.Errorf("Test%s checks no machine of explore.Recipes", name)
	}
}
