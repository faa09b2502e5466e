package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain lets a test run the command itself: with ZKSIM_TEST_MAIN=1 the
// test binary is zksim, taking its arguments from ZKSIM_TEST_ARGS when set
// (split at spaces) or else from its own command line.
func TestMain(m *testing.M) {
	if os.Getenv("ZKSIM_TEST_MAIN") == "1" {
		args := os.Args[1:]
		if a, ok := os.LookupEnv("ZKSIM_TEST_ARGS"); ok {
			args = strings.Fields(a)
		}
		os.Args = append([]string{"zksim"}, args...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The coverage table a property test prints comes out under its line.
func TestExplorationPrintsCoverage(t *testing.T) {
	var log strings.Builder
	x := newExploration(&log)
	for _, ev := range []testEvent{
		{Action: "run", Test: "TestQueueFIFO"},
		{Action: "output", Test: "TestQueueFIFO", Output: "        coverage|   area    op requests LoseReply\n"},
		{Action: "output", Test: "TestQueueFIFO", Output: "        coverage| /queue multi     1394        70\n"},
		{Action: "pass", Test: "TestQueueFIFO", Elapsed: 1},
	} {
		x.handle(ev)
	}
	out := log.String()
	if !strings.Contains(out, "/queue multi     1394        70") || !strings.Contains(out, "a zero is a blind spot") {
		t.Errorf("exploration output lacks the coverage table:\n%s", out)
	}
}
