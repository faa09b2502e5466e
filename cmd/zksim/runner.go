package main

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// inTestRunner runs job as the one test of the testing package's runner,
// in this process, and exits: the simulator runs in testing/synctest
// bubbles, and a bubble needs a *testing.T. job writes its own output; the
// runner adds nothing to it unless a test failed through t (a herd run
// whose recipe misbehaved, say), in which case it prints that test's log
// and "FAIL" after job's output. The exit status is 0 when job returns nil
// and nothing failed, 1 otherwise.
func inTestRunner(job func(t *testing.T) error) {
	testing.Init()
	// testing's -test.* flags keep their defaults (no timeout, not
	// verbose): zksim parsed its own command line already.
	if err := flag.CommandLine.Parse(nil); err != nil {
		panic(err)
	}
	all := func(string, string) (bool, error) { return true, nil }
	testing.Main(all, []testing.InternalTest{{Name: "zksim", F: func(t *testing.T) {
		err := job(t)
		if err != nil {
			fmt.Fprintln(os.Stderr, "zksim:", err)
		}
		if t.Failed() {
			return // the runner prints what failed, then exits with status 1
		}
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}}}, nil, nil)
}
