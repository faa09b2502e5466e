package harness

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/sim"
	"github.com/zksim/zksim/zkmem"
)

// World is one check's simulated world as a machine's invariants see it:
// the processes, the server, and the time. Its methods are for the
// machine's goroutine (operations, invariants, Liveness), not for the
// processes' own goroutines.
type World[P any] struct {
	*runWorld
	procs []*Process[P]
}

// Processes returns the machine's processes, p0 first.
func (w *World[P]) Processes() []*Process[P] { return w.procs }

// runWorld is the part of a check's world that does not depend on the
// type of the processes' objects: the simulator, the observer, the
// scheduler, the trace notes and the violations found.
type runWorld struct {
	sw       *sim.World
	ctx      context.Context
	cancel   context.CancelFunc
	observer *zkmem.Conn
	timeout  time.Duration
	client   Client
	cores    []*proc
	wg       sync.WaitGroup
	sched    scheduler
	mix      Fault       // the faults this check drew
	actions  []string    // the actions taken, for the report of a failure
	failLog  []string    // what fail logged
	check    func()      // checks the invariants (run sets it)
	renewed  func(*proc) // Machine.Renewed, for the process
	isolated []bool      // on an ensemble: the members an Isolate action cut off, not rejoined since
	// replaying: a replay's check (replayProperty), whose failure is a
	// replayFailure panic rather than a failure of rapid's.
	replaying bool
	seed      uint64 // the World's seed, a draw (reseed mixes it in)
	inOrder   bool   // Machine.DrawsInOrder: no reseed
	seeded    bool   // the action under way drew its stretch seed (reseed)

	mu         sync.Mutex
	violations []Violation
	notes      []note
	noteSeq    int
	live       bool // in the liveness phase

	beat func() // tells the check's watchdog of each step (follow)
}

// note is a line for the trace from a process goroutine: the harness puts
// it in the simulator's trace at its next look, ordered by virtual time,
// then process, then text, so that the trace does not depend on goroutine
// timing.
type note struct {
	at   time.Duration
	proc int
	seq  int
	text string
}

// Sim returns the check's simulator, for what the harness does not wrap
// (its trace, its coverage, External calls). Do not step it or inject
// faults into it from an invariant.
func (w *runWorld) Sim() *sim.World { return w.sw }

// Server returns the check's zkmem server, for reads that bypass the
// scheduler (the sessions it holds, say).
func (w *runWorld) Server() *zkmem.Server { return w.sw.Server() }

// Observer returns a client of the server that the scheduler does not
// see: the machine's own eyes on the tree. Its calls are answered at once,
// meet no fault and are not traced; use it in invariants.
func (w *runWorld) Observer() *zkmem.Conn { return w.observer }

// Now returns the virtual time since the check began.
func (w *runWorld) Now() time.Duration { return w.sw.Now() }

// Live reports whether the liveness phase has begun: faults have stopped.
func (w *runWorld) Live() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live
}

// SessionLive reports whether the server still has the session id.
func (w *runWorld) SessionLive(id int64) bool {
	return id != 0 && slices.Contains(w.sw.Server().SessionIDs(), id)
}

// Violate records a violation of the invariant called name, found outside
// an Invariant's Check: by a process goroutine that saw something wrong
// (a protected resource accepting a stale write, say). The check fails at
// the harness's next look. Safe from any goroutine.
func (w *runWorld) Violate(name, format string, args ...any) {
	w.violate(Violation{Invariant: name, Detail: fmt.Sprintf(format, args...), At: w.sw.Now()})
}

func (w *runWorld) violate(v Violation) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, old := range w.violations {
		if old.Invariant == v.Invariant && old.Detail == v.Detail {
			return // invariants are checked after every step
		}
	}
	w.violations = append(w.violations, v)
}

// violated reports whether a violation has been recorded.
func (w *runWorld) violated() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.violations) > 0
}

// Note records a line for the trace of the check; safe from any
// goroutine (process goroutines should use Process.Note, which names the
// process).
func (w *runWorld) Note(format string, args ...any) { w.addNote(-1, format, args...) }

func (w *runWorld) addNote(proc int, format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.noteSeq++
	w.notes = append(w.notes, note{at: w.sw.Now(), proc: proc, seq: w.noteSeq, text: fmt.Sprintf(format, args...)})
}

