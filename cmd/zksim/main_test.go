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
