package explore

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/zksim/zksim/harness"
)

// Determinism: the same seed gives the same trace, byte for byte, under
// -race and any GOMAXPROCS. TestTraceDump writes a digest of the trace of
// every check of every recipe machine to a file; TestDeterminism runs it
// under -cpu 1, 2 and 4 and under -race, and compares the files.

// TestTraceDump runs ZKSIM_TRACE_CHECKS checks (default 10) of every
// recipe machine from fixed seeds and writes one line per check, the
// machine, the check's number and the SHA-256 of its whole trace, to the
// file ZKSIM_TRACE_OUT. Skipped without ZKSIM_TRACE_OUT: TestDeterminism
// runs it. With ZKSIM_TRACE_KEEP="<machine> <check>" it also writes that
// check's whole trace to ZKSIM_TRACE_OUT.trace, to see where two runs part;
// ZKSIM_TRACE_ONLY=<machine> dumps only that machine, and ZKSIM_TRACE_FULL=1
// writes every whole trace after its digest.
func TestTraceDump(t *testing.T) {
	out := os.Getenv("ZKSIM_TRACE_OUT")
	if out == "" {
		t.Skip("ZKSIM_TRACE_OUT not set (TestDeterminism runs this test)")
	}
	checks := envInt("ZKSIM_TRACE_CHECKS", 10)
	keep := os.Getenv("ZKSIM_TRACE_KEEP") // "QueueFIFO 931": write that check's trace to ZKSIM_TRACE_OUT.trace
	var buf bytes.Buffer
	defer setFlagForTest(t, "rapid.checks", "RAPID_CHECKS", strconv.Itoa(checks))()
	defer setFlagForTest(t, "rapid.nofailfile", "RAPID_NOFAILFILE", "true")()
	oldSeed := flag.Lookup("rapid.seed").Value.String()
	defer func() { _ = flag.Set("rapid.seed", oldSeed) }()
	only := os.Getenv("ZKSIM_TRACE_ONLY") // one machine's name: dump only its checks
	full := os.Getenv("ZKSIM_TRACE_FULL") != ""
	for i, m := range Recipes {
		if only != "" && m.Name != only {
			continue
		}
		var (
			mu sync.Mutex
			n  int
		)
		traces := func(trace string) {
			mu.Lock()
			defer mu.Unlock()
			n++
			fmt.Fprintf(&buf, "%s %d %x\n", m.Name, n, sha256.Sum256([]byte(trace)))
			if full {
				fmt.Fprintf(&buf, "%s\n", trace)
			}
			if keep == fmt.Sprintf("%s %d", m.Name, n) {
				_ = os.WriteFile(out+".trace", []byte(trace), 0o644)
			}
		}
		if err := flag.Set("rapid.seed", strconv.Itoa(1000+i)); err != nil {
			t.Fatal(err)
		}
		res := harness.Explore(t, m.harness(), harness.ExploreOptions{Traces: traces})
		if !res.Passed {
			t.Errorf("%s failed: %s", m.Name, res.Report)
		}
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeterminism runs TestTraceDump under -cpu 1, 2 and 4 (this test
// binary, run again) and under -race (go test -race), and checks that
// every check's trace is the same byte for byte in all four. Checks per
// machine: ZKSIM_TRACE_CHECKS (default 10; 1,000 for the figures of
// benchmarks/RESULTS.md). Skipped with -short.
//
//	ZKSIM_TRACE_CHECKS=1000 go test ./explore/ -run '^TestDeterminism$' -v -timeout 60m
func TestDeterminism(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if os.Getenv("ZKSIM_TRACE_OUT") != "" {
		t.Skip("inside a trace dump")
	}
	checks := envInt("ZKSIM_TRACE_CHECKS", 10)
	lines := harness.CompareTraceDumps(t, "TestTraceDump", checks)
	if got := len(lines); got != checks*len(Recipes) {
		t.Fatalf("%d traces, want %d", got, checks*len(Recipes))
	}
	t.Logf("%d checks of %d Recipes: the same %d traces under -cpu 1, 2, 4 and -race", checks, len(Recipes), checks*len(Recipes))
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// setFlagForTest sets flag name to value, unless the command line or the
// environment variable env set it, and returns the function that restores
// it.
func setFlagForTest(t *testing.T, name, env, value string) (restore func()) {
	t.Helper()
	if _, ok := os.LookupEnv(env); ok {
		return func() {}
	}
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	return func() { _ = flag.Set(name, old) }
}
