package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/explore"
	"github.com/zksim/zksim/harness"
)

// exploreOptions are the flags of the fault exploration.
type exploreOptions struct {
	checks   int
	seed     uint64
	flawed   bool
	verbose  bool
	coverage bool
	parallel int  // machines explored at once
	digest   bool // print each machine's trace digest
}

// exploreFlags defines the fault exploration's flags in fs.
func exploreFlags(fs *flag.FlagSet, o *exploreOptions) {
	fs.IntVar(&o.checks, "checks", 100, "random runs per recipe in the fault exploration")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the fault exploration, to replay a run (0: draw one)")
	fs.BoolVar(&o.flawed, "flawed", false, "also explore the deliberately broken recipes, to see each flaw caught and shrunk")
	fs.BoolVar(&o.verbose, "v", false, "print what rapid logs as it comes")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "machines explored at once, each on a worker of its own (the output, verdicts and traces do not depend on it)")
	fs.BoolVar(&o.digest, "digest", false, "print under each recipe the digest of the traces of its checks, to compare two explorations (-parallel 1 and 2, say)")
	fs.BoolVar(&o.coverage, "coverage", false, "print under each recipe its coverage table: which requests (by directory and op) met which faults")
}

// checkExplore checks the fault exploration's flags.
func checkExplore(o exploreOptions) error {
	if o.checks < 1 {
		return errors.New("-checks must be at least 1")
	}
	if o.parallel < 1 {
		return errors.New("-parallel must be at least 1")
	}
	return nil
}

// exploreMain runs "zksim explore".
func exploreMain(args []string) int {
	var o exploreOptions
	fs := flag.NewFlagSet("zksim explore", flag.ContinueOnError)
	exploreFlags(fs, &o)
	setUsage(fs, "zksim explore [flags]", "Explores the built-in recipes (locks, election, queues, barriers) with rapid state\n"+
		"machines on the deterministic simulator: clients, lost replies, dropped requests,\n"+
		"disconnects, session expiry and process pauses drawn from a seed, the recipes'\n"+
		"invariants checked after every step.\n\n"+
		"To explore your own code (on zksim.Conn or go-zookeeper's *zk.Conn), write a\n"+
		"harness.Machine in a test of your own (package github.com/zksim/zksim/harness:\n"+
		"processes, operations, named invariants, what must eventually hold) and run it\n"+
		"with go test: harness.Check(t, m) explores it, -rapid.checks and -rapid.seed set\n"+
		"the checks and replay a run; harness.ExpectCaught(t, m, \"invariant\") asserts\n"+
		"that a planted bug is caught. The README's \"Exploring your own code\" has a\n"+
		"complete example.")
	if ok, status := parseFlags(fs, args, func() error { return checkExplore(o) }); !ok {
		return status
	}
	inTestRunner(func(t *testing.T) error {
		start := time.Now()
		if o.seed == 0 {
			o.seed = drawSeed()
		}
		results, err := runExplore(t, o, "", os.Stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "\n================ summary (%s) ================\n", time.Since(start).Round(time.Second))
		return printExplore(os.Stdout, o, results)
	})
	return 0 // not reached: inTestRunner exits
}

// exploreResult is what the exploration of one machine found.
type exploreResult struct {
	what   string
	flawed bool
	passed bool     // a recipe: no violation; a flaw: caught as it must be
	detail string   // a recipe: the checks; a flaw: the violation caught
	shrunk string   // a flaw: the shrunk schedule
	digest string   // a recipe: the digest of its checks' traces
	checks int      // a recipe: the checks it ran
	report []string // what to show of a failure
	// coverage is a recipe's coverage table: which requests met which
	// faults over its checks.
	coverage []string
}

// flawChecks is the number of checks of a flawed recipe: the property
// suite's budget (property_test's ciChecks), within which the fixed seed of
// the flawed recipes catches every flaw; rapid stops at the first failure.
const flawChecks = "1000"

// caughtLine is the first line of rapid's report of a failure.
var caughtLine = regexp.MustCompile(`\[rapid\] failed after (\d+) tests: (.*)`)

