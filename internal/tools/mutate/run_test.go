package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func fixtureMutant(t *testing.T, id string) *Mutant {
	t.Helper()
	for _, m := range fixtureMutants(t) {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("no mutant %s in the fixture", id)
	return nil
}

func fixtureKiller(t *testing.T, timeout time.Duration) *killer {
	t.Helper()
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	root, err := filepath.Abs(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return &killer{root: root, pkg: "./tinytest", work: t.TempDir(), timeout: timeout}
}

// The overlay puts the mutant in the build without touching the source:
// the fixture's test kills a mutant it checks, misses one it does not, and
// a mutant that does not compile is told apart.
func TestOverlayKillsSurvivesAndFailsToBuild(t *testing.T) {
	k := fixtureKiller(t, time.Minute)
	src, err := os.ReadFile(filepath.Join(fixture, "tiny", "tiny.go"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]Status{
		"tiny/tiny.go:27:7:cond-boundary": Survived,     // Clamp(5, 3) is 3 either way
		"tiny/tiny.go:13:13:return-nil":   Killed,       // TestClamp wants ErrNegative
		"tiny/tiny.go:37:12:int-dec":      Uncompilable, // table[1] out of range of [1]int
	} {
		r, err := k.mutant(context.Background(), fixtureMutant(t, id), "^TestClamp$")
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if r.Status != want {
			t.Errorf("%s: %s, want %s (%s)", id, r.Status, want, r.Failure)
		}
		if want == Killed && !strings.Contains(r.Failure, "ErrNegative") {
			t.Errorf("%s: failure %q does not say why", id, r.Failure)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(fixture, "tiny", "tiny.go")); !bytes.Equal(after, src) {
		t.Error("the fixture's source changed")
	}
	if entries, _ := os.ReadDir(k.work); len(entries) != 0 {
		t.Errorf("scratch files left behind: %v", entries)
	}
}

// A run may take -timeout, or -timeout-factor times its pattern's
// baseline if that is longer: a survivor runs as long as the baseline,
// which load stretches past a fixed limit (seed 5's three "timeouts"
// were survivors whose run of every test took over 60 s).
func TestKillerLimit(t *testing.T) {
	k := &killer{timeout: time.Minute, factor: 2.5, baseline: map[string]float64{"^TestA": 47.4, "^TestB": 6.1}}
	for pat, want := range map[string]time.Duration{"^TestA": 119 * time.Second, "^TestB": time.Minute, "^TestC": time.Minute} {
		if got := k.limit(pat); got != want {
			t.Errorf("limit(%q) = %v, want %v", pat, got, want)
		}
	}
	// The baseline's own runs, which measure the machine, may take up to
	// baselineLimit (seed 5's re-run: the baseline of every machine, one
	// at a time, took over 60 s under load 17).
	k.baseline, k.measuring = nil, true
	if got := k.limit("^TestA"); got != baselineLimit {
		t.Errorf("limit of a baseline run = %v, want %v", got, baselineLimit)
	}
	k.measuring = false
	k.factor = 0
	if got := k.limit("^TestA"); got != time.Minute {
		t.Errorf("limit without a factor = %v, want the timeout", got)
	}
}

func TestKillerTimeout(t *testing.T) {
	k := fixtureKiller(t, time.Second)
	r, err := k.mutant(context.Background(), fixtureMutant(t, "tiny/tiny.go:26:2:remove-call"), "^TestHang$")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Timeout || !strings.HasPrefix(r.Failure, "timed out in TestHang") {
		t.Errorf("status %s (%q), want timeout in TestHang", r.Status, r.Failure)
	}
}

// The whole command on the fixture: the baseline, an equivalent mutant
// left out of the score, the text and JSON reports.
func TestRunReports(t *testing.T) {
	if testing.Short() {
		t.Skip("builds test binaries")
	}
	dir := t.TempDir()
	eq := filepath.Join(dir, "eq.txt")
	if err := os.WriteFile(eq, []byte("tiny/tiny.go:27:7:cond-boundary n == max returns max, which is n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "r.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{
		"-root", fixture, "-killer-flags", "", "-killer", "./tinytest", "-map", "*=^TestClamp$", "-equivalent", eq, "-json", jsonPath,
		"-only", "tiny/tiny.go:27:7:cond-boundary,tiny/tiny.go:13:13:return-nil,tiny/tiny.go:26:2:remove-call,tiny/tiny.go:37:12:int-dec",
		"./...",
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	var rep Report
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	want := Counts{Total: 4, Killed: 1, Survived: 1, Uncompilable: 1, Equivalent: 1, Score: 50, Fast: 1, FastScore: 50}
	if rep.Summary != want {
		t.Errorf("summary %+v, want %+v", rep.Summary, want)
	}
	if rep.Generated != 25 || len(rep.Baseline) != 1 || rep.KillTime.N != 1 {
		t.Errorf("generated %d, baseline %v, kill times %d", rep.Generated, rep.Baseline, rep.KillTime.N)
	}
	rows := map[string]string{}
	for l := range strings.Lines(stdout.String()) {
		if f := strings.Fields(l); len(f) > 1 {
			rows[f[0]] = f[1]
		}
	}
	for id, status := range map[string]string{"tiny.go:13:13:return-nil": "killed", "tiny.go:26:2:remove-call": "survived", "tiny.go:27:7:cond-boundary": "equivalent", "tiny.go:37:12:int-dec": "uncompilable"} {
		if rows[id] != status {
			t.Errorf("report says %s is %q, want %q:\n%s", id, rows[id], status, stdout.String())
		}
	}
	if !strings.Contains(stdout.String(), "n == max returns max") || !strings.Contains(stdout.String(), "50.0%") {
		t.Errorf("report lacks the equivalent's reason or the score:\n%s", stdout.String())
	}

	// Resumed: nothing is run again, and the results are the same.
	stdout.Reset()
	stderr.Reset()
	resumed := filepath.Join(dir, "resumed.json")
	if err := run([]string{"-root", fixture, "-killer-flags", "", "-killer", "./tinytest", "-map", "*=^TestClamp$", "-equivalent", eq, "-json", resumed, "-baseline=false",
		"-resume", jsonPath, "-timeout", "1ns", "-only", "tiny/tiny.go:13:13:return-nil,tiny/tiny.go:26:2:remove-call", "./..."}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if again, err := readReport(resumed); err != nil || again.Summary.Killed != 1 || again.Summary.Survived != 1 {
		t.Errorf("resumed: %+v, %v\n%s", again.Summary, err, stderr.String())
	}

	// Reviewed after the run: the survivor is marked equivalent too.
	if err := os.WriteFile(eq, []byte("tiny/tiny.go:26:2:remove-call note does nothing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if err := run([]string{"-root", fixture, "-equivalent", eq, "-rescore", jsonPath, "-json", jsonPath}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	rep = Report{}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	want = Counts{Total: 4, Killed: 1, Uncompilable: 1, Equivalent: 1, NotRun: 1, Score: 100, Fast: 1, FastScore: 100}
	if rep.Summary != want {
		t.Errorf("rescored summary %+v, want %+v", rep.Summary, want)
	}
	if !strings.Contains(stdout.String(), "note does nothing") {
		t.Errorf("rescored report lacks the new reason:\n%s", stdout.String())
	}
}

// rapidFailure is what the property suite prints when rapid shrinks a
// failure (from a real run).
const rapidFailure = `--- FAIL: TestQueueFIFO (0.44s)
    recipes_test.go:43: [rapid] failed after 12 tests: VIOLATION: garbage delivered
        To reproduce, specify -run="TestQueueFIFO" -rapid.seed=3680299705147649161
        Failed test output:
    harness_test.go:123: [rapid] draw seed: 0x0
    harness_test.go:315: [rapid] draw action: "Poll"
    schedule_test.go:137: [rapid] draw client: 0
    harness_test.go:315: [rapid] draw action: "Settle"
    violations_test.go:48: VIOLATION: garbage delivered: p1 received ""
    violations_test.go:60: VIOLATION: garbage delivered
--- FAIL: TestQueueOther (0.44s)
    harness_test.go:315: [rapid] draw action: "Poll"
FAIL
`

// harnessFailure is what the property suite prints when a machine on
// package harness fails: the harness logs the shrunk schedule itself,
// before rapid's report.
const harnessFailure = `--- FAIL: TestQueueFIFO (3.21s)
    recipes_test.go:30: QueueFIFO: 12 checks: 140 actions, 9000 simulator steps, 5m0s of virtual time
    recipes_test.go:30: minimal failing run (3 actions: Offer p0, Take p1, Advance):
        VIOLATION: lost items: p0's item is gone
    recipes_test.go:30: [rapid] failed after 11 tests: VIOLATION: lost items
        To reproduce, specify -run="TestQueueFIFO" -rapid.seed=3680299705147649161
FAIL
`

// checkFromFailure is what explore's Machine.CheckFrom prints: rapid's
// report, then the shrunk schedule.
const checkFromFailure = `--- FAIL: TestBarrierDouble (9.80s)
    recipes_test.go:43: [rapid] failed after 4 tests: VIOLATION: liveness
        To reproduce, specify -run="TestBarrierDouble" -rapid.seed=77
        shrunk schedule (2 actions): Enter p0, Advance
FAIL
`

func TestParseFailure(t *testing.T) {
	if checks, shrunk, failure := parseFailure(harnessFailure); checks != 11 || shrunk != 3 || failure != "VIOLATION: lost items" {
		t.Errorf("parseFailure of the harness's report = %d, %d, %q; want 11, 3, the violation", checks, shrunk, failure)
	}
	if checks, shrunk, failure := parseFailure(checkFromFailure); checks != 4 || shrunk != 2 || failure != "VIOLATION: liveness" {
		t.Errorf("parseFailure of CheckFrom's report = %d, %d, %q; want 4, 2, the violation", checks, shrunk, failure)
	}
	checks, shrunk, failure := parseFailure(rapidFailure)
	if checks != 12 || shrunk != 2 || failure != "VIOLATION: garbage delivered" {
		t.Errorf("parseFailure = %d, %d, %q; want 12, 2, the violation", checks, shrunk, failure)
	}
	checks, shrunk, failure = parseFailure("panic: runtime error: index out of range [-1]\n\ngoroutine 1\n")
	if checks != -1 || shrunk != -1 || failure != "panic: runtime error: index out of range [-1]" {
		t.Errorf("a panic: %d, %d, %q", checks, shrunk, failure)
	}
}

// replayFailure is what the property suite prints when a committed fail
// file fails under a mutant: no check ran, and rapid names the file alone.
const replayFailure = `--- FAIL: TestLockMutex (0.04s)
    recipes_test.go:24: [rapid] failed after 0 tests: VIOLATION: orphan
        To reproduce, specify -run="TestLockMutex" -rapid.failfile="testdata/rapid/TestLockMutex/TestLockMutex-20261127051154-1952.fail"
        Failed test output:
        shrunk schedule (23 actions): Acquire p0, Advance
FAIL
`

// A kill by a fail file's replay is told apart from one by a check of
// the run (whose report names the file rapid wrote and the seed).
func TestReplayedFile(t *testing.T) {
	if got, want := replayedFile(replayFailure), "testdata/rapid/TestLockMutex/TestLockMutex-20261127051154-1952.fail"; got != want {
		t.Errorf("replayedFile = %q, want %q", got, want)
	}
	written := strings.Replace(checkFromFailure, "-rapid.seed=77", `-rapid.failfile="testdata/rapid/TestBarrierDouble/x.fail" (or -rapid.seed=77)`, 1)
	for _, out := range []string{written, checkFromFailure, rapidFailure, "fatal error: sync: unlock of unlocked mutex\n"} {
		if got := replayedFile(out); got != "" {
			t.Errorf("replayedFile of a check's failure = %q, want none:\n%s", got, out)
		}
	}
	if checks, shrunk, failure := parseFailure(replayFailure); checks != 0 || shrunk != 23 || failure != "VIOLATION: orphan" {
		t.Errorf("parseFailure of a replay = %d, %d, %q", checks, shrunk, failure)
	}
}

// The failing test's own time is its duration less the wait it logged.
func TestOwnTime(t *testing.T) {
	out := "--- PASS: TestBarrier (2.20s)\n--- FAIL: TestElectionSingleNode (27.60s)\n    phases_test.go:119: started after 22.1s waiting for its phase and a worker\n    x.go:1: VIOLATION: y\n"
	if d, ok := ownTime(out); !ok || d != 5500*time.Millisecond {
		t.Errorf("ownTime = %v, %v; want 5.5s", d, ok)
	}
	if d, ok := ownTime(checkFromFailure); ok {
		t.Errorf("ownTime without a logged wait = %v, want none", d)
	}
}

// A killer that crashes (a runtime fatal error, which no recover sees)
// reports the error, not the first line of its output.
func TestParseFatalError(t *testing.T) {
	out := "property_test: seed 20261124, 1000 checks per property\nfatal error: sync: unlock of unlocked mutex\n\ngoroutine 7 [running]:\n"
	if checks, shrunk, failure := parseFailure(out); checks != -1 || shrunk != -1 || failure != "fatal error: sync: unlock of unlocked mutex" {
		t.Errorf("parseFailure of a fatal error = %d, %d, %q", checks, shrunk, failure)
	}
}

// A fast kill is one within 30 s with at most 15 actions (or none); the
// fast score shares the score's denominator.
func TestFastCounts(t *testing.T) {
	rep := &Report{Results: []Result{
		{Mutant: &Mutant{ID: "a"}, Status: Killed, Seconds: 30, Shrunk: 15},
		{Mutant: &Mutant{ID: "b"}, Status: Killed, Seconds: 2, Shrunk: -1},
		{Mutant: &Mutant{ID: "c"}, Status: Killed, Seconds: 30.1, Shrunk: 1},
		{Mutant: &Mutant{ID: "d"}, Status: Killed, Seconds: 0, Shrunk: 16, Replay: "f.fail"},
		{Mutant: &Mutant{ID: "e"}, Status: Survived},
		{Mutant: &Mutant{ID: "f"}, Status: Equivalent},
	}}
	rep.summarize()
	if c := rep.Summary; c.Killed != 4 || c.Fast != 2 || c.Score != 80 || c.FastScore != 40 {
		t.Errorf("summary %+v, want 4 killed, 2 fast, 80%% and 40%%", c)
	}
	var b strings.Builder
	rep.writeText(&b)
	if !strings.Contains(b.String(), "1 kills replayed a committed fail file") || !strings.Contains(b.String(), "40.0%") {
		t.Errorf("report:\n%s", b.String())
	}
}

func TestDistribution(t *testing.T) {
	d := distribution([]float64{12, 1, 5, 40, 7, 3, 70, 2, 9, 30}, timeBins)
	if d.N != 10 || d.Min != 1 || d.Median != 9 || d.P90 != 40 || d.Max != 70 {
		t.Errorf("quantiles %+v", d)
	}
	// Bins are (.., 5], (5, 10], (10, 30], (30, 60], above.
	if want := []int{4, 2, 2, 1, 1}; !slices.Equal(d.Counts, want) {
		t.Errorf("counts %v, want %v", d.Counts, want)
	}
	if s := d.format("%.0f", "s"); !strings.Contains(s, "0-5s: 4,") || !strings.Contains(s, ">60s: 1") {
		t.Errorf("format: %s", s)
	}
}

func TestStuckTest(t *testing.T) {
	out := "panic: test timed out after 1m0s\n\trunning tests:\n\t\tTestQueueFIFO (1m0s)\n\ngoroutine 7 [running]:\n" +
		"github.com/zksim/zksim/recipes/queue.(*core).list(0x203e904d6de0)\n\t/work/wt/x/recipes/queue/core.go:38 +0xe7\n" +
		"\t/work/wt/x/recipes/queue/core.go:134 +0x35\n"
	if got, want := stuckTest(out, "recipes/queue/core.go"), "timed out in TestQueueFIFO (1m0s), stuck at recipes/queue/core.go:38"; got != want {
		t.Errorf("stuckTest = %q, want %q", got, want)
	}
	if got := stuckTest("panic: test timed out after 1m0s\n", "a.go"); got != "" {
		t.Errorf("stuckTest with nothing to say = %q", got)
	}
}
