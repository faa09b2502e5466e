package explore

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
	"github.com/zksim/zksim/sim"
)

// Machine is one recipe machine: a recipe family, its clients and its
// fault catalogue, ready to be checked by rapid.
type Machine struct {
	// Name names the machine: TestName in package property_test
	// ("LockMutex": TestLockMutex).
	Name string
	// What says in a few words what it explores ("lock (exclusive)").
	What string
	// DrawsInOrder replays schedules recorded before each action drew a
	// seed of its own (harness.Machine.DrawsInOrder): set it only to
	// replay such a fail file (ReplayFailFile).
	DrawsInOrder bool

	cfg       worldConfig
	newFamily func(*world, *rapid.T) family
	// shrinkBudget is the harness's ShrinkBudget (0: its default).
	shrinkBudget int
	// ciChecks, if set, is the number of checks CheckFrom runs unless the
	// user set -rapid.checks (LeaveFlags): the ensemble machines' share of
	// the property suite's time (harness.ExploreOptions.Checks).
	ciChecks int
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
	{Name: "LockSemaphore", What: "semaphore", cfg: worldConfig{clients: 4, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return newSemaphoreFamily(w, t)
	}},
	{Name: "Election", What: "leader election", cfg: worldConfig{clients: 3, faults: true, authFail: true}, newFamily: func(w *world, t *rapid.T) family {
		return drawElectionLayout(newLockFamily(w, electionKind, true, true).drawRenewing(t), t)
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

// Check checks m with rapid under t (harness.Check), with rapid's flags
// (-rapid.checks, -rapid.seed, ...), each check in its own synctest
// bubble; a violation fails t with rapid's report and the minimal failing
// run. It logs what the checks did.
func (m Machine) Check(t *testing.T) {
	t.Helper()
	harness.Check(t, m.harness())
}

// seedGate is held from the moment CheckFrom sets rapid's seed until
// rapid has read it.
var seedGate sync.Mutex

// holdSeed takes seedGate and sets rapid's seed to seed (0: the
// -rapid.seed flag as it is). The caller calls release (any number of
// times) once rapid has read the seed, and defers it for the failures on
// the way.
func holdSeed(t *testing.T, seed uint64) (release func()) {
	t.Helper()
	seedGate.Lock()
	var once sync.Once
	release = func() { once.Do(seedGate.Unlock) }
	if seed != 0 {
		if err := flag.Set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
			release()
			t.Fatal(err)
		}
	}
	return release
}

// CheckFrom checks m as Check does, from the rapid seed seed (0: the
// -rapid.seed flag as it is), and may run at the same time as the
// CheckFrom of other tests (t.Parallel): rapid reads its seed from a
// global flag as a run begins, so CheckFrom sets the flag and holds every
// other CheckFrom back until rapid has read it, which it has once the
// first check starts. It sets no other flag (harness.Explore): a failure
// shrinks within the machine's budget of checks and -rapid.shrinktime.
// The checks are the same as Check's with that seed: each is a function
// of its seed alone. Nothing else may set rapid's flags while it runs.
//
// A failure whose shrunk schedule is longer than LongShrink actions makes
// CheckFrom look again, up to ExtraShrinks times, from seeds derived from
// the failure's (the same ones whatever the machine's load): rapid's
// shrink keeps a schedule in which dropping any one action changes what
// the later ones do, and another failure of the same bug often shrinks
// much further. The shortest failure found is the one reported, with the
// seed that replays it; the lengths of the others are logged.
func (m Machine) CheckFrom(t *testing.T, seed uint64) {
	t.Helper()
	res := m.exploreFrom(t, seed)
	best, lengths := shortestFailure(res, func(seed uint64) harness.Explored { return m.exploreFrom(t, seed) })
	for _, l := range best.Logs {
		t.Log(l)
	}
	if len(lengths) > 1 {
		t.Logf("the first failure shrank to more than %d actions: %d explorations, shrunk to %v actions (-1: none failed); the shortest is reported", LongShrink, len(lengths), lengths)
	}
	if !res.Passed {
		t.Errorf("%s\nshrunk schedule (%d actions): %s", best.Report, len(best.Schedule), strings.Join(best.Schedule, ", "))
	}
}

// LongShrink and ExtraShrinks: a failure of CheckFrom whose shrunk
// schedule is longer than LongShrink actions is looked for again, up to
// ExtraShrinks more times, from other seeds, and the shortest is kept.
const (
	LongShrink   = 15
	ExtraShrinks = 4
)

// shortestFailure returns res, or, if res failed with a shrunk schedule of
// over LongShrink actions, the failure with the shortest schedule among
// res and up to ExtraShrinks explorations from seeds derived from res's
// (it stops at the first of LongShrink actions or fewer); and the
// schedules' lengths, in order (-1: that exploration found no failure).
func shortestFailure(res harness.Explored, explore func(seed uint64) harness.Explored) (harness.Explored, []int) {
	best, lengths := res, []int{len(res.Schedule)}
	for k := 1; !res.Passed && len(best.Schedule) > LongShrink && k <= ExtraShrinks; k++ {
		again := explore(harness.ShrinkSeed(res.Seed, k))
		if again.Passed {
			lengths = append(lengths, -1)
			continue
		}
		lengths = append(lengths, len(again.Schedule))
		if len(again.Schedule) < len(best.Schedule) {
			best = again
		}
	}
	return best, lengths
}

// exploreFrom is one exploration of CheckFrom, from seed.
func (m Machine) exploreFrom(t *testing.T, seed uint64) harness.Explored {
	t.Helper()
	release := holdSeed(t, seed)
	defer release()
	opts := harness.ExploreOptions{Started: release}
	if !userSet["rapid.checks"] {
		opts.Checks = m.ciChecks // 0 for most: -rapid.checks
	}
	return harness.Explore(t, m.harness(), opts)
}

// CheckPropertyFrom runs prop with rapid.Check under t from the rapid seed
// seed (0: the -rapid.seed flag as it is), and may run at the same time as
// CheckFrom and other CheckPropertyFrom calls (t.Parallel): like CheckFrom,
// it sets the seed and holds every other one back until rapid has read
// it, as the first check starts. For a plain rapid property (not a
// machine: the property suite's model of zkmem) that runs beside the
// recipe machines. prop must draw from rapid alone, so that its checks
// are the same whatever runs beside it.
func CheckPropertyFrom(t *testing.T, seed uint64, prop func(*rapid.T)) {
	t.Helper()
	release := holdSeed(t, seed)
	defer release()
	rapid.Check(t, func(t *rapid.T) {
		release()
		prop(t)
	})
}

// Result is what Explore found.
type Result struct {
	// Passed reports whether every check passed.
	Passed bool
	// Checks, Actions, Steps and Virtual count the checks run up to the
	// first failure, the actions they took, the simulator steps and the
	// virtual time that passed.
	Checks, Actions, Steps int
	Virtual                string
	// Report is rapid's report of a failure: the violations, the seed that
	// replays it and the minimal failing run.
	Report string
	// Logs is everything rapid logged, and the coverage table, every line
	// of it marked "coverage| ".
	Logs []string
	// Digest is the SHA-256, in hex, of the digests of the traces of every
	// check in the order they ran, shrinking included: two explorations
	// with the same seed and checks ran the same checks if their digests
	// are equal. (The shrinking of a failure is bounded by a number of
	// checks, harness.Machine.ShrinkBudget, so a failing machine's digest
	// is the same too, unless -rapid.shrinktime cuts it short.)
	Digest string
}

// Explore checks m with rapid, as Check does, but reports what it found
// instead of failing t (t only hosts the synctest bubbles); with echo set,
// it writes rapid's logs there as they come. This is how cmd/zksim runs
// the machines outside `go test`. It sets no flag of rapid's
// (harness.Explore), so explorations may run at once (`zksim explore
// -parallel`): each runs the checks its seed draws, whatever runs beside
// it.
func (m Machine) Explore(t *testing.T, echo io.Writer) Result {
	t.Helper()
	digest := sha256.New()
	res := harness.Explore(t, m.harness(), harness.ExploreOptions{Echo: echo, Traces: func(trace string) {
		sum := sha256.Sum256([]byte(trace))
		digest.Write(sum[:])
	}})
	return Result{
		Passed: res.Passed, Checks: res.Checks, Actions: res.Actions, Steps: res.Steps,
		Virtual: res.Virtual.String(), Report: res.Report, Logs: append(res.Logs, coverageLines(res.Coverage)),
		Digest: hex.EncodeToString(digest.Sum(nil)),
	}
}

// coverageLines prints a coverage table with every line marked
// "coverage| ", which the exploration command (cmd/zksim) picks out.
func coverageLines(c sim.Coverage) string {
	lines := strings.Split(strings.TrimRight(c.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = "coverage| " + l
	}
	return strings.Join(lines, "\n")
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
// violation of one of f.Want's kinds (harness.ExpectCaught: the failure
// is shrunk, replayed twice from its seed with the same trace, and its
// shrunk schedule and minimal failing run logged). It runs with the
// flawed-recipe settings (see Catch).
func (f Flaw) Test(t *testing.T) {
	t.Helper()
	defer setFlawFlags(t)()
	harness.ExpectCaughtWith(t, f.Machine.harness(), harness.CatchOptions{Shrinks: 1}, f.wants()...)
}

// TestConcurrently is Test for a caller that tests several flaws at once,
// each under a parallel test of its own: it sets no flag
// (harness.CatchOptions.Concurrent), so call SetFlawFlags once before,
// and set no flag while it runs. With the same flags, it catches, shrinks
// and replays what Test does.
func (f Flaw) TestConcurrently(t *testing.T) {
	t.Helper()
	harness.ExpectCaughtWith(t, f.Machine.harness(), harness.CatchOptions{Concurrent: true}, f.wants()...)
}

// Catch runs f under rapid and reports what it found, without failing t
// (harness.Catch); with echo set, it writes rapid's logs there as they
// come. Both Catch and Test run with the flawed-recipe settings: 15
// actions per run on average (-rapid.steps), the fixed seed 1
// (-rapid.seed), the shrinking bounded by the machine's budget of checks
// rather than by wall-clock time (-rapid.shrinktime set out of the way, to
// harness.ShrinkCap), and no fail file, except for the flags named by
// LeaveFlags. The shrunk schedule is then a function of the seed alone.
// Both shrink the first failure only (harness.CatchOptions.Shrinks), so
// that the suite of flaws stays quick.
func (f Flaw) Catch(t *testing.T, echo io.Writer) Caught {
	t.Helper()
	defer setFlawFlags(t)()
	return f.caught(harness.Catch(t, f.Machine.harness(), harness.CatchOptions{Echo: echo, Shrinks: 1}, f.wants()...))
}

// SetFlawFlags sets rapid's flags to the flawed-recipe settings that
// Catch applies (see Catch), except those named by LeaveFlags, and no fail
// file. Call it once before CatchConcurrently.
func SetFlawFlags() error {
	for _, f := range flawFlags {
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
	return f.caught(harness.Catch(t, f.Machine.harness(), harness.CatchOptions{Echo: echo, Concurrent: true}, f.wants()...))
}

// wants returns the violation kinds of f.Want.
func (f Flaw) wants() []string { return strings.Split(f.Want, "|") }

// Caught is what running a flawed recipe under rapid found.
type Caught = harness.Caught

// caught rewrites the report of c, whose failures breaking one of f's
// kinds the harness reports as one ("VIOLATION (wanted): two holders or
// token went back"), to name the kinds the minimal failing run broke
// ("VIOLATION: two holders"), as rapid would have reported them.
func (f Flaw) caught(c Caught) Caught {
	var kinds []string
	for _, l := range c.Logs {
		if v, ok := strings.CutPrefix(l, "VIOLATION: "); ok {
			if k, _, ok := strings.Cut(v, " at t="); ok && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	if len(kinds) > 0 {
		slices.Sort(kinds)
		c.Report = wantedReport.ReplaceAllLiteralString(c.Report, "VIOLATION: "+strings.Join(kinds, ", "))
	}
	return c
}

// wantedReport is the harness's message of a failure that broke a kind
// the flaw wants.
var wantedReport = regexp.MustCompile(`VIOLATION \(wanted\): [^\n]*`)

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
