package harness

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// Concurrent catches (CatchOptions.Concurrent) and their replays run at
// once, in parallel tests. rapid reads its number of checks and its seed
// from its global flags as a run begins (rapid.Check, before the first
// check), and nowhere else; a replay must set both for its own run. So
// every concurrent run holds flagGate from before rapid.Check until its
// first check starts, by which time rapid has read them, and a replay
// sets them only while it holds the gate, and restores them before it
// lets go: a catch never starts with a replay's flags, nor a replay with
// another's. The flags rapid reads later (the shrink's time, the steps of
// a Repeat, the fail file) are the caller's, the same for every run.
var flagGate sync.Mutex

// holdFlags takes flagGate and returns prop, which lets go of it as its
// first check starts (after calling first, if set), and release, which
// lets go of it if no check ever started; call release once rapid.Check
// returned.
func holdFlags(prop func(*rapid.T), first func()) (gated func(*rapid.T), release func()) {
	flagGate.Lock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			if first != nil {
				first()
			}
			flagGate.Unlock()
		})
	}
	return func(t *rapid.T) {
		release()
		prop(t)
	}, release
}

// replayConcurrently is Replay for a concurrent catch: it sets rapid's
// checks and seed under flagGate and leaves every other flag as it is
// (the shrink's time included, which other catches read while they run),
// so that it may run beside them. rapid would shrink the replayed failure
// for as long as that time lets it; here the check's failure is not raised
// to rapid (replayProperty), so rapid neither reproduces nor shrinks it,
// and any further check passes at once without drawing.
func replayConcurrently[P any](t *testing.T, m Machine[P], seed uint64) string {
	t.Helper()
	return replayTwice(t, seed, func() ([]string, bool) { return replayOnceConcurrently(t, m, seed) })
}

// replayOnceConcurrently is one replay of replayConcurrently: the traces
// of the checks that ran, and whether rapid saw the failure.
func replayOnceConcurrently[P any](t *testing.T, m Machine[P], seed uint64) (traces []string, failed bool) {
	t.Helper()
	r := newRunner(t, m)
	r.sink = func(trace string) { traces = append(traces, trace) }
	var checks atomic.Int32
	var undo func()
	replay := r.replayProperty(&failed)
	prop, release := holdFlags(func(t *rapid.T) {
		if checks.Add(1) <= 2 {
			replay(t)
		}
	}, func() {
		if undo != nil {
			undo()
		}
	})
	defer release()
	undo = setFlags(t, map[string]string{"rapid.checks": "1", "rapid.seed": strconv.FormatUint(seed, 10)})
	c := &recorder{name: t.Name()}
	rapid.Check(c, prop)
	return traces, failed || c.Failed()
}