// trace records a line of the machine goroutine in the trace.
func (w *runWorld) trace(format string, args ...any) {
	w.flushNotes()
	w.sw.Note(format, args...)
}

// flushNotes puts the goroutines' notes in the trace, by virtual time,
// then process, then text: two goroutines of one process may note at the
// same virtual instant in either order, so the order they wrote in is
// only the last resort.
func (w *runWorld) flushNotes() {
	w.mu.Lock()
	notes := w.notes
	w.notes = nil
	w.mu.Unlock()
	slices.SortFunc(notes, func(a, b note) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.proc, b.proc), strings.Compare(a.text, b.text), cmp.Compare(a.seq, b.seq))
	})
	for _, n := range notes {
		if n.proc < 0 {
			w.sw.Note("[%v] %s", n.at, n.text)
		} else {
			w.sw.Note("[%v] p%d %s", n.at, n.proc, n.text)
		}
	}
}

// describe tells, for a failure, where each process is.
func (w *runWorld) describe() string {
	var out []string
	for _, c := range w.cores {
		out = append(out, fmt.Sprintf("p%d: session c%d live=%v paused=%v in flight=%v running=%v",
			c.idx, c.sess, w.SessionLive(c.sessionID()), w.sw.Paused(c.sess), w.sw.InFlight(c.sess), c.runningNames()))
		if w.sw.Members() > 1 {
			out[len(out)-1] += fmt.Sprintf(" member=m%d", w.sw.Member(c.sess))
		}
	}
	if w.sw.Members() > 1 {
		out = append(out, w.describeMembers())
	}
	return strings.Join(out, "; ")
}

// The World's methods for a machine's own actions (Machine.Actions) and
// hooks: the machine goroutine's, never an invariant's.

// Context returns the check's context: it is cancelled as the check ends,
// before the simulator closes.
func (w *runWorld) Context() context.Context { return w.ctx }

// Go runs f in a goroutine that the check waits for as it ends, after it
// cancelled Context and closed the simulator: f must return then.
func (w *runWorld) Go(f func()) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		f()
	}()
}

// Trace records a line of the machine goroutine in the simulator's trace
// now, after the lines the processes noted so far.
func (w *runWorld) Trace(format string, args ...any) { w.trace(format, args...) }

// Violated reports whether a violation has been recorded in the check.
func (w *runWorld) Violated() bool { return w.violated() }

// Inject injects f as a step of the simulator (a fault of the machine's
// own choosing: sim.StepFault, faults.Expire, ...); a fault for a client that
// is gone is ignored. It fails the check if the simulator refuses f.
func (w *runWorld) Inject(t *rapid.T, f sim.StepFault) { w.inject(t, f) }

// Step takes one step of the simulator with the seed's choices (the calm
// stretch's faults, unless Quiet) and checks the invariants once every
// client has taken in what the step told it; it returns how many events
// are enabled then. Something must be enabled (Sim().Enabled() > 0), or
// the check fails.
func (w *runWorld) Step(t *rapid.T) int { return w.step(t, w.check) }

// Settle takes steps as Step does until nothing is enabled (or a
// violation is found, or 400 steps were taken).
func (w *runWorld) Settle(t *rapid.T) { w.settle(t, w.check) }

// RunFor lets d of virtual time pass as an Advance action does: the
// simulator takes steps with the seed's choices, the invariants are
// checked after every step, and it stops early at a violation (a stretch
// of over 2,000 steps is a "livelock").
func (w *runWorld) RunFor(t *rapid.T, d time.Duration) { w.runFor(t, d, w.check, nil) }

// RunUntil is RunFor, stopping as soon as stop (checked after every
// step) reports true.
func (w *runWorld) RunUntil(t *rapid.T, d time.Duration, stop func() bool) {
	w.runFor(t, d, w.check, stop)
}

// Quiet keeps the calm stretches (Step, Settle, RunFor, the harness's own
// Settle and Advance) free of the swarm's faults until undo is called: for
// an action that arranges an interleaving with faults of its choosing.
func (w *runWorld) Quiet() (undo func()) {
	old := w.sched.quiet
	w.sched.quiet = true
	return func() { w.sched.quiet = old }
}
