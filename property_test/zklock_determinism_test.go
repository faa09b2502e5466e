package property_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/zksim/zksim/harness"
)

// Determinism of the zk.Lock machine: go-zookeeper's clients, unchanged,
// under the simulator give the same trace for the same seed, byte for
// byte, under -race and any GOMAXPROCS. TestZKTraceDump writes a digest of
// every check's trace; TestZKDeterminism runs it under -cpu 1, 2 and 4 and
// under -race and compares the files.

// TestZKTraceDump runs ZKSIM_TRACE_CHECKS checks (default 10) of the
// zk.Lock machine, one per rapid seed from ZKSIM_TRACE_SEED (default 1) on,
// and writes one line per check, its seed and the SHA-256 of its whole
// trace (with its violations), whether it failed, to the file ZKSIM_TRACE_OUT (ZKSIM_TRACE_FULL=1
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
	failed := 0
	for i := range uint64(checks) {
		// One check per seed: the one the seed gives, not shrunk.
		trace, f := harness.Trace(t, zkLockMachine(true), base+i)
		if f {
			failed++
		}
		if trace == "" {
			t.Fatalf("seed %d: no trace", base+i)
		}
		fmt.Fprintf(&buf, "zklock %d %v %x\n", base+i, f, sha256.Sum256([]byte(trace)))
		if full {
			fmt.Fprintf(&buf, "%s\n", trace)
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
	lines := harness.CompareTraceDumps(t, "TestZKTraceDump", checks)
	if got := len(lines); got != checks {
		t.Fatalf("%d traces, want %d", got, checks)
	}
	t.Logf("%d checks of the zk.Lock machine: the same %d traces under -cpu 1, 2, 4 and -race", checks, checks)
}
