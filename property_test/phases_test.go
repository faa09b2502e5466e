package property_test

import (
	"flag"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zksim/zksim/explore"
)

// The flawed recipes and the recipe machines run as parallel tests, in
// two phases: every flaw first, then every recipe machine, each phase on
// -test.parallel workers (GOMAXPROCS by default). rapid reads its settings
// from global flags, and the two kinds want different ones (the flaws'
// steps, seed and shrink time: explore.SetFlawFlags); within a phase every
// test runs with the same flags, so its tests may run at once, each check
// still a function of its seed alone. The testing package's own limit of
// parallel tests is lifted (TestMain): the phases hold tests back instead,
// so that no test waits for a phase while holding one of the workers. Under
// -failfast, a failure stops the tests not yet started.

// phase is a phase of the parallel tests, run in order.
type phase int

const (
	flawPhase phase = iota
	recipePhase
	phases
)

// firstOfPhase are the tests that start before the others of their phase,
// in this order: the longest flaws (most of their time is the shrink's, a
// run of checks one at a time), so that the phase does not end with one
// of them running alone.
var firstOfPhase = []string{
	"TestFlawedHolderWritesWithoutFencing",
	"TestFlawedLockingQueueDeletesBeforeAck",
	"TestFlawedQueueLosesRemove",
	"TestFlawedHolderBlindToExpiry",
}

// scheduler admits the parallel tests, phase by phase.
type scheduler struct {
	mu      sync.Mutex
	cond    *sync.Cond
	workers int
	pending [phases]int      // registered, not finished
	waiting [phases][]string // registered, not started: by rank, then name
	running int
	begun   [phases]bool
	failed  bool
	// undo restores the flags a phase set as it began.
	undo [phases]func()
}

var sched = newScheduler()

func newScheduler() *scheduler {
	s := &scheduler{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// liftParallelLimit makes the scheduler's workers -test.parallel's value and
// lifts the testing package's own limit. Call it in TestMain, before the
// tests run.
func liftParallelLimit() {
	f := flag.Lookup("test.parallel")
	n, err := strconv.Atoi(f.Value.String())
	if err != nil || n < 1 {
		n = 1
	}
	sched.workers = n
	if err := flag.Set("test.parallel", strconv.Itoa(math.MaxInt32)); err != nil {
		panic(err)
	}
}

// inPhase makes t a parallel test of phase p: it returns once every test
// of the phases before p has ended and a worker is free.
func inPhase(t *testing.T, p phase) {
	t.Helper()
	sched.register(t.Name(), p)
	t.Parallel()
	sched.start(t, p)
}

func (s *scheduler) register(name string, p phase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[p]++
	s.waiting[p] = append(s.waiting[p], name)
	slices.SortStableFunc(s.waiting[p], func(a, b string) int { return rank(a) - rank(b) })
}

// rank orders the tests of a phase: firstOfPhase's, then the others in
// the order they registered.
func rank(name string) int {
	if i := slices.Index(firstOfPhase, name); i >= 0 {
		return i
	}
	return len(firstOfPhase)
}

// start waits until t may run: the phases before p are over, t is the
// next of p's tests, and a worker is free.
func (s *scheduler) start(t *testing.T, p phase) {
	t.Helper()
	begin := time.Now()
	s.mu.Lock()
	for !s.ready(t.Name(), p) {
		s.cond.Wait()
	}
	// go test's time of a parallel test counts from here: the wait too.
	t.Logf("started after %v waiting for its phase and a worker", time.Since(begin).Round(time.Millisecond))
	s.waiting[p] = s.waiting[p][1:]
	s.running++
	s.cond.Broadcast() // the next of the phase may be ready too
	if !s.begun[p] {
		s.begun[p] = true
		s.undo[p] = beginPhase(p)
	}
	failed := s.failed
	s.mu.Unlock()
	t.Cleanup(func() { s.end(t, p) })
	if failed {
		t.Skip("-failfast: a test failed")
	}
}

// ready reports whether the test name of phase p may start.
func (s *scheduler) ready(name string, p phase) bool {
	for q := range p {
		if s.pending[q] > 0 {
			return false
		}
	}
	return s.running < s.workers && s.waiting[p][0] == name
}

// end ends t, a test of phase p, and the phase with its last test.
func (s *scheduler) end(t *testing.T, p phase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	s.pending[p]--
	if t.Failed() && flag.Lookup("test.failfast").Value.String() == "true" {
		s.failed = true
	}
	if s.pending[p] == 0 && s.undo[p] != nil {
		s.undo[p]()
		s.undo[p] = nil
	}
	s.cond.Broadcast()
}

// beginPhase sets rapid's flags for phase p and returns their undo.
func beginPhase(p phase) (undo func()) {
	if p != flawPhase {
		return nil
	}
	names := []string{"rapid.steps", "rapid.seed", "rapid.shrinktime", "rapid.nofailfile"}
	old := map[string]string{}
	for _, n := range names {
		old[n] = flag.Lookup(n).Value.String()
	}
	if err := explore.SetFlawFlags(); err != nil {
		panic(err) // rapid's flags: they exist
	}
	return func() {
		for n, v := range old {
			if err := flag.Set(n, v); err != nil {
				panic(err)
			}
		}
	}
}
