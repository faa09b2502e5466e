package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

type options struct {
	sizes    string
	sizesSet bool // -n was given
	checks   int
	seed     uint64
	flawed   bool
	write    bool
	herd     bool
	explore  bool
	verbose  bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(serveMain(os.Args[2:]))
	}
	var o options
	flag.StringVar(&o.sizes, "n", "10,100,1000", "numbers of candidates of the herd comparison, comma-separated (the full report: "+fullSizes+")")
	flag.IntVar(&o.checks, "checks", 100, "random runs per recipe in the fault exploration")
	flag.Uint64Var(&o.seed, "seed", 0, "seed of the fault exploration, to replay a run (0: draw one)")
	flag.BoolVar(&o.flawed, "flawed", false, "also explore the deliberately broken recipes, to see each flaw caught and shrunk")
	flag.BoolVar(&o.write, "write", false, "replace the committed herd report in benchmarks/ (herd.md, herd.svg, herd.json); it runs the full sizes, "+fullSizes)
	flag.BoolVar(&o.herd, "herd", true, "run the herd comparison")
	flag.BoolVar(&o.explore, "explore", true, "run the fault exploration")
	flag.BoolVar(&o.verbose, "v", false, "print the output of the tests as it comes")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./cmd/zksim [flags]\n\n"+
			"Runs the herd comparison of the recipes in the deterministic simulator and a fault\n"+
			"exploration of the built-in recipes, on the embedded in-memory ZooKeeper.\n\nflags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	flag.Visit(func(f *flag.Flag) { o.sizesSet = o.sizesSet || f.Name == "n" })
	var err error
	if o, err = checkOptions(o, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "zksim:", err)
		fmt.Fprintln(os.Stderr)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "zksim:", err)
		os.Exit(1)
	}
}

// fullSizes are the sizes of the committed herd report.
const fullSizes = "10,100,1000,10000"

// checkOptions checks the command line (flags o, arguments args) and
// returns the options to run with: -write alone runs the full sizes.
func checkOptions(o options, args []string) (options, error) {
	if len(args) > 0 {
		return o, fmt.Errorf("unexpected argument %q (zksim takes only flags)", args[0])
	}
	if !o.herd && !o.explore {
		return o, errors.New("nothing to do: -herd=false and -explore=false turn off both jobs")
	}
	if err := checkSizes(o.sizes); err != nil {
		return o, err
	}
	if o.checks < 1 {
		return o, errors.New("-checks must be at least 1")
	}
	if o.write {
		if !o.herd {
			return o, errors.New("-write writes the herd report: it needs the herd comparison (-herd)")
		}
		if !sameSizes(o.sizes, fullSizes) {
			if o.sizesSet {
				return o, fmt.Errorf("-write -n %s would replace the committed herd report (N = %s) with a partial one; "+
					"drop -write to get this report in a temporary directory, or drop -n", o.sizes, fullSizes)
			}
			o.sizes = fullSizes
		}
	}
	return o, nil
}

// sameSizes reports whether two -n lists name the same sizes.
func sameSizes(a, b string) bool {
	set := func(s string) map[int]bool {
		m := map[int]bool{}
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(strings.TrimSpace(f))
			m[n] = true
		}
		return m
	}
	x, y := set(a), set(b)
	if len(x) != len(y) {
		return false
	}
	for n := range x {
		if !y[n] {
			return false
		}
	}
	return true
}

