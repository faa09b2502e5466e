package explore

import (
	"flag"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
)

// Machine is one recipe machine: a recipe family, its clients and its
// fault catalogue, ready to be checked by rapid.
type Machine struct {
	// Name names the machine: TestName in package property_test
	// ("LockMutex": TestLockMutex).
	Name string
	// What says in a few words what it explores ("lock (exclusive)").
	What string

	cfg       worldConfig
	newFamily func(*world, *rapid.T) family
}

// Recipes are the machines of the built-in recipes, with every fault of the
// catalogue: each must pass with no violation.
var Recipes = []Machine{
	{Name: "LockMutex", What: "lock (exclusive)", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, mutexKind, true, true)
	}},
	{Name: "LockRWMutex", What: "read-write lock", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, rwKind, true, true)
	}},
	{Name: "LockSemaphore", What: "semaphore", cfg: worldConfig{clients: 4, faults: true, authFail: true}, newFamily: func(w *world, _ *rapid.T) family {
		return newLockFamily(w, semaphoreKind, true, true)
	}},
	{Name: "Election", What: "leader election", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newLockFamily(w, electionKind, true, true).drawRenewing(t)
	}},
	{Name: "ElectionSingleNode", What: "election, single-node variant", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newLockFamily(w, singleNodeKind, true, true).drawRenewing(t)
	}},
	{Name: "QueueFIFO", What: "FIFO queue", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newRenewingQueueFamily(w, t, fifoKind)
	}},
	{Name: "QueuePriority", What: "priority queue", cfg: worldConfig{clients: 2, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newRenewingQueueFamily(w, t, priorityKind)
	}},
	{Name: "QueueLocking", What: "locking queue", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newRenewingQueueFamily(w, t, lockingKind)
	}},
	{Name: "Barrier", What: "barrier", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newBarrierFamily(w, t)
	}},
	{Name: "BarrierDouble", What: "double barrier", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newGroupFamily(w, t, true, rapid.IntRange(2, 3).Draw(t, "group size"))
	}},
	{Name: "BarrierStart", What: "start barrier", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newGroupFamily(w, t, false, rapid.IntRange(2, 3).Draw(t, "group size"))
	}},
}

// Recipe returns the machine of Recipes called name.
func Recipe(name string) (Machine, bool) {
	for _, m := range Recipes {
		if m.Name == name {
			return m, true
		}
	}
	return Machine{}, false
}

// Property returns m's property for rapid. It must run inside a
// testing/synctest bubble of parent (see Check), so that time is virtual.
func (m Machine) Property(parent *testing.T) func(*rapid.T) {
	return machine(parent, m.cfg, m.newFamily)
}

// Check checks m with rapid under t, with rapid's flags (-rapid.checks,
// -rapid.seed, ...), each check in its own synctest bubble
// (rapid.SyncTest); a violation fails t with rapid's report. It logs what
// the checks did.
func (m Machine) Check(t *testing.T) {
	t.Helper()
	checkMachine(t, m.cfg, m.newFamily, nil)
}

// seedGate is held from the moment CheckFrom sets rapid's seed until
// rapid has read it.
var seedGate sync.Mutex

// CheckFrom checks m as Check does, from the rapid seed seed (0: the
// -rapid.seed flag as it is), and may run at the same time as the
// CheckFrom of other tests (t.Parallel): rapid reads its seed from a
// global flag as a run begins, so CheckFrom sets the flag and holds every
// other CheckFrom back until rapid has read it, which it has once the
// first check starts. The checks are the same as Check's with that seed:
// each is a function of its seed alone (see machine). Nothing else may
// set rapid's flags while it runs.
func (m Machine) CheckFrom(t *testing.T, seed uint64) {
	t.Helper()
	seedGate.Lock()
	var once sync.Once
	release := func() { once.Do(seedGate.Unlock) }
	defer release()
	if seed != 0 {
		if err := flag.Set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
			t.Fatal(err)
		}
	}
	checkMachine(t, m.cfg, m.newFamily, release)
}

// Result is what Explore found.
type Result struct {
	// Passed reports whether every check passed.
	Passed bool
	// Checks, Actions, Steps and Virtual count the checks run, the actions
	// they took, the simulator steps and the virtual time that passed.
	Checks, Actions, Steps int
	Virtual                string
	// Report is rapid's report of a failure: the violations, the seed that
	// replays it and the minimal failing run.
	Report string
	// Logs is everything rapid logged.
	Logs []string
	// Digest is the SHA-256, in hex, of the digests of the traces of every
	// check in the order they ran, shrinking included: two explorations
	// with the same seed and checks ran the same checks if their digests
	// are equal. (Shrinking stops at -rapid.shrinktime of wall-clock time,
	// so a failing machine's digest may differ between runs.)
	Digest string
}

