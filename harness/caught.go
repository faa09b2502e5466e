package harness

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Caught is what exploring a machine that is expected to fail found.
type Caught struct {
	// Caught reports whether rapid found a failure; AsWanted, whether it
	// broke one of the invariants wanted.
	Caught, AsWanted bool
	// Seed is rapid's seed that reproduces the failure (-rapid.seed).
	Seed uint64
	// Report is rapid's report of the failure.
	Report string
	// Schedule is the shrunk schedule: the actions of the minimal failing
	// run, in order.
	Schedule []string
	// ShrinkChecks counts the checks run from the failure kept to the end
	// of its shrinking (at most Machine.ShrinkBudget, and one more when
	// its last check failed: rapid runs such a check twice); see
	// CatchOptions.Shrinks.
	ShrinkChecks int
	// Logs is everything rapid logged, the minimal failing run's
	// violations and trace included.
	Logs []string
}

// CatchOptions tune Catch and ExpectCaught. The zero value is the
// default.
type CatchOptions struct {
	// Checks is the number of checks to try (default: -rapid.checks).
	Checks int
	// Seed is rapid's seed (default: -rapid.seed, itself 0: random).
	Seed uint64
	// Echo, if set, receives rapid's logs as they come.
	Echo io.Writer
	// Concurrent: Catch sets no flag of rapid's (it leaves Checks and
	// Seed to -rapid.checks and -rapid.seed as they are), so that
	// catches of machines with Machine.Parallel may run at once, in
	// parallel tests. The caller sets -rapid.nofailfile (a fail file
	// would replay in the next run) and -rapid.shrinktime (to ShrinkCap,
	// so that the shrinking is bounded by Machine.ShrinkBudget alone)
	// before, and no flag while they run. ExpectCaughtWith's replays of a
	// concurrent catch run beside the others too.
	Concurrent bool
	// Shrinks is how many failures Catch shrinks, keeping the one whose
	// shrunk schedule is shortest (the first of the shortest): the first
	// failure rapid finds, then up to Shrinks-1 more, each found from a
	// seed made from the first failure's seed, so that the result is
	// still a function of the seed. rapid's shrinker stops in a local
	// minimum that depends on the failure it starts from; the shortest of
	// a few is short far more often than one. 0 means DefaultShrinks; a
	// Concurrent catch, which cannot set rapid's seed, shrinks one.
	Shrinks int
}

// DefaultShrinks is how many failures Catch and ExpectCaught shrink
// unless CatchOptions.Shrinks says otherwise.
const DefaultShrinks = 3

// ExpectCaught explores m, a machine of code with a planted bug, and
// passes only if a check breaks one of the invariants named in want (a
// liveness failure is "liveness"). It then replays the failure twice from
// its seed and fails unless both replays give the same trace, byte for
// byte, and logs the shrunk schedule and the minimal failing run. It
// writes no fail file and reads none, so it behaves the same in any
// package, however often it runs.
//
// Every failure that breaks a wanted invariant counts as the same failure
// while rapid shrinks, whatever else it breaks and whatever its details
// say, so the shrunk schedule is the smallest that breaks a wanted
// invariant. It shrinks DefaultShrinks failures and keeps the shortest
// (see CatchOptions.Shrinks). Each check runs in a synctest bubble of its own: do not wrap
// it in rapid.SyncTest or synctest.Test.
func ExpectCaught[P any](t *testing.T, m Machine[P], want ...string) Caught {
	t.Helper()
	return ExpectCaughtWith(t, m, CatchOptions{}, want...)
}

