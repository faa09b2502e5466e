package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Status is how a mutant ended.
type Status string

// The statuses of a mutant.
const (
	Killed       Status = "killed"
	Survived     Status = "survived"
	Timeout      Status = "timeout"
	Uncompilable Status = "uncompilable"
	Equivalent   Status = "equivalent"
	NotRun       Status = "not-run"
)

// Result is what became of one mutant.
type Result struct {
	*Mutant
	Status Status `json:"status"`
	// Run is the comma-free -test.run pattern the killer ran.
	Run string `json:"run,omitempty"`
	// Build is the time to build the killer with the mutant.
	Build float64 `json:"build_s,omitempty"`
	// Seconds is the killer's run time: the time to kill for a killed
	// mutant.
	Seconds float64 `json:"seconds,omitempty"`
	// CPU is the CPU time (user and system) of the killer's run, which
	// other load on the machine inflates less than Seconds.
	CPU float64 `json:"cpu_s,omitempty"`
	// Own is the time the failing test took itself, when it says how long
	// it waited to start (the property suite runs its machines one at a
	// time under -test.parallel=1, after the tests before them): its
	// duration less that wait. Seconds less Own is the time the tests that
	// passed before it took.
	Own float64 `json:"own_s,omitempty"`
	// Limit is the time the killer's run was allowed (see killer.limit).
	Limit float64 `json:"limit_s,omitempty"`
	// Replay is the fail file (as rapid names it) whose replay killed the
	// mutant, before any check ran: Checks is then 0 and Shrunk the length
	// of the file's schedule under the mutant, which no shrinking of this
	// run made.
	Replay string `json:"replay,omitempty"`
	// Checks is how many checks rapid ran before the failure, -1 if it
	// printed none.
	Checks int `json:"checks"`
	// Shrunk is the number of actions in the shrunk failing schedule, -1
	// if rapid printed none.
	Shrunk int `json:"shrunk"`
	// Failure is the first line saying why the killer failed.
	Failure string `json:"failure,omitempty"`
	// Reason is why an equivalent mutant is equivalent.
	Reason string `json:"reason,omitempty"`
}

// killer builds and runs the test binary that tries to kill mutants.
type killer struct {
	root    string // module root
	pkg     string // killer package, e.g. ./property_test
	work    string // scratch directory
	timeout time.Duration
	// factor, with baseline (each -test.run pattern's run time on the
	// original code), raises a run's limit above timeout to factor times
	// the baseline of its pattern: a surviving mutant runs as long as the
	// baseline, and a loaded machine must not turn it into a timeout.
	factor    float64
	baseline  map[string]float64
	measuring bool     // the baseline's runs are under way
	args      []string // extra arguments for the test binary
	outDir    string   // if set, each killer's output is kept here
}

// overlay writes the mutated copy of m's file and the overlay JSON that
// maps the original to it, and returns the overlay file's path.
func (k *killer) overlay(m *Mutant) (string, error) {
	orig := filepath.Join(k.root, m.File)
	src, err := os.ReadFile(orig)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(k.work, "mutant-")
	if err != nil {
		return "", err
	}
	mutated := filepath.Join(dir, filepath.Base(m.File))
	if err := os.WriteFile(mutated, m.apply(src), 0o644); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(orig)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, data, 0o644)
}

// build builds the killer's test binary with the given overlay (none if
// empty) into bin; the error carries the compiler's output.
func (k *killer) build(ctx context.Context, overlay, bin string) error {
	args := []string{"test", "-c", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, k.pkg)...)
	cmd.Dir = k.root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// runOutcome is one run of the killer binary.
type runOutcome struct {
	passed, timedOut bool
	elapsed, cpu     time.Duration
	output           string
}

// baselineLimit is the least time the baseline's own runs may take: they
// measure how long a run takes on the machine as it is, which a loaded
// machine stretches past a mutant's -timeout.
const baselineLimit = 10 * time.Minute

// limit is how long a run of pattern may take: the timeout, or factor
// times the pattern's baseline if that is longer; before the baseline has
// run (k.baseline nil, with a factor), baselineLimit or the timeout.
func (k *killer) limit(pattern string) time.Duration {
	d := k.timeout
	if k.factor > 0 && k.baseline == nil && k.measuring {
		return max(d, baselineLimit)
	}
	if b, ok := k.baseline[pattern]; ok && k.factor > 0 {
		d = max(d, time.Duration(k.factor*b*float64(time.Second)).Round(time.Second))
	}
	return d
}

// run runs the test binary bin with -test.run pattern in the killer's
// package directory, stopping it after its limit.
func (k *killer) run(ctx context.Context, bin, pattern string) (runOutcome, error) {
	// The test binary's own -test.timeout fires first and prints every
	// goroutine's stack, which shows where a mutant hangs; the context is
	// the backstop.
	limit := k.limit(pattern)
	ctx, cancel := context.WithTimeout(ctx, limit+10*time.Second)
	defer cancel()
	args := append([]string{"-test.run", pattern, "-test.count=1", "-test.failfast", "-test.timeout=" + limit.String()}, k.args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(k.root, k.pkg)
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	o := runOutcome{elapsed: time.Since(start), output: out.String()}
	if ps := cmd.ProcessState; ps != nil {
		o.cpu = ps.UserTime() + ps.SystemTime()
	}
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded),
		strings.Contains(o.output, "panic: test timed out after"):
		o.timedOut = true
	case err == nil:
		o.passed = true
	default:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return o, err
		}
	}
	return o, nil
}

