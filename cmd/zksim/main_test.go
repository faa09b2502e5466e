package main

import (
	"strings"
	"testing"
)

func TestExplorationCondensesTestEvents(t *testing.T) {
	var log strings.Builder
	x := newExploration(&log)
	events := []testEvent{
		{Action: "run", Test: "TestLockMutex"},
		{Action: "output", Test: "TestLockMutex", Output: "    harness_test.go:531: [rapid] OK, passed 100 tests (12m51.9s)\n"},
		{Action: "pass", Test: "TestLockMutex", Elapsed: 1.3},
		{Action: "run", Test: "TestElection"},
		{Action: "output", Test: "TestElection", Output: "    harness_test.go:531: [rapid] failed after 7 tests: VIOLATION: two leaders\n"},
		{Action: "output", Test: "TestElection", Output: "        To reproduce, specify -run=\"TestElection\" -rapid.seed=42\n"},
		{Action: "fail", Test: "TestElection", Elapsed: 0.5},
		{Action: "run", Test: "TestFlawedLockOrdersByFullName"},
		{Action: "output", Test: "TestFlawedLockOrdersByFullName", Output: "    flawed_test.go:28: caught: [rapid] failed after 14 tests: VIOLATION: two holders\n"},
		{Action: "output", Test: "TestFlawedLockOrdersByFullName", Output: "    flawed_test.go:28: shrunk schedule (3 actions): Acquire, Acquire, Advance\n"},
		{Action: "pass", Test: "TestFlawedLockOrdersByFullName", Elapsed: 2.2},
		{Action: "output", Test: "TestSomethingElse", Output: "noise\n"},
	}
	for _, ev := range events {
		x.handle(ev)
	}
	byTest := map[string]*exploreResult{}
	for _, r := range x.order {
		byTest[r.test] = r
	}
	if r := byTest["TestLockMutex"]; !r.ran || !r.passed || r.checks != "100" {
		t.Errorf("TestLockMutex: %+v; want passed with 100 checks", r)
	}
	if r := byTest["TestElection"]; !r.ran || r.passed {
		t.Errorf("TestElection: %+v; want failed", r)
	}
	flawed := byTest["TestFlawedLockOrdersByFullName"]
	if flawed == nil || flawed.what != "flawed: lock orders by full name" ||
		flawed.caught != "VIOLATION: two holders (found on random run 15)" || flawed.shrunk != "3 actions: Acquire, Acquire, Advance" {
		t.Errorf("flawed test: %+v", flawed)
	}
	if _, ok := byTest["TestSomethingElse"]; ok {
		t.Error("a test that is not a recipe test was taken in")
	}
	if r := byTest["TestBarrier"]; r.ran {
		t.Error("TestBarrier ran without an event saying so")
	}
	if !anyFailed(x.order) {
		t.Error("anyFailed: false with TestElection failed")
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("progress lines: %q; want one per finished test", lines)
	}
	for i, want := range []string{"100 random runs, no violation", "FAILED", "caught VIOLATION: two holders"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("progress line %d = %q; want it to contain %q", i, lines[i], want)
		}
	}
	report := strings.Join(failureReport(byTest["TestElection"], 10), "\n")
	if !strings.Contains(report, "-rapid.seed=42") || !strings.Contains(report, "two leaders") {
		t.Errorf("failure report %q lacks the violation or the replay command", report)
	}
}

func TestHerdSummaryHasEveryVariantAndSize(t *testing.T) {
	rep := herdReport{Results: []herdResult{
		{Variant: "election-predecessor", N: 10, Notifications: 1, Reads: 3, ReplyBytes: 704, FailoverNanos: 200e3},
		{Variant: "election-predecessor", N: 1000, Notifications: 1, Reads: 3, ReplyBytes: 56144, FailoverNanos: 200e3},
		{Variant: "election-herd", N: 10, Notifications: 8, Reads: 10, ReplyBytes: 4493, FailoverNanos: 800e3},
		{Variant: "election-herd", N: 1000, Notifications: 998, Reads: 1000, ReplyBytes: 55864253, FailoverNanos: 76433333},
	}}
	var b strings.Builder
	printHerdSummary(&b, rep)
	out := b.String()
	for _, want := range []string{"N=1,000", "election-herd", "998", "55.9 MB", "76.4ms", "200µs"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestFormatting(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{count(1), "1"}, {count(1.5), "1.5"}, {count(998), "998"}, {count(9998.4), "9,998"}, {count(1234567), "1,234,567"},
		{byteSize(704), "704 B"}, {byteSize(5744), "5.7 kB"}, {byteSize(55864253), "55.9 MB"},
		{flawName("TestFlawedHolderWritesWithoutFencing"), "holder writes without fencing"},
		{flawName("TestFlawedLockRetriesCreateWithoutGUID"), "lock retries create without guid"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if err := checkSizes("10, 100,1000"); err != nil {
		t.Errorf("checkSizes: %v", err)
	}
	if err := checkSizes("10,x"); err == nil {
		t.Error("checkSizes accepted 10,x")
	}
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