// ExpectCaughtWith is ExpectCaught with the options of Catch: a suite of
// many planted bugs may shrink one failure each (Shrinks: 1) to save
// time.
func ExpectCaughtWith[P any](t *testing.T, m Machine[P], o CatchOptions, want ...string) Caught {
	t.Helper()
	c := Catch(t, m, o, want...)
	switch {
	case !c.Caught:
		t.Fatalf("not caught: no check broke %s", strings.Join(want, " or "))
	case !c.AsWanted:
		t.Fatalf("caught, but not as %s:\n%s\n%s", strings.Join(want, " or "), c.Report, strings.Join(c.Logs, "\n"))
	}
	if o.Concurrent {
		replayConcurrently(t, m, c.Seed)
	} else {
		Replay(t, m, c.Seed)
	}
	t.Logf("caught with -rapid.seed=%d: shrunk in %d checks to a schedule of %d actions: %s", c.Seed, c.ShrinkChecks, len(c.Schedule), strings.Join(c.Schedule, ", "))
	t.Logf("minimal failing run:\n%s", strings.Join(c.Logs, "\n"))
	return c
}

// caughtPrefix starts the message of every failure Catch wants.
const caughtPrefix = "VIOLATION (wanted): "

// Catch explores m as ExpectCaught does and reports what it found,
// without failing t (t only hosts the synctest bubbles).
func Catch[P any](t *testing.T, m Machine[P], o CatchOptions, want ...string) Caught {
	t.Helper()
	best := catchOne(t, m, o, want...)
	n := o.Shrinks
	if n <= 0 {
		n = DefaultShrinks
	}
	if o.Concurrent {
		n = 1
	}
	first := best.Seed
	for k := 1; k < n && best.AsWanted; k++ {
		o.Seed = ShrinkSeed(first, k)
		if c := catchOne(t, m, o, want...); c.AsWanted && len(c.Schedule) < len(best.Schedule) {
			best = c
		}
	}
	return best
}

// ShrinkSeed returns the seed from which the k-th further exploration of a
// failure starts, looking for another failure that shrinks further (Catch
// shrinks three; explore's CheckFrom looks again after a long shrink),
// made from the first failure's seed (SplitMix64's mix; never 0, which
// would let rapid pick a random one).
func ShrinkSeed(first uint64, k int) uint64 {
	z := first + uint64(k)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return (z ^ z>>31) | 1
}

// catchOne is one exploration of Catch, and the shrinking of the failure
// it finds.
func catchOne[P any](t *testing.T, m Machine[P], o CatchOptions, want ...string) Caught {
	t.Helper()
	r := newRunner(t, m)
	if !o.Concurrent {
		defer setFlags(t, map[string]string{"rapid.nofailfile": "true", "rapid.failfile": ""})()
		defer shrinkByBudget(t)()
		if o.Checks > 0 {
			defer setFlags(t, map[string]string{"rapid.checks": strconv.Itoa(o.Checks)})()
		}
		if o.Seed != 0 {
			defer setFlags(t, map[string]string{"rapid.seed": strconv.FormatUint(o.Seed, 10)})()
		}
	}
	wanted := wantedMessage(want)
	c := &recorder{name: t.Name(), echo: o.Echo}
	prop := r.prop(wanted)
	if o.Concurrent {
		var release func()
		prop, release = holdFlags(prop, nil)
		defer release()
	}
	rapid.Check(c, prop)
	e := r.explored(c)
	res := Caught{Caught: c.Failed(), Seed: e.Seed, Report: e.Report, Schedule: e.Schedule, ShrinkChecks: e.ShrinkChecks, Logs: e.Logs}
	res.AsWanted = res.Caught && strings.Contains(res.Report, caughtPrefix)
	return res
}

// wantedMessage returns the normalization of Catch: a failure breaking
// one of want (or, for a failure of one's own, whose message matches one
// of them as a regular expression) gets one message; any other keeps its
// invariant names, its digits masked.
func wantedMessage(want []string) func(string) string {
	digits := regexp.MustCompile(`[0-9]+`)
	caught := caughtPrefix + strings.Join(want, " or ")
	return func(msg string) string {
		if rest, ok := strings.CutPrefix(msg, "VIOLATION: "); ok { // the harness's: invariant names
			for _, n := range strings.Split(rest, ", ") {
				if slices.Contains(want, n) {
					return caught
				}
			}
			return msg
		}
		for _, w := range want { // one's own failure: want as a regular expression
			if re, err := regexp.Compile(w); err == nil && re.MatchString(msg) {
				return caught
			}
		}
		return digits.ReplaceAllString(msg, "#")
	}
}

