package harness

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"
)

// InBubbles returns prop with each of its checks run in a testing/synctest
// bubble of parent of its own, so that time is virtual: for a rapid
// property of one's own on the simulator, run by rapid.Check under any
// rapid.TB (rapid.SyncTest needs a *testing.T behind rapid; a Recorder is
// not one). rapid tells its failures apart by their message alone.
// Machines need none of this: Check, Catch and ExpectCaught do it.
func InBubbles(parent *testing.T, prop func(*rapid.T)) func(*rapid.T) {
	return inBubble(parent, prop, nil, nil)
}

// inBubble runs each check of prop in a testing/synctest bubble of parent,
// so that time is virtual, whatever rapid reports to (a *testing.T, or
// the harness's own recorder). A failure is raised again outside the
// bubble through repanic, so that rapid tells failures apart by their
// message alone.
//
// normalize, if set, rewrites the message of a failure before rapid sees
// it (ExpectCaught gives every failure it wants one message); after, if
// set, is told how each check ended: "" for a pass, else the message rapid
// sees.
func inBubble(parent *testing.T, prop func(*rapid.T), normalize func(string) string, after func(msg string)) func(*rapid.T) {
	stacks := &failureStacks{index: map[string]int{}}
	return func(t *rapid.T) {
		wd := startWatchdog(onHang) // on wall-clock time: outside the bubble
		watchdogs.Store(t, wd)
		defer func() {
			watchdogs.Delete(t)
			wd.stop()
		}()
		done := make(chan any, 1)
		go func() {
			var failure any
			defer func() { done <- failure }()
			synctest.Test(parent, func(*testing.T) {
				defer func() { failure = recover() }()
				prop(t)
			})
		}()
		p := <-done
		if p == nil {
			if after != nil {
				after("")
			}
			return
		}
		failure := fmt.Sprintf("%T", p) == "rapid.stopTest"
		msg := fmt.Sprint(p)
		if failure && normalize != nil {
			msg = normalize(msg)
		}
		if after != nil && failure {
			after(msg)
		}
		if failure && msg != fmt.Sprint(p) {
			spell(stacks.of(msg), stackBits, func() { t.Fatalf("%s", msg) })
		}
		stacks.repanic(p)
	}
}

// rapid tells two failures apart by the stack of the panic (it keeps a
// smaller failing case only if it fails "the same way", and it compares
// the first 32 frames alone), and a panic raised again outside the bubble
// has lost its stack. failureStacks gives each distinct failure message of
// one property a stack of its own instead: the n-th message it sees (from
// 0, in the order the checks meet them, a function of the seed) panics at
// the end of stackBits calls that spell n in binary. The numbering is the
// property's own, not the process's, so that how rapid tells failures
// apart does not depend on what ran before in the process (a count kept
// for the whole process once grew past rapid's 32 frames, and every later
// message looked the same to it). rapid's own "no more data" panic is
// raised as it is, so that it is never mistaken for a failure while rapid
// shrinks.
type failureStacks struct {
	mu    sync.Mutex
	index map[string]int
}

// stackBits is the number of calls that spell a failure's number: 4,096
// distinct failures per property, in well under rapid's 32 frames.
const stackBits = 12

// of returns the number of failures with message msg.
func (s *failureStacks) of(msg string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.index[msg]
	if !ok {
		n = len(s.index)
		s.index[msg] = n
	}
	return n
}

// repanic raises p again, at the stack of its message.
func (s *failureStacks) repanic(p any) {
	if fmt.Sprintf("%T", p) == "rapid.invalidData" {
		panic(p)
	}
	spell(s.of(fmt.Sprint(p)), stackBits, func() { panic(p) })
}

// spell calls f at the end of bits calls of its own, one a bit of n from
// the lowest: each bit's call is on a line of its own, so that the lines
// of the stack spell n.
func spell(n, bits int, f func()) {
	switch {
	case bits == 0:
		f()
	case n&1 == 0:
		spell(n>>1, bits-1, f)
	default:
		spell(n>>1, bits-1, f)
	}
}

