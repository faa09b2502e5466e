package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// recipeTests are the property tests of the built-in recipes (package
// property_test), with what each explores.
var recipeTests = []struct{ test, what string }{
	{"TestLockMutex", "lock (exclusive)"},
	{"TestLockRWMutex", "read-write lock"},
	{"TestLockSemaphore", "semaphore"},
	{"TestElection", "leader election"},
	{"TestElectionSingleNode", "election, single-node variant"},
	{"TestQueueFIFO", "FIFO queue"},
	{"TestQueuePriority", "priority queue"},
	{"TestQueueLocking", "locking queue"},
	{"TestBarrier", "barrier"},
	{"TestBarrierDouble", "double barrier"},
	{"TestBarrierStart", "start barrier"},
}

// flawedTests are the deliberately broken recipes of property_test: each
// passes when the exploration catches its flaw and shrinks it.
const flawedTests = "TestFlawed"

// exploreResult is what one property test did.
type exploreResult struct {
	test, what string
	passed     bool
	ran        bool
	skipped    bool
	checks     string // "[rapid] OK, passed 100 tests"
	caught     string // for a flawed recipe: the violation found
	shrunk     string // for a flawed recipe: the shrunk schedule
	elapsed    float64
	output     []string // the test's output, kept for a failure
	coverage   []string // the coverage table the test printed
}

var (
	rapidOK     = regexp.MustCompile(`\[rapid\] OK, passed (\d+) tests`)
	rapidCaught = regexp.MustCompile(`caught: \[rapid\] failed after (\d+) tests: (.*)`)
	shrunkLine  = regexp.MustCompile(`shrunk schedule \((\d+) actions?\): (.*)`)
)

// runExplore runs the property tests of the recipes with the given number
// of checks and seed, then, with flawed, the tests of the broken recipes
// (with the seed and their own number of checks: they stop at the first
// violation), printing a line as each test ends.
func runExplore(ctx context.Context, root string, checks int, seed uint64, flawed bool, log, verbose io.Writer) ([]*exploreResult, error) {
	x := newExploration(log)
	var names []string
	for _, rt := range recipeTests {
		names = append(names, rt.test)
	}
	runs := [][]string{{"-run", "^(" + strings.Join(names, "|") + ")$", fmt.Sprintf("-rapid.checks=%d", checks)}}
	if flawed {
		runs = append(runs, []string{"-run", "^" + flawedTests})
	}
	for i, run := range runs {
		if i == 1 {
			fmt.Fprintf(log, "  the broken recipes (each test passes when the exploration catches the flaw and shrinks it):\n")
		}
		args := []string{"./property_test", "-count=1", "-v", "-timeout=60m", "-rapid.nofailfile"}
		if i == 0 {
			// The broken recipes run with the property tests' own fixed
			// seed, with which each flaw is always caught.
			args = append(args, fmt.Sprintf("-rapid.seed=%d", seed))
		}
		args = append(args, run...)
		other, err := goTest(ctx, root, args, verbose, x.handle)
		if err != nil && !anyFailed(x.order) {
			return x.order, fmt.Errorf("the fault exploration did not run: %v\n%s", err, other)
		}
	}
	return x.order, nil
}

// exploration follows the events of the property tests.
type exploration struct {
	log     io.Writer
	start   time.Time
	results map[string]*exploreResult
	order   []*exploreResult
}

func newExploration(log io.Writer) *exploration {
	x := &exploration{log: log, start: time.Now(), results: map[string]*exploreResult{}}
	for _, rt := range recipeTests {
		r := &exploreResult{test: rt.test, what: rt.what}
		x.results[rt.test] = r
		x.order = append(x.order, r)
	}
	return x
}

// handle takes one event in, and prints a line when a test ends.
func (x *exploration) handle(ev testEvent) {
	if ev.Test == "" {
		return
	}
	top, _, _ := strings.Cut(ev.Test, "/")
	r, ok := x.results[top]
	if !ok {
		if !strings.HasPrefix(top, flawedTests) {
			return
		}
		r = &exploreResult{test: top, what: "flawed: " + flawName(top)}
		x.results[top] = r
		x.order = append(x.order, r)
	}
	switch ev.Action {
	case "output":
		r.output = append(r.output, ev.Output)
		if _, row, ok := strings.Cut(ev.Output, "coverage| "); ok {
			r.coverage = append(r.coverage, strings.TrimRight(row, "\n"))
		}
		if m := rapidOK.FindStringSubmatch(ev.Output); m != nil {
			r.checks = m[1]
		}
		if m := rapidCaught.FindStringSubmatch(ev.Output); m != nil {
			passed, _ := strconv.Atoi(m[1]) // rapid counts the runs that passed before
			r.caught = fmt.Sprintf("%s (found on random run %d)", strings.TrimSpace(m[2]), passed+1)
		}
		if m := shrunkLine.FindStringSubmatch(ev.Output); m != nil {
			if actions := strings.TrimSpace(m[2]); actions != "" {
				r.shrunk = fmt.Sprintf("%s actions: %s", m[1], actions)
			} else {
				r.shrunk = "no random actions (the final liveness phase alone fails)"
			}
		}
	case "pass", "fail", "skip":
		if ev.Test != top {
			return
		}
		r.ran, r.passed, r.skipped, r.elapsed = true, ev.Action == "pass", ev.Action == "skip", ev.Elapsed
		status, detail := "ok", ""
		switch {
		case ev.Action == "skip":
			status = "skipped"
		case !r.passed && strings.HasPrefix(r.test, flawedTests):
			status = "MISSED"
		case !r.passed:
			status = "FAILED"
		}
		if r.checks != "" {
			detail = r.checks + " random runs, no violation"
		}
		if r.caught != "" {
			detail = "caught " + r.caught
		}
		fmt.Fprintf(x.log, "  [%5.1fs] %-46s %-7s %s\n", time.Since(x.start).Seconds(), r.what, status, detail)
		if len(r.coverage) > 0 {
			fmt.Fprintf(x.log, "           coverage: requests by area and op, and the faults they met (a zero is a blind spot):\n")
			for _, row := range r.coverage {
				fmt.Fprintf(x.log, "           %s\n", row)
			}
		}
	}
}

func anyFailed(rs []*exploreResult) bool {
	for _, r := range rs {
		if r.ran && !r.passed && !r.skipped {
			return true
		}
	}
	return false
}

// flawName turns TestFlawedLockOrdersByFullName into "lock orders by full
// name".
func flawName(test string) string {
	s := strings.TrimPrefix(test, flawedTests)
	var b strings.Builder
	lower := false // the previous letter was lower case
	for _, c := range s {
		upper := c >= 'A' && c <= 'Z'
		if upper && lower {
			b.WriteByte(' ')
		}
		lower = !upper
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// failureReport returns the lines of a failed test's output worth showing:
// the violation, the reproduction command and the minimal failing run.
func failureReport(r *exploreResult, max int) []string {
	var lines []string
	for _, o := range r.output {
		for _, l := range strings.Split(strings.TrimRight(o, "\n"), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "=== ") {
				continue
			}
			lines = append(lines, l)
		}
	}
	if len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("    ... (%d more lines; run with -v for all)", len(lines)-max))
	}
	return lines
}