// run does the two jobs and prints the summary. It returns an error when a
// job could not run or found a violation.
func run(ctx context.Context, o options, out io.Writer) error {
	o, err := checkOptions(o, nil)
	if err != nil {
		return err
	}
	if o.seed == 0 {
		o.seed = drawSeed()
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	var verbose io.Writer
	if o.verbose {
		verbose = out
	}
	jobs, job := 0, 0
	for _, on := range []bool{o.herd, o.explore} {
		if on {
			jobs++
		}
	}
	step := func() string { job++; return fmt.Sprintf("[%d/%d]", job, jobs) }
	start := time.Now()
	fmt.Fprintf(out, "zksim: the recipes on the embedded in-memory ZooKeeper (module %s)\n", root)

	var (
		rep      herdReport
		herdDir  string
		herdErr  error
		explored []*exploreResult
		expErr   error
	)
	// On a fresh clone compiling is most of the time: compile the tests of
	// both jobs in one go command, which builds what they share once.
	var pkgs []string
	if o.herd {
		pkgs = append(pkgs, "./benchmarks")
	}
	if o.explore {
		pkgs = append(pkgs, "./property_test")
	}
	fmt.Fprintf(out, "\ncompiling the tests (%s) ...", strings.Join(pkgs, " "))
	began := time.Now()
	if err := prebuild(ctx, root, pkgs); err != nil {
		fmt.Fprintln(out)
		return err
	}
	fmt.Fprintf(out, " %.1fs\n", time.Since(began).Seconds())
	if o.herd {
		herdDir = filepath.Join(root, "benchmarks")
		if !o.write {
			herdDir, err = os.MkdirTemp("", "zksim-herd-")
			if err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "\n%s herd comparison: election and lock, N = %s candidates, in the simulator\n", step(), o.sizes)
		fmt.Fprintf(out, "      (one line per variant and N as it finishes; the largest run first)\n")
		rep, herdErr = runHerd(ctx, root, herdDir, o.sizes, out, verbose)
		if herdErr != nil {
			fmt.Fprintf(out, "  herd comparison failed: %v\n", herdErr)
		}
	}
	if o.explore {
		fmt.Fprintf(out, "\n%s fault exploration: %d random runs per recipe, seed %d\n", step(), o.checks, o.seed)
		fmt.Fprintf(out, "      (clients, lost replies, dropped requests, disconnects, session expiry and\n")
		fmt.Fprintf(out, "      process pauses drawn from the seed; invariants checked after every step)\n")
		explored, expErr = runExplore(ctx, root, o.checks, o.seed, o.flawed, out, verbose)
		if expErr != nil {
			fmt.Fprintf(out, "  fault exploration failed: %v\n", expErr)
		}
	}

	fmt.Fprintf(out, "\n================ summary (%s) ================\n", time.Since(start).Round(time.Second))
	if o.herd && herdErr == nil {
		fmt.Fprintf(out, "\nherd effect, mean cost of one leader change (deterministic: the same on every run)\n")
		fmt.Fprintf(out, "cost model: %s\n\n", rep.CostModel)
		printHerdSummary(out, rep)
		fmt.Fprintf(out, "\n  With predecessor watches a change wakes one waiter whatever N is; watching every\n")
		fmt.Fprintf(out, "  candidate (or one leader node) wakes all N, and each of them reads again.\n")
		fmt.Fprintf(out, "  Table and plot: %s, %s\n", filepath.Join(herdDir, "herd.md"), filepath.Join(herdDir, "herd.svg"))
	}
	violations := 0
	if o.explore && expErr == nil {
		fmt.Fprintf(out, "\nfault exploration (seed %d, %d runs per recipe):\n", o.seed, o.checks)
		for _, r := range explored {
			switch {
			case r.skipped:
				fmt.Fprintf(out, "  %-46s skipped\n", r.what)
			case !r.ran:
				fmt.Fprintf(out, "  %-46s did not run\n", r.what)
				violations++
			case r.passed && r.caught != "":
				fmt.Fprintf(out, "  %-46s flaw caught: %s\n", r.what, r.caught)
				if r.shrunk != "" {
					fmt.Fprintf(out, "  %-46s shrunk to %s\n", "", r.shrunk)
				}
			case r.passed:
				fmt.Fprintf(out, "  %-46s ok, no violation\n", r.what)
			case strings.HasPrefix(r.test, flawedTests):
				violations++
				fmt.Fprintf(out, "  %-46s flaw NOT caught (%s):\n", r.what, r.test)
				for _, l := range failureReport(r, 20) {
					fmt.Fprintf(out, "      %s\n", l)
				}
			default:
				violations++
				fmt.Fprintf(out, "  %-46s VIOLATION (%s):\n", r.what, r.test)
				for _, l := range failureReport(r, 60) {
					fmt.Fprintf(out, "      %s\n", l)
				}
			}
		}
		fmt.Fprintf(out, "\n  Replay this exploration: go run ./cmd/zksim -herd=false -seed %d -checks %d%s\n",
			o.seed, o.checks, map[bool]string{true: " -flawed", false: ""}[o.flawed])
		if !o.flawed {
			fmt.Fprintf(out, "  See it catch broken recipes: go run ./cmd/zksim -herd=false -flawed\n")
		}
	}
	fmt.Fprintf(out, "  Bigger runs: -n 10,100,1000,10000 (the full herd report, 2 to 3 minutes), -checks 1000\n")
	switch {
	case herdErr != nil:
		return herdErr
	case expErr != nil:
		return expErr
	case violations > 0:
		return fmt.Errorf("%d test(s) of the fault exploration failed; replay with -seed %d", violations, o.seed)
	}
	return nil
}

// checkSizes validates -n.
func checkSizes(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return fmt.Errorf("-n: bad size %q (want integers >= 2, comma-separated)", f)
		}
	}
	return nil
}

// drawSeed returns a fresh non-zero seed. (math/rand/v2 is seeded at
// random; crypto/rand would double what `go run` compiles on a fresh
// clone, before the command can print anything.)
func drawSeed() uint64 { return max(rand.Uint64()>>1, 1) }
