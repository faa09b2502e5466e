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

// The coverage table a machine logs is picked out of its logs.
func TestCoverageRows(t *testing.T) {
	logs := []string{
		"1000 checks: 10 actions",
		"coverage: the requests of every check\ncoverage|   area    op requests LoseReply\ncoverage| /queue multi     1394        70",
	}
	got := coverageRows(logs)
	if len(got) != 2 || got[1] != "/queue multi     1394        70" {
		t.Errorf("coverageRows = %q", got)
	}
}