// mutant builds the killer with m and runs it with pattern.
func (k *killer) mutant(ctx context.Context, m *Mutant, pattern string) (Result, error) {
	r := Result{Mutant: m, Run: pattern, Checks: -1, Shrunk: -1}
	ov, err := k.overlay(m)
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(filepath.Dir(ov))
	bin := filepath.Join(filepath.Dir(ov), "killer.test")
	start := time.Now()
	if err := k.build(ctx, ov, bin); err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		r.Status = Uncompilable
		r.Failure = firstLine(err.Error())
		return r, nil
	}
	r.Build = round(time.Since(start))
	o, err := k.run(ctx, bin, pattern)
	if err != nil {
		return r, err
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	r.Seconds = round(o.elapsed)
	r.CPU = round(o.cpu)
	r.Limit = round(k.limit(pattern))
	if k.outDir != "" {
		name := strings.NewReplacer("/", "_", ":", "_").Replace(m.ID) + ".txt"
		if err := os.WriteFile(filepath.Join(k.outDir, name), []byte(o.output), 0o644); err != nil {
			return r, err
		}
	}
	switch {
	case o.timedOut:
		r.Status = Timeout
		r.Failure = stuckTest(o.output, m.File)
	case o.passed:
		r.Status = Survived
	default:
		r.Status = Killed
		r.Checks, r.Shrunk, r.Failure = parseFailure(o.output)
		r.Replay = replayedFile(o.output)
		if d, ok := ownTime(o.output); ok {
			r.Own = round(d)
		}
	}
	return r, nil
}

func round(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

var (
	failedAfter = regexp.MustCompile(`\[rapid\] (?:failed|panic) after (\d+) tests: (.*)`)
	drawAction  = regexp.MustCompile(`\[rapid\] draw action: `)
	// minimalRun is how the machines on package harness report the shrunk
	// schedule (explore's CheckFrom, harness's Check); they log no draw.
	minimalRun = regexp.MustCompile(`(?:shrunk schedule|minimal failing run) \((\d+) actions?[:)]`)
	// failFile is the fail file rapid names in its report; "(or
	// -rapid.seed=...)" follows when the failure came from a check of the
	// run, nothing when it came from replaying the file.
	failFile = regexp.MustCompile(`To reproduce, specify -run=\S+ -rapid\.failfile="([^"]+)"( \(or -rapid\.seed=)?`)
)

var (
	failedTest = regexp.MustCompile(`^--- FAIL: \S+ \(([0-9.]+)s\)`)
	waited     = regexp.MustCompile(`started after (\S+) waiting`)
)

// ownTime returns the time the first failed test took itself: its
// duration, from its "--- FAIL" line, less the wait it logged under it
// ("started after 12.5s waiting for its phase and a worker"); false if it
// logged no wait.
func ownTime(out string) (time.Duration, bool) {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		m := failedTest.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		total, err := time.ParseDuration(m[1] + "s")
		if err != nil {
			return 0, false
		}
		for _, l := range lines[i+1:] {
			if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "=== ") {
				break
			}
			if w := waited.FindStringSubmatch(l); w != nil {
				d, err := time.ParseDuration(w[1])
				if err != nil {
					return 0, false
				}
				return max(total-d, 0), true
			}
		}
		return 0, false
	}
	return 0, false
}

// replayedFile returns the fail file whose replay failed the killer, ""
// if the failure came from a check rapid ran (or rapid reported none).
func replayedFile(out string) string {
	m := failFile.FindStringSubmatch(out)
	if m == nil || m[2] != "" {
		return ""
	}
	return m[1]
}

// parseFailure reads a failed test binary's output: the number of checks
// rapid ran before the failure and the length of the shrunk schedule (-1
// each if rapid printed none; the schedule is the harness's "minimal
// failing run", or else the draws of actions rapid logged with its
// report), and the first line saying what failed.
func parseFailure(out string) (checks, shrunk int, failure string) {
	checks, shrunk = -1, -1
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if m := failedAfter.FindStringSubmatch(l); m != nil {
			checks, _ = strconv.Atoi(m[1])
			failure = strings.TrimSpace(m[2])
			// The replay of the minimal failure follows; count its
			// actions up to the next test's output.
			shrunk = 0
			for _, l := range lines[i+1:] {
				if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "=== ") {
					break
				}
				if drawAction.MatchString(l) {
					shrunk++
				}
			}
			if m := minimalRun.FindStringSubmatch(out); m != nil {
				shrunk, _ = strconv.Atoi(m[1])
			}
			return checks, shrunk, failure
		}
	}
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "panic:") || strings.HasPrefix(t, "fatal error:") || strings.Contains(t, "VIOLATION") {
			return checks, shrunk, t
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "--- FAIL") && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			return checks, shrunk, strings.TrimSpace(lines[i+1])
		}
	}
	return checks, shrunk, firstLine(out)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// stuckTest says where a timed-out binary was: the test it was running,
// from the "running tests:" list the testing package prints, and the
// first stack frame in file (the mutated file), from the stacks it dumps.
func stuckTest(out, file string) string {
	var parts []string
	if _, after, ok := strings.Cut(out, "running tests:\n"); ok {
		parts = append(parts, "timed out in "+firstLine(after))
	}
	for l := range strings.Lines(out) {
		if i := strings.Index(l, "/"+file+":"); i >= 0 {
			frame, _, _ := strings.Cut(l[i+1:], " ")
			parts = append(parts, "stuck at "+strings.TrimSpace(frame))
			break
		}
	}
	return strings.Join(parts, ", ")
}
