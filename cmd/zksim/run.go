package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/zksim/zksim/benchmarks"
)

// options are the flags of zksim with no command: both jobs.
type options struct {
	herdOptions
	exploreOptions
	herd    bool
	explore bool
}

// defaultMain runs zksim with no command: the herd comparison, then the
// fault exploration, then a summary of both.
func defaultMain(args []string) int {
	var o options
	fs := flag.NewFlagSet("zksim", flag.ContinueOnError)
	herdFlags(fs, &o.herdOptions)
	exploreFlags(fs, &o.exploreOptions)
	fs.BoolVar(&o.herd, "herd", true, "run the herd comparison")
	fs.BoolVar(&o.explore, "explore", true, "run the fault exploration")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: zksim [flags]\n       zksim COMMAND [flags] (commands: zksim help)\n\n"+
			"Runs the herd comparison of the recipes in the deterministic simulator (zksim herd), then\n"+
			"a fault exploration of the built-in recipes (zksim explore), on the embedded in-memory\n"+
			"ZooKeeper, and prints a summary of both.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if ok, status := parseFlags(fs, args, func() error {
		o.sizesSet = isSet(fs, "n")
		return checkOptions(&o)
	}); !ok {
		return status
	}
	inTestRunner(func(t *testing.T) error { return run(t, o, os.Stdout) })
	return 0 // not reached: inTestRunner exits
}

// checkOptions checks the flags of zksim with no command.
func checkOptions(o *options) error {
	if !o.herd && !o.explore {
		return errors.New("nothing to do: -herd=false and -explore=false turn off both jobs")
	}
	if o.write && !o.herd {
		return errors.New("-write writes the herd report: it needs the herd comparison (-herd)")
	}
	if err := checkExplore(o.exploreOptions); err != nil {
		return err
	}
	return checkHerd(&o.herdOptions)
}

// run does the jobs o asks for under t and prints the summary. It returns
// an error when a job could not run or found a violation.
func run(t *testing.T, o options, out io.Writer) error {
	if o.seed == 0 {
		o.seed = drawSeed()
	}
	jobs, job := 0, 0
	for _, on := range []bool{o.herd, o.explore} {
		if on {
			jobs++
		}
	}
	step := func() string { job++; return fmt.Sprintf("[%d/%d]", job, jobs) }
	start := time.Now()
	fmt.Fprintf(out, "zksim: the recipes on the embedded in-memory ZooKeeper\n")
	var (
		herdRows []benchmarks.HerdRow
		explored []*exploreResult
		herdErr  error
		expErr   error
	)
	if o.herd {
		if herdRows, herdErr = runHerd(t, o.herdOptions, step(), out); herdErr != nil {
			fmt.Fprintf(out, "  herd comparison failed: %v\n", herdErr)
		}
	}
	if o.explore {
		if explored, expErr = runExplore(t, o.exploreOptions, step(), out); expErr != nil {
			fmt.Fprintf(out, "  fault exploration failed: %v\n", expErr)
		}
	}
	fmt.Fprintf(out, "\n================ summary (%s) ================\n", time.Since(start).Round(time.Second))
	if o.herd && herdErr == nil {
		printHerd(out, o.herdOptions, herdRows)
	}
	if o.explore && expErr == nil {
		expErr = printExplore(out, o.exploreOptions, explored)
	}
	fmt.Fprintf(out, "  Bigger runs: -n %s (the full herd report, 2 to 3 minutes), -checks 1000\n", fullSizes)
	return errors.Join(herdErr, expErr)
}