var reproduceSeed = regexp.MustCompile(`-rapid\.seed=(\d+)`)

// Replay runs the check of rapid's seed twice, without shrinking, and
// fails t unless both fail with the same trace, byte for byte: a failure
// that does not replay is a bug of the harness (or of a machine that lets
// something outside the seed decide). It returns the trace.
func Replay[P any](t *testing.T, m Machine[P], seed uint64) string {
	t.Helper()
	return replayTwice(t, seed, func() ([]string, bool) {
		r := newRunner(t, m)
		var got []string
		r.sink = func(trace string) { got = append(got, trace) }
		undo := setFlags(t, map[string]string{
			"rapid.checks": "1", "rapid.seed": strconv.FormatUint(seed, 10), "rapid.shrinktime": "1ms",
			"rapid.nofailfile": "true", "rapid.failfile": "",
		})
		c := &recorder{name: t.Name()}
		failed := false
		rapid.Check(c, r.replayProperty(&failed))
		undo()
		return got, failed || c.Failed()
	})
}

// replayTwice runs replay, one replay of seed, twice, and fails t unless
// both failed with the same first trace (the check the seed reproduces),
// which it returns.
func replayTwice(t *testing.T, seed uint64, replay func() (traces []string, failed bool)) string {
	t.Helper()
	var traces [2]string
	for i := range traces {
		got, failed := replay()
		switch {
		case !failed:
			t.Fatalf("replay %d of seed %d did not fail", i+1, seed)
		case len(got) == 0:
			t.Fatalf("replay %d of seed %d gave no trace", i+1, seed)
		}
		traces[i] = got[0]
	}
	if traces[0] != traces[1] {
		t.Fatalf("two replays of seed %d gave different traces:\n%s\n---\n%s", seed, traces[0], traces[1])
	}
	t.Logf("replayed twice from seed %d: the same trace (%d lines), byte for byte", seed, strings.Count(traces[0], "\n"))
	return traces[0]
}

// replayProperty is property for a replay, which wants the first check's
// trace and whether it failed, and nothing more: the check's failure is
// recorded in failed and not raised to rapid (its violations are a
// replayFailure panic, not a t.Fatalf), which then neither runs the
// check again to reproduce the failure nor tries to shrink it (a replay's
// shrink tries, each a check that passes at once, were a seventh of the
// time of a flaw's test). rapid's own panics go on to rapid.
func (r *runner[P]) replayProperty(failed *bool) func(*rapid.T) {
	r.replaying = true
	return func(t *rapid.T) {
		defer func() {
			if p := recover(); p != nil {
				if fmt.Sprintf("%T", p) == "rapid.invalidData" {
					panic(p)
				}
				*failed = true
			}
		}()
		r.property(t)
	}
}

// replayFailure is how a replay's check fails: a panic that
// replayProperty takes, where rapid's t.Fatalf would leave the check failed
// in rapid's eyes too.
type replayFailure string

// ShrinkCap bounds, in wall-clock time, the shrinking of a failure whose
// checks Machine.ShrinkBudget bounds (the -rapid.shrinktime that Check
// and Catch set). It is a safety net, not a budget: a shrink that reaches
// it depends on the machine's speed. An hour, far above what the budget
// takes: a shrink of the README's example (at most 20,000 checks) took
// about 5 minutes on two cores shared with a dozen busy processes, within
// reach of a cap of 10 minutes on a busier machine.
const ShrinkCap = time.Hour