// Explore checks m with rapid, as Check does, but reports what it found
// instead of failing t (t only hosts the synctest bubbles); with echo set,
// it writes rapid's logs there as they come. This is how cmd/zksim runs
// the machines outside `go test`. Each check runs in a bubble of t as
// Check's do (through a bubble of its own making, since rapid's SyncTest
// needs rapid to report to a *testing.T), so the checks a seed draws are
// the same; a failure may shrink differently.
func (m Machine) Explore(t *testing.T, echo io.Writer) Result {
	t.Helper()
	c := harness.NewRecorder("Test"+m.Name, echo)
	total, digest := runChecks(c, t, true, harness.InBubbles(t, m.Property(t)))
	return Result{
		Passed: !c.Failed(), Checks: total.checks, Actions: total.actions, Steps: total.steps,
		Virtual: total.virtual.String(), Report: strings.Join(c.Errors(), "\n"), Logs: c.Logs(),
		Digest: digest,
	}
}

// Flaw is a deliberately broken recipe, and the violations that must
// catch it.
type Flaw struct {
	// Name names the flaw: TestFlawedName in package property_test.
	Name string
	// Want is a regular expression the violation found must match
	// ("two holders|token went back").
	Want string
	// Machine is the machine the flawed recipe runs under.
	Machine Machine
}

// What says in words what the flaw is: "LockOrdersByFullName" is "lock
// orders by full name".
func (f Flaw) What() string {
	var b strings.Builder
	lower := false // the previous letter was lower case
	for _, c := range f.Name {
		upper := c >= 'A' && c <= 'Z'
		if upper && lower {
			b.WriteByte(' ')
		}
		lower = !upper
		b.WriteString(strings.ToLower(string(c)))
	}
	return b.String()
}

// Test runs f under rapid and fails t unless rapid catches the flaw with a
// violation matching f.Want; it logs the shrunk schedule and the minimal
// failing run. It runs with the flawed-recipe settings (see Catch).
func (f Flaw) Test(t *testing.T) {
	t.Helper()
	expectCaught(t, f.Want, f.Machine.Property(t))
}

// Catch runs f under rapid and reports what rapid found, without failing
// t; with echo set, it writes rapid's logs there as they come. Both Catch
// and Test run with the flawed-recipe settings: 15 actions per run on
// average (-rapid.steps), the fixed seed 1 with which every flaw is caught
// (-rapid.seed), 60s to shrink (-rapid.shrinktime), and no fail file,
// except for the flags named by LeaveFlags.
func (f Flaw) Catch(t *testing.T, echo io.Writer) Caught {
	t.Helper()
	return catch(t, f.Want, f.Machine.Property(t), echo)
}

// SetFlawFlags sets rapid's flags to the flawed-recipe settings that
// Catch applies (see Catch), except those named by LeaveFlags, and no fail
// file. Call it once before CatchConcurrently.
func SetFlawFlags() error {
	for _, f := range [][2]string{{"rapid.steps", flawSteps}, {"rapid.seed", flawSeed}, {"rapid.shrinktime", flawShrinkTime}, {"rapid.nofailfile", "true"}} {
		if userSet[f[0]] {
			continue
		}
		if err := flag.Set(f[0], f[1]); err != nil {
			return err
		}
	}
	return nil
}

// CatchConcurrently is Catch for a caller that catches several flaws at
// once, each under a test t of its own: it sets no flag (rapid reads its
// settings from global flags, which Catch sets and restores around each
// run), so call SetFlawFlags once before, and set no flag while it runs.
// With the same flags, it finds what Catch finds.
func (f Flaw) CatchConcurrently(t *testing.T, echo io.Writer) Caught {
	t.Helper()
	c := harness.NewRecorder(t.Name(), echo)
	rapid.Check(c, harness.InBubbles(t, f.Machine.Property(t)))
	res := Caught{Caught: c.Failed(), Report: strings.Join(c.Errors(), "\n"), Logs: c.Logs()}
	res.AsWanted = res.Caught && regexp.MustCompile(f.Want).MatchString(res.Report)
	for _, l := range c.Logs() {
		if a, ok := strings.CutPrefix(l, "[rapid] draw action: "); ok {
			res.Schedule = append(res.Schedule, strings.Trim(a, `"`))
		}
	}
	return res
}

// userSet records the rapid flags the flawed-recipe runs leave alone.
var userSet = map[string]bool{}

// LeaveFlags names rapid flags ("rapid.seed", "rapid.steps",
// "rapid.shrinktime") that the user set, on the command line or through
// the environment: Flaw.Test and Flaw.Catch leave them as they are instead
// of applying their own settings.
func LeaveFlags(names ...string) {
	for _, n := range names {
		userSet[n] = true
	}
}
