package property_test

import (
	"testing"

	"github.com/zksim/zksim/explore"
)

// The real recipes under their machines (package explore), with every
// fault of the catalogue: each must pass with no violation. The barrier
// machines come first: go test runs tests in this order, and they are the
// quickest (about 1.5 s for the three at 1,000 checks), so a mutant of a
// package every family uses (recipes/internal/retry, seqnode) that they
// catch is caught at once under -failfast (internal/tools/mutate).
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

// checkRecipe checks the recipe machine called name from the suite's seed.
func checkRecipe(t *testing.T, name string) {
	t.Helper()
	m, ok := explore.Recipe(name)
	if !ok {
		t.Fatalf("no recipe machine %q", name)
	}
	useSeed(t)
	m.Check(t)
}

// TestEveryRecipeHasATest: every machine of explore.Recipes runs here.
func TestEveryRecipeHasATest(t *testing.T) {
	tests := map[string]bool{"LockMutex": true, "LockRWMutex": true, "LockSemaphore": true, "Election": true,
		"ElectionSingleNode": true, "QueueFIFO": true, "QueuePriority": true, "QueueLocking": true,
		"Barrier": true, "BarrierDouble": true, "BarrierStart": true}
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
