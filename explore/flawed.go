package explore

import (
	"flag"
	"testing"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
)

// The harness bites: each flawed recipe the ZooKeeper literature warns
// about runs under the machine its family uses, and each is caught only
// when rapid finds the flaw (with the expected kind of violation) and
// shrinks it (see Flaw.Catch). The same machines run the real recipes
// (Recipes) with no violation.

// Flaws are the deliberately broken recipes, each with the violations that
// must catch it.
var Flaws = []Flaw{
	// The lock without GUIDs cannot find a node whose create's outcome it
	// does not know: a create whose reply was lost (it sends another: two
	// nodes of its own, the first one orphaned), or whose call was
	// cancelled after the request left (the server still applies it).
	// rapid finds whichever road to the orphan is shorter; the client then
	// waits behind its own node.
	{Name: "LockRetriesCreateWithoutGUID", Want: "liveness|orphan", Machine: Machine{cfg: worldConfig{clients: 2, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, naiveKind(false, false), true, true)
	}}},
	// Two holders at once, or holders granted out of creation order (a
	// token lower than one granted before): the same flaw, whichever rapid
	// finds first.
	{Name: "LockOrdersByFullName", Want: "two holders|token went back", Machine: Machine{cfg: worldConfig{clients: 2, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, naiveKind(true, true), true, true)
	}}},
	// The real lock; the holder writes whatever its state, to a resource
	// that does not check tokens.
	{Name: "HolderWritesWithoutFencing", Want: "two writers", Machine: Machine{cfg: worldConfig{clients: 2, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, mutexKind, false, false)
	}}},
	{Name: "ElectionWithoutWatch", Want: "liveness", Machine: Machine{cfg: worldConfig{clients: 2, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, blindElectionKind, true, true)
	}}},
	{Name: "QueueConsumerIgnoresFailedDelete", Want: "duplicate delivery", Machine: Machine{cfg: worldConfig{clients: 3, faults: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newQueueFamily(w, sloppyKind)
	}}},
}

// The rapid settings of the flawed-recipe tests, unless the command line
// or the environment sets them (LeaveFlags). The seed is fixed so that
// whether a flaw is caught within the budget does not depend on the draw:
// the machines are deterministic, so with this seed every flaw is caught
// on every run (pass -rapid.seed=0 to search from a random seed instead).
// The shrinking is bounded by the machine's budget of checks
// (harness.Machine.ShrinkBudget), not by wall-clock time: shrinktime is
// set to the harness's cap, out of the way.
var flawFlags = [][2]string{
	{"rapid.steps", "15"},
	{"rapid.seed", "1"},
	{"rapid.shrinktime", harness.ShrinkCap.String()},
	{"rapid.nofailfile", "true"},
}

// setFlawFlags sets the flawed-recipe settings for a test and returns
// their undo.
func setFlawFlags(t *testing.T) (undo func()) {
	t.Helper()
	var undos []func()
	for _, f := range flawFlags {
		if userSet[f[0]] {
			continue
		}
		old := flag.Lookup(f[0]).Value.String()
		if err := flag.Set(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
		undos = append(undos, func() { _ = flag.Set(f[0], old) })
	}
	return func() {
		for _, u := range undos {
			u()
		}
	}
}
