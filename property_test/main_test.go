package property_test

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim/explore"
	"github.com/zksim/zksim/harness"
)

// ciChecks is the number of checks (runs) each property gets unless
// -rapid.checks or RAPID_CHECKS says otherwise: 1,000, the CI budget of a
// recipe family. rapid's own default is 100.
const ciChecks = "1000"

// The suite sets -rapid.shrinktime to harness.ShrinkCap (an hour) unless
// -rapid.shrinktime or RAPID_SHRINKTIME says otherwise: the machines on
// package harness shrink a failure by a budget of checks
// (harness.Machine.ShrinkBudget), so that the shrunk schedule depends on
// the seed alone, not on how busy the machine is. The recipe machines
// run in parallel (Machine.CheckFrom, harness.Explore), which set no flag
// of rapid's, so the suite sets it once, before any test runs: left at
// rapid's 30s, it cut their shrinks by the clock (a mutant of
// recipes/internal/hold shrank to 46 actions on a loaded machine, 13 with
// 2s or 5s, and to 3 once the shrink ran to its end, 8,730 checks). The
// flawed recipes and the zk.Lock machine (harness.Catch) shrink under the
// same cap.

// ciSeed is the committed seed of the suite: unless -explore (or
// ZKSIM_EXPLORE) or -rapid.seed (or RAPID_SEED) says otherwise, every
// property runs its checks from a seed made of it and the test's name
// (logged by the test), so a plain `go test ./...` and CI run the same
// schedules every time. A change that makes a committed seed fail has
// found a failure: fix it, do not change the seed.
const ciSeed uint64 = 20261124

// suiteSeed is the seed of this run: ciSeed, or a random one with
// -explore.
var suiteSeed = ciSeed

// suiteChecks is -rapid.checks as TestMain left it, for the tests' logs:
// the flag itself is set for a while by each replay of a fail file
// (explore.Machine.ReplayFailFile), which runs beside other tests.
var suiteChecks string

// exploring turns on exploration: a random seed per run (printed, so the
// run replays with -rapid.seed), and a fail file under
// testdata/rapid/<Test>/ for each failure, to be committed as a
// regression test once fixed.
var exploring = flag.Bool("explore", false, "explore random seeds (and write a fail file for each failure) instead of the committed seed; also ZKSIM_EXPLORE=1")

// TestMain sets the suite's seed and budget and makes sure no test leaves
// a goroutine behind.
func TestMain(m *testing.M) {
	flag.Parse()
	for name, env := range map[string]string{"rapid.steps": "RAPID_STEPS", "rapid.shrinktime": "RAPID_SHRINKTIME", "rapid.checks": "RAPID_CHECKS", "rapid.seed": "RAPID_SEED", "rapid.nofailfile": "RAPID_NOFAILFILE"} {
		userSet[name] = isSet(name, env)
		if userSet[name] {
			explore.LeaveFlags(name)
		}
	}
	setDefault("rapid.checks", "RAPID_CHECKS", ciChecks)
	setDefault("rapid.shrinktime", "RAPID_SHRINKTIME", harness.ShrinkCap.String())
	if v, ok := os.LookupEnv("ZKSIM_EXPLORE"); ok && v != "" && v != "0" && v != "false" {
		*exploring = true
	}
	mode := "the committed seed (property_test/main_test.go); random seeds: go test ./property_test/ -explore"
	if *exploring {
		suiteSeed, mode = randomSeed(), "exploring: a random seed; failures are written to testdata/rapid/<Test>/ (commit them)"
	} else {
		// A fixed run writes no fail file: its seed replays any failure,
		// and a file left behind would fail every later run in this
		// checkout.
		setDefault("rapid.nofailfile", "RAPID_NOFAILFILE", "true")
	}
	seed := strconv.FormatUint(suiteSeed, 10)
	if userSet["rapid.seed"] {
		seed, mode = flag.Lookup("rapid.seed").Value.String(), "the seed given by -rapid.seed or RAPID_SEED, for every property"
	}
	liftParallelLimit()
	suiteChecks = flag.Lookup("rapid.checks").Value.String()
	fmt.Printf("property_test: seed %s, %s checks per property: %s\n", seed, suiteChecks, mode)
	goleak.VerifyTestMain(m)
}

// useSeed sets the seed the property runs from, made of the suite's seed
// and the test's name (so that two machines of the same shape do not run
// the same schedules), unless -rapid.seed or RAPID_SEED gave one; and it
// logs it, with the number of checks.
func useSeed(t *testing.T) {
	t.Helper()
	if s := testSeed(t); s != 0 {
		if err := flag.Set("rapid.seed", strconv.FormatUint(s, 10)); err != nil {
			t.Fatal(err)
		}
	}
}

// testSeed returns the seed of test t (see useSeed), and logs it; 0 if
// the seed was given (-rapid.seed or RAPID_SEED), which then stands for
// every test. It sets no flag: parallel tests call it.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	var s uint64
	seed := ""
	if userSet["rapid.seed"] {
		seed = flag.Lookup("rapid.seed").Value.String() // no test sets it
	} else {
		h := fnv.New64a()
		h.Write([]byte(t.Name()))
		s = max((suiteSeed^h.Sum64())>>1, 1)
		seed = strconv.FormatUint(s, 10)
	}
	t.Logf("seed %s, %s checks (replay: -run '^%s$' -rapid.seed=%[1]s)", seed, suiteChecks, t.Name())
	return s
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return max(binary.LittleEndian.Uint64(b[:])>>1, 1)
}

// userSet records which rapid flags the command line or the environment
// set; the tests leave those alone.
var userSet = map[string]bool{}

// isSet reports whether flag name was set on the command line or by the
// environment variable env.
func isSet(name, env string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, ok := os.LookupEnv(env)
	return set || ok
}

// setDefault sets flag name to value unless the command line or the
// environment variable env set it.
func setDefault(name, env, value string) {
	if isSet(name, env) {
		return
	}
	if err := flag.Set(name, value); err != nil {
		panic(err)
	}
}

// TestPlainRunIsReproducible: without -explore and without a seed given,
// the suite runs from the committed seed (each property from a seed that
// depends only on it and the test's name), writes no fail file, and
// leaves the shrinking of a failure to the harness's budget of checks
// (rapid's shrink time at harness.ShrinkCap, out of the way).
func TestPlainRunIsReproducible(t *testing.T) {
	if *exploring || userSet["rapid.seed"] {
		t.Skip("exploring, or a seed was given")
	}
	if suiteSeed != ciSeed {
		t.Fatalf("suite seed %d, want the committed %d", suiteSeed, ciSeed)
	}
	if v := flag.Lookup("rapid.nofailfile").Value.String(); v != "true" && !userSet["rapid.nofailfile"] {
		t.Fatalf("rapid.nofailfile = %s: a plain run would write fail files", v)
	}
	if v := flag.Lookup("rapid.shrinktime").Value.String(); v != harness.ShrinkCap.String() && !userSet["rapid.shrinktime"] {
		t.Fatalf("rapid.shrinktime = %s, want harness.ShrinkCap, %v (shrinks bounded by checks, not time)", v, harness.ShrinkCap)
	}
	useSeed(t)
	first := flag.Lookup("rapid.seed").Value.String()
	useSeed(t)
	if again := flag.Lookup("rapid.seed").Value.String(); again != first || first == "0" {
		t.Fatalf("seeds %s then %s: want the same non-zero seed", first, again)
	}
}