// hangAfter is how long, in wall-clock time, one check may run before the
// watchdog takes it for hung: a check takes milliseconds, so this only
// catches a deadlock that no virtual time can end (goroutines blocked on
// a sync.Mutex, which synctest does not see as durably blocked).
const hangAfter = 60 * time.Second

// stallAfter is how long, in wall-clock time, a check that made its World
// may go without a simulator step before the watchdog takes it for hung:
// the scheduler takes its next step once every goroutine of the bubble
// has blocked, so a process deadlocked on a sync.Mutex, or spinning,
// stops the steps for good, and a step takes microseconds. It is checked
// every stallAfter, so a stall is caught within twice that; a check with
// no World (a property of one's own run by InBubbles) has hangAfter
// alone.
var stallAfter = 10 * time.Second

// watchdog crashes the test binary, with every goroutine's stack, if the
// check under way runs for hangAfter of wall-clock time, or, once its
// World is made (beatOf), goes stallAfter without a simulator step
// (beat). Stop it when the check ends.
type watchdog struct {
	hang  *time.Timer
	beats atomic.Int64 // the steps taken; beat counts them
	armed atomic.Bool  // the check made its World

	mu      sync.Mutex
	stall   *time.Timer
	seen    int64 // beats at the last look
	stopped bool
	hung    func(msg string) // crashes; a test may replace it
}

// hangPanic is what a watchdog does when the check hangs: it panics, on
// its timer's goroutine, with every goroutine's stack, which ends the
// test binary.
func hangPanic(msg string) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	panic(fmt.Sprintf("harness: %s: hung (goroutines below)\n%s", msg, buf))
}

// onHang is what the watchdogs of checks do when one hangs (a test of the
// watchdog replaces it).
var onHang = hangPanic

// startWatchdog starts the watchdog of a check; hung is called (on a
// timer's goroutine) when it takes the check for hung.
func startWatchdog(hung func(msg string)) *watchdog {
	w := &watchdog{hung: hung}
	w.hang = time.AfterFunc(hangAfter, func() {
		w.fire(fmt.Sprintf("a check has run for %v of wall-clock time", hangAfter))
	})
	w.mu.Lock()
	w.stall = time.AfterFunc(stallAfter, w.look)
	w.mu.Unlock()
	return w
}

// beat tells the watchdog that the World took a step. It is called inside
// the bubble, so it reads no clock.
func (w *watchdog) beat() { w.beats.Add(1) }

// look is the stall check, every stallAfter.
func (w *watchdog) look() {
	n := w.beats.Load()
	w.mu.Lock()
	stalled := w.armed.Load() && n == w.seen
	w.seen = n
	if !stalled && !w.stopped {
		w.stall.Reset(stallAfter)
	}
	w.mu.Unlock()
	if stalled {
		w.fire(fmt.Sprintf("a check has taken no simulator step for %v of wall-clock time (after %d steps): a process deadlocked or spinning", stallAfter, n))
	}
}

// fire reports a hang, unless the watchdog was stopped.
func (w *watchdog) fire(msg string) {
	w.mu.Lock()
	stopped := w.stopped
	w.mu.Unlock()
	if !stopped {
		w.hung(msg)
	}
}

// stop stops the watchdog: the check ended.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	w.hang.Stop()
	w.stall.Stop()
}

// watchdogs holds the watchdog of each check under way, by its rapid.T,
// for the World the check makes (beatOf).
var watchdogs sync.Map

// beatOf arms the stall check of the watchdog of the check t runs, which
// has made its World, and returns its beat; a function that does nothing
// if none watches it.
func beatOf(t *rapid.T) func() {
	if w, ok := watchdogs.Load(t); ok {
		wd := w.(*watchdog)
		wd.armed.Store(true)
		return wd.beat
	}
	return func() {}
}
