package property_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/zksim/zksim/explore"
)

// Determinism of the zk.Lock machine: go-zookeeper's clients, unchanged,
// under the simulator give the same trace for the same seed, byte for
// byte, under -race and any GOMAXPROCS. TestZKTraceDump writes a digest of
// every check's trace; TestZKDeterminism runs it under -cpu 1, 2 and 4 and
// under -race and compares the files.

// zkTraceSink, if set, receives the whole trace of every check of the
// zk.Lock machine as it ends, followed by the violation the check failed
// with, if any (with the server's names, which the trace normalizes). Set
// it only while no property runs.
var zkTraceSink func(trace string)

// reportZKTrace hands the trace of a check to ExpectCaught's replay check
// and to zkTraceSink.
func reportZKTrace(trace string) {
	explore.ReportTrace(trace)
	if zkTraceSink != nil {
		zkTraceSink(trace)
	}
}

// TestZKTraceDump runs ZKSIM_TRACE_CHECKS checks (default 10) of the
// zk.Lock machine, one per rapid seed from ZKSIM_TRACE_SEED (default 1) on,
// and writes one line per check, its seed and the SHA-256 of its whole
// trace and violation, to the file ZKSIM_TRACE_OUT (ZKSIM_TRACE_FULL=1
// writes every whole trace after its digest). Skipped without
// ZKSIM_TRACE_OUT: TestZKDeterminism runs it.
func TestZKTraceDump(t *testing.T) {
	out := os.Getenv("ZKSIM_TRACE_OUT")
	if out == "" {
		t.Skip("ZKSIM_TRACE_OUT not set (TestZKDeterminism runs this test)")
	}
	checks := envInt("ZKSIM_TRACE_CHECKS", 10)
	full := os.Getenv("ZKSIM_TRACE_FULL") != ""
	base := uint64(1)
	if v, err := strconv.ParseUint(os.Getenv("ZKSIM_TRACE_SEED"), 10, 64); err == nil {
		base = v
	}
	var buf bytes.Buffer
	var traces []string
	zkTraceSink = func(trace string) { traces = append(traces, trace) }
	defer func() { zkTraceSink = nil }()
	failed := 0
	for i := range uint64(checks) {
		// One check per seed, its first trace: the one the seed gives
		// (a failing check's shrinking would add more).
		traces = traces[:0]
		if explore.CheckSeed(t, zkLockProp(t), base+i) {
			failed++
		}
		if len(traces) == 0 {
			t.Fatalf("seed %d: no trace", base+i)
		}
		fmt.Fprintf(&buf, "zklock %d %x\n", base+i, sha256.Sum256([]byte(traces[0])))
		if full {
			fmt.Fprintf(&buf, "%s\n", traces[0])
		}
	}
	t.Logf("%d checks, %d of them failing (the orphan)", checks, failed)
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestZKDeterminism runs TestZKTraceDump under -cpu 1, 2 and 4 (this test
// binary, run again) and under -race (go test -race), and checks that
// every check's trace is the same byte for byte in all four. Checks:
// ZKSIM_TRACE_CHECKS (default 10; 1,000 for the report's figures).
// Skipped with -short.
//
//	ZKSIM_TRACE_CHECKS=1000 go test ./property_test/ -run '^TestZKDeterminism$' -v -timeout 60m
func TestZKDeterminism(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if os.Getenv("ZKSIM_TRACE_OUT") != "" {
		t.Skip("inside a trace dump")
	}
	checks := envInt("ZKSIM_TRACE_CHECKS", 10)
	lines := explore.CompareTraceDumps(t, "TestZKTraceDump", checks)
	if got := len(lines); got != checks {
		t.Fatalf("%d traces, want %d", got, checks)
	}
	t.Logf("%d checks of the zk.Lock machine: the same %d traces under -cpu 1, 2, 4 and -race", checks, checks)
}