// shrinkByBudget lets rapid shrink a failure until no smaller schedule
// fails the same way or Machine.ShrinkBudget checks have run, instead of
// for -rapid.shrinktime of wall-clock time (30s by default), unless the
// user chose a shrink time (userSetFlag): the shrunk schedule is then a
// function of the seed alone, the same on an idle machine and a loaded
// one, and the same whatever ran before in the process. It returns the
// undo.
func shrinkByBudget(t *testing.T) (undo func()) {
	t.Helper()
	if userSetFlag("rapid.shrinktime", "RAPID_SHRINKTIME") {
		return func() {}
	}
	return setFlags(t, map[string]string{"rapid.shrinktime": ShrinkCap.String()})
}

// userSetFlag reports whether the user chose the value of rapid's flag
// name: the environment variable env (rapid's own way of setting it) is
// set, or the flag's value is not rapid's default. It looks at the value,
// not at whether flag.Set was called: the harness's own undo calls
// flag.Set to put the default back, and flag.Visit would take that for
// the user's choice ever after (every Catch after the first in a process
// then shrank for rapid's 30s of wall-clock time). A command line that
// sets the flag to rapid's default leaves the choice to the harness.
func userSetFlag(name, env string) bool {
	if _, ok := os.LookupEnv(env); ok {
		return true
	}
	f := flag.Lookup(name)
	return f != nil && f.Value.String() != f.DefValue
}

// setFlags sets rapid's flags for a run and returns their undo.
func setFlags(t *testing.T, values map[string]string) (undo func()) {
	t.Helper()
	old := map[string]string{}
	for name, v := range values {
		f := flag.Lookup(name)
		if f == nil {
			t.Fatalf("harness: no flag %s", name)
		}
		old[name] = f.Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatalf("harness: -%s=%s: %v", name, v, err)
		}
	}
	return func() {
		for name, v := range old {
			_ = flag.Set(name, v)
		}
	}
}

// Recorder is a rapid.TB that records what rapid says instead of failing
// the test, so that a test can tell what a run of rapid found (that a
// property fails, and how). Run a property under it with rapid.Check and a
// property from InBubbles.
type Recorder = recorder

// NewRecorder returns a Recorder named name (rapid names fail files after
// it); with echo set, it writes what rapid logs there as it comes.
func NewRecorder(name string, echo io.Writer) *Recorder { return &recorder{name: name, echo: echo} }

// Logs returns what rapid logged.
func (c *recorder) Logs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.logs...)
}

// Errors returns what rapid reported as errors: its report of a failure.
func (c *recorder) Errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs...)
}

// recorder is Recorder.
type recorder struct {
	name string
	echo io.Writer

	mu     sync.Mutex
	logs   []string
	errs   []string
	failed bool
}

func (c *recorder) Helper()      {}
func (c *recorder) Name() string { return c.name }
func (c *recorder) Logf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	line := fmt.Sprintf(format, args...)
	c.logs = append(c.logs, line)
	if c.echo != nil {
		fmt.Fprintln(c.echo, line)
	}
}
func (c *recorder) Log(args ...any)                  { c.Logf("%s", fmt.Sprint(args...)) }
func (c *recorder) Skipf(format string, args ...any) { c.Errorf("skip: "+format, args...) }
func (c *recorder) Skip(args ...any)                 { c.Errorf("skip: %s", fmt.Sprint(args...)) }
func (c *recorder) SkipNow()                         { c.Errorf("skip") }
func (c *recorder) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
	c.failed = true
}
func (c *recorder) Error(args ...any)                 { c.Errorf("%s", fmt.Sprint(args...)) }
func (c *recorder) Fatalf(format string, args ...any) { c.Errorf(format, args...) }
func (c *recorder) Fatal(args ...any)                 { c.Errorf("%s", fmt.Sprint(args...)) }
func (c *recorder) FailNow()                          { c.Fail() }
func (c *recorder) Fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
}
func (c *recorder) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}
