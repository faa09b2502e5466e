package explore

import (
	"flag"
	"io"
	"regexp"
	"strings"
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
// or the environment sets them. The seed is fixed so that whether a flaw is
// caught within the budget does not depend on the draw: the machines are
// deterministic, so with this seed every flaw is caught on every run (pass
// -rapid.seed=0 to search from a random seed instead).
const (
	flawSteps      = "15"
	flawShrinkTime = "60s"
	flawSeed       = "1"
)

// setFlagForTest sets flag name to value, unless the command line or the
// environment variable env set it, and returns the function that restores
// it.
func setFlagForTest(t *testing.T, name, env, value string) (restore func()) {
	t.Helper()
	if userSet[name] {
		return func() {}
	}
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	return func() { _ = flag.Set(name, old) }
}

// expectCaught runs prop under rapid, with the same flags as every other
// property (checks, seed), and passes only if rapid finds a failure whose
// message matches want. It logs the shrunk schedule: the actions rapid drew
// in the minimal failing run, and the trace of that run. No fail file is
// written (the flaw is expected).
func expectCaught(t *testing.T, want string, prop func(*rapid.T)) {
	t.Helper()
	c := mustCatch(t, want, prop)
	replayTwice(t, c.Report, prop)
	logCaught(t, c)
}

// ExpectCaught runs prop, a property of one's own expected to fail, as the
// flawed recipes run: it passes only if rapid finds a failure whose message
// matches want, the failure replays twice from its seed with the same
// trace, byte for byte, and it logs the shrunk schedule and the minimal
// failing run. prop must hand the whole trace of each check to
// ReportTrace as the check ends (the replay fails without it).
func ExpectCaught(t *testing.T, want string, prop func(*rapid.T)) {
	t.Helper()
	c := mustCatch(t, want, prop)
	replayTwice(t, c.Report, prop)
	logCaught(t, c)
}

// ReportTrace hands the whole trace of a check of a property run by
// ExpectCaught to its replay check: a property of one's own calls it as
// each check ends.
func ReportTrace(trace string) {
	if sink := traceSink; sink != nil {
		sink(trace)
	}
}

// mustCatch runs prop and fails t unless rapid caught a failure as wanted.
func mustCatch(t *testing.T, want string, prop func(*rapid.T)) Caught {
	t.Helper()
	c := catch(t, want, prop, nil)
	switch {
	case !c.Caught:
		t.Fatalf("the flaw was not caught: %s", strings.Join(c.Logs, "\n"))
	case !c.AsWanted:
		t.Fatalf("caught, but not as %q:\n%s\n%s", want, c.Report, strings.Join(c.Logs, "\n"))
	}
	return c
}

// logCaught logs what was caught and its shrunk schedule.
func logCaught(t *testing.T, c Caught) {
	t.Helper()
	t.Logf("caught: %s", c.Report)
	t.Logf("shrunk schedule (%d actions): %s", len(c.Schedule), strings.Join(c.Schedule, ", "))
	t.Logf("minimal failing run:\n%s", strings.Join(c.Logs, "\n"))
}

// Caught is what running a flawed recipe under rapid found.
type Caught struct {
	// Caught reports whether rapid found a failure; AsWanted, whether its
	// message matches the flaw's Want.
	Caught, AsWanted bool
	// Report is rapid's report of the failure: the violations, and how to
	// reproduce it.
	Report string
	// Schedule is the shrunk schedule: the actions rapid drew in the
	// minimal failing run.
	Schedule []string
	// Logs is everything rapid logged, the minimal failing run's trace
	// included.
	Logs []string
}

// catch runs prop under rapid with the flawed-recipe settings and reports
// what rapid found; with echo set, it writes rapid's logs there as they
// come.
func catch(t *testing.T, want string, prop func(*rapid.T), echo io.Writer) Caught {
	t.Helper()
	old := flag.Lookup("rapid.nofailfile").Value.String()
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = flag.Set("rapid.nofailfile", old) }()
	// Shorter runs, and a little more time to shrink than rapid's default
	// 30s, so that the schedule logged is short even under -race.
	defer setFlagForTest(t, "rapid.steps", "RAPID_STEPS", flawSteps)()
	defer setFlagForTest(t, "rapid.seed", "RAPID_SEED", flawSeed)()
	defer setFlagForTest(t, "rapid.shrinktime", "RAPID_SHRINKTIME", flawShrinkTime)()
	c := harness.NewRecorder(t.Name(), echo)
	rapid.Check(c, harness.InBubbles(t, prop))
	res := Caught{Caught: c.Failed(), Report: strings.Join(c.Errors(), "\n"), Logs: c.Logs()}
	res.AsWanted = res.Caught && regexp.MustCompile(want).MatchString(res.Report)
	for _, l := range c.Logs() {
		if a, ok := strings.CutPrefix(l, "[rapid] draw action: "); ok {
			res.Schedule = append(res.Schedule, strings.Trim(a, `"`))
		}
	}
	return res
}

var reproduceSeed = regexp.MustCompile(`-rapid\.seed=(\d+)`)

// replayTwice replays the failure rapid reported (its reproduce seed, one
// check) twice, and fails unless both replays fail with the same trace,
// byte for byte: a failure that does not replay is a bug of the engine.
func replayTwice(t *testing.T, report string, prop func(*rapid.T)) {
	t.Helper()
	m := reproduceSeed.FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no reproduce seed in %q", report)
	}
	// The settings the failure was found with (see catch), but one check
	// and no shrinking.
	defer setFlagForTest(t, "rapid.steps", "RAPID_STEPS", flawSteps)()
	defer setFlagForTest(t, "rapid.checks", "RAPID_CHECKS", "1")()
	defer setFlagForTest(t, "rapid.shrinktime", "RAPID_SHRINKTIME", "1ms")()
	old := flag.Lookup("rapid.seed").Value.String()
	defer func() { _ = flag.Set("rapid.seed", old) }()
	if err := flag.Set("rapid.seed", m[1]); err != nil {
		t.Fatal(err)
	}
	var traces [2]string
	for i := range traces {
		var got []string
		traceSink = func(trace string) { got = append(got, trace) }
		c := harness.NewRecorder(t.Name(), nil)
		rapid.Check(c, harness.InBubbles(t, prop))
		traceSink = nil
		switch {
		case !c.Failed():
			t.Fatalf("replay %d of seed %s did not fail", i+1, m[1])
		case len(got) == 0:
			t.Fatalf("replay %d of seed %s failed but handed no trace to ReportTrace", i+1, m[1])
		}
		traces[i] = got[0] // the first check: the one the seed reproduces
	}
	if traces[0] != traces[1] {
		t.Fatalf("two replays of seed %s gave different traces:\n%s\n---\n%s", m[1], traces[0], traces[1])
	}
	t.Logf("replayed twice from seed %s: the same trace (%d lines), byte for byte", m[1], strings.Count(traces[0], "\n"))
}
