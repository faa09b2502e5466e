package harness

import (
	"fmt"
	"runtime"
	"sync"
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
	return func(t *rapid.T) {
		defer watchdog().Stop() // on wall-clock time: outside the bubble
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
			failAtDepth(t, msg, depthOf(msg))
		}
		repanic(p)
	}
}

// rapid tells two failures apart by the stack of the panic (it keeps a
// smaller failing case only if it fails "the same way"), and a panic raised
// again outside the bubble has lost its stack. repanic gives each distinct
// failure message a distinct stack instead: the n-th message seen panics
// n calls deep. rapid's own "no more data" panic keeps depth 0, so that it
// is never mistaken for a failure while rapid shrinks.
func repanic(p any) {
	if fmt.Sprintf("%T", p) == "rapid.invalidData" {
		panic(p)
	}
	panicAtDepth(p, depthOf(fmt.Sprint(p)))
}

// depthOf returns the depth at which failures with message msg panic.
func depthOf(msg string) int {
	failureDepthsMu.Lock()
	defer failureDepthsMu.Unlock()
	n, ok := failureDepths[msg]
	if !ok {
		n = len(failureDepths) + 1
		failureDepths[msg] = n
	}
	return n
}

// failAtDepth fails t with msg, n calls deep.
func failAtDepth(t *rapid.T, msg string, n int) {
	if n == 0 {
		t.Fatalf("%s", msg)
		return
	}
	failAtDepth(t, msg, n-1)
}

func panicAtDepth(p any, n int) {
	if n == 0 {
		panic(p)
	}
	panicAtDepth(p, n-1)
}

var (
	failureDepthsMu sync.Mutex
	failureDepths   = map[string]int{}
)

// hangAfter is how long, in wall-clock time, one check may run before the
// watchdog takes it for hung: a check takes milliseconds, so this only
// catches a deadlock that no virtual time can end (goroutines blocked on
// a sync.Mutex, which synctest does not see as durably blocked).
const hangAfter = 60 * time.Second

// watchdog crashes the test binary, with every goroutine's stack, if the
// check under way runs for hangAfter of wall-clock time. Stop it when the
// check ends.
func watchdog() *time.Timer {
	return time.AfterFunc(hangAfter, func() {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		panic(fmt.Sprintf("harness: a check has run for %v of wall-clock time: hung (goroutines below)\n%s", hangAfter, buf))
	})
}