// runExplore explores the recipes (explore.Recipes) with o's checks and
// seed, then, with o.flawed, the broken recipes (explore.Flaws, with their
// own fixed seed and settings: they stop at the first violation), printing
// a line as each ends. step is the "[2/2]" of the header ("" for none).
func runExplore(t *testing.T, o exploreOptions, step string, out io.Writer) ([]*exploreResult, error) {
	if step != "" {
		step += " "
	}
	fmt.Fprintf(out, "\n%sfault exploration: %d random runs per recipe, seed %d\n", step, o.checks, o.seed)
	fmt.Fprintf(out, "      (clients, lost replies, dropped requests, disconnects, session expiry and\n")
	fmt.Fprintf(out, "      process pauses drawn from the seed; invariants checked after every step)\n")
	settings := map[string]string{
		"rapid.checks": strconv.Itoa(o.checks), "rapid.seed": strconv.FormatUint(o.seed, 10), "rapid.nofailfile": "true",
	}
	if _, ok := os.LookupEnv("RAPID_SHRINKTIME"); !ok {
		// A failure shrinks by the machine's budget of checks, not for
		// rapid's 30s of wall-clock time: the same schedule however busy
		// the machine is.
		settings["rapid.shrinktime"] = harness.ShrinkCap.String()
	}
	for name, value := range settings {
		if err := flag.Set(name, value); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	line := func(r *exploreResult) {
		status := "ok"
		switch {
		case !r.passed && r.flawed:
			status = "MISSED"
		case !r.passed:
			status = "FAILED"
		}
		fmt.Fprintf(out, "  [%5.1fs] %-46s %-7s %s\n", time.Since(start).Seconds(), r.what, status, r.detail)
		if o.digest && r.digest != "" {
			fmt.Fprintf(out, "           trace digest: %s\n", r.digest)
		}
		if o.coverage && len(r.coverage) > 0 {
			fmt.Fprintf(out, "           coverage: requests by area and op, and the faults they met (a zero is a blind spot):\n")
			for _, row := range r.coverage {
				fmt.Fprintf(out, "           %s\n", row)
			}
		}
	}
	results := make([]*exploreResult, len(explore.Recipes))
	checks := 0
	inParallel(t, o.parallel, len(explore.Recipes), o.verbose, out, func(t *testing.T, i int, echo io.Writer) {
		m := explore.Recipes[i]
		res := m.Explore(t, echo)
		r := &exploreResult{what: m.What, passed: res.Passed, coverage: coverageRows(res.Logs), digest: res.Digest, checks: res.Checks}
		if res.Passed {
			r.detail = fmt.Sprintf("%d random runs, no violation", res.Checks)
		} else {
			if m := caughtLine.FindStringSubmatch(res.Report); m != nil {
				passed, _ := strconv.Atoi(m[1]) // rapid counts the runs that passed before
				r.detail = fmt.Sprintf("%s (on random run %d)", strings.TrimSpace(m[2]), passed+1)
			}
			r.report = lines(append([]string{res.Report}, res.Logs...), 60)
		}
		results[i] = r
	}, func(i int) {
		if results[i] == nil { // its test stopped it (t.FailNow)
			results[i] = &exploreResult{what: explore.Recipes[i].What, detail: "stopped", report: []string{"the exploration stopped (see above)"}}
		}
		checks += results[i].checks
		line(results[i])
	})
	elapsed := time.Since(start).Seconds()
	workers := "workers"
	if o.parallel == 1 {
		workers = "worker"
	}
	fmt.Fprintf(out, "  %d checks in %.1fs on %d %s: %.0f checks per second\n", checks, elapsed, o.parallel, workers, float64(checks)/elapsed)
	if o.flawed {
		fmt.Fprintf(out, "  the broken recipes (each must be caught, and its failing run shrunk):\n")
		if err := flag.Set("rapid.checks", flawChecks); err != nil {
			return nil, err
		}
		if err := explore.SetFlawFlags(); err != nil {
			return nil, err
		}
		flaws := make([]*exploreResult, len(explore.Flaws))
		inParallel(t, o.parallel, len(explore.Flaws), o.verbose, out, func(t *testing.T, i int, echo io.Writer) {
			f := explore.Flaws[i]
			c := f.CatchConcurrently(t, echo)
			r := &exploreResult{what: "flawed: " + f.What(), flawed: true, passed: c.AsWanted}
			if m := caughtLine.FindStringSubmatch(c.Report); m != nil {
				passed, _ := strconv.Atoi(m[1]) // rapid counts the runs that passed before
				r.detail = fmt.Sprintf("caught %s (found on random run %d)", strings.TrimSpace(m[2]), passed+1)
			}
			switch {
			case !c.Caught:
				r.report = []string{"the flaw was not caught"}
			case !c.AsWanted:
				r.report = lines(append([]string{fmt.Sprintf("caught, but not as %q:", f.Want), c.Report}, c.Logs...), 20)
			case len(c.Schedule) == 0:
				r.shrunk = "no random actions (the final liveness phase alone fails)"
			default:
				r.shrunk = fmt.Sprintf("%d actions: %s", len(c.Schedule), strings.Join(c.Schedule, ", "))
			}
			flaws[i] = r
		}, func(i int) {
			if flaws[i] == nil { // its test stopped it (t.FailNow)
				flaws[i] = &exploreResult{what: "flawed: " + explore.Flaws[i].What(), flawed: true, detail: "stopped", report: []string{"the exploration stopped (see above)"}}
			}
			line(flaws[i])
		})
		results = append(results, flaws...)
	}
	return results, nil
}

// printExplore prints the exploration's part of the summary; it returns an
// error if a recipe failed or a flaw was missed.
func printExplore(out io.Writer, o exploreOptions, results []*exploreResult) error {
	fmt.Fprintf(out, "\nfault exploration (seed %d, %d runs per recipe):\n", o.seed, o.checks)
	failed := 0
	if allRecipesPassed(results) {
		fmt.Fprintf(out, "  all %d recipes ok, no violation\n", len(explore.Recipes))
	}
	for _, r := range results {
		if r.passed && !r.flawed && allRecipesPassed(results) {
			continue // said in one line
		}
		switch {
		case r.passed && r.flawed:
			fmt.Fprintf(out, "  %-46s flaw caught: %s\n", r.what, strings.TrimPrefix(r.detail, "caught "))
			if r.shrunk != "" {
				fmt.Fprintf(out, "  %-46s shrunk to %s\n", "", r.shrunk)
			}
		case r.passed:
			fmt.Fprintf(out, "  %-46s ok, no violation\n", r.what)
		default:
			failed++
			what := "VIOLATION"
			if r.flawed {
				what = "flaw NOT caught"
			}
			fmt.Fprintf(out, "  %-46s %s:\n", r.what, what)
			for _, l := range r.report {
				fmt.Fprintf(out, "      %s\n", l)
			}
		}
	}
	flawed := ""
	if o.flawed {
		flawed = " -flawed"
	}
	fmt.Fprintf(out, "\n  Replay this exploration: %s explore -seed %d -checks %d%s\n", self(), o.seed, o.checks, flawed)
	if !o.flawed {
		fmt.Fprintf(out, "  See it catch broken recipes: %s explore -flawed\n", self())
	}
	if failed > 0 {
		return fmt.Errorf("%d machine(s) of the fault exploration failed; replay with -seed %d", failed, o.seed)
	}
	return nil
}

// allRecipesPassed reports whether every recipe (flaws aside) passed.
func allRecipesPassed(results []*exploreResult) bool {
	for _, r := range results {
		if !r.flawed && !r.passed {
			return false
		}
	}
	return true
}

// coverageRows picks the coverage table out of a machine's logs: its
// lines are marked "coverage| ".
func coverageRows(logs []string) []string {
	var rows []string
	for _, l := range logs {
		for _, line := range strings.Split(l, "\n") {
			if _, row, ok := strings.Cut(line, "coverage| "); ok {
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// lines splits texts into lines, keeping at most max of them.
func lines(texts []string, max int) []string {
	var out []string
	for _, t := range texts {
		out = append(out, strings.Split(strings.TrimRight(t, "\n"), "\n")...)
	}
	if len(out) > max {
		out = append(out[:max], fmt.Sprintf("... (%d more lines; run with -v for all)", len(out)-max))
	}
	return out
}
