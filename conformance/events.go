package conformance

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// eventWait bounds the wait for an event that must come. Events normally
// arrive in microseconds (zkmem) or milliseconds (a real server); the bound
// only keeps a broken backend from hanging the suite.
const eventWait = 10 * time.Second

// nextEvent returns the next event on ch, failing the case if ch is nil,
// closed, or silent for eventWait.
func (e *env) nextEvent(ch <-chan zksim.Event, what string) zksim.Event {
	e.t.Helper()
	require.NotNil(e.t, ch, "%s: nil watch channel", what)
	select {
	case ev, ok := <-ch:
		if !ok {
			e.t.Fatalf("%s: watch channel closed without an event", what)
		}
		return ev
	case <-time.After(eventWait):
		e.t.Fatalf("%s: no event within %v", what, eventWait)
	case <-e.ctx.Done():
		e.t.Fatalf("%s: %v", what, e.ctx.Err())
	}
	return zksim.Event{}
}

// expectEvent checks that the one-shot watch ch delivers exactly one event
// of type typ for path, with state StateConnected and no error, and is then
// closed.
func (e *env) expectEvent(ch <-chan zksim.Event, typ zksim.EventType, path string) {
	e.t.Helper()
	what := fmt.Sprintf("watch for %v on %s", typ, path)
	ev := e.nextEvent(ch, what)
	e.checkEvent(ev, typ, path, what)
	e.expectClosed(ch, what)
}

// expectPersistentEvent checks the next event of a persistent watch, which
// stays open.
func (e *env) expectPersistentEvent(ch <-chan zksim.Event, typ zksim.EventType, path string) {
	e.t.Helper()
	what := fmt.Sprintf("persistent watch, expecting %v on %s", typ, path)
	e.checkEvent(e.nextEvent(ch, what), typ, path, what)
}

func (e *env) checkEvent(ev zksim.Event, typ zksim.EventType, path, what string) {
	e.t.Helper()
	require.Equal(e.t, typ, ev.Type, "%s: event %v", what, ev)
	require.Equal(e.t, path, ev.Path, "%s: event %v", what, ev)
	require.Equal(e.t, zksim.StateConnected, ev.State, "%s: event %v", what, ev)
	require.NoError(e.t, ev.Err, "%s: event %v", what, ev)
}

// expectClosed checks that ch is closed, with no further event.
func (e *env) expectClosed(ch <-chan zksim.Event, what string) {
	e.t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			e.t.Fatalf("%s: a second event %v on a one-shot watch", what, ev)
		}
	case <-time.After(eventWait):
		e.t.Fatalf("%s: channel not closed after its event", what)
	}
}

// getW sets a data watch on path, which must exist, through c, and
// returns its channel.
func (e *env) getW(c zksim.Conn, p string) <-chan zksim.Event {
	e.t.Helper()
	_, _, ch, err := c.GetW(e.ctx, p)
	require.NoError(e.t, err, "getW %s", p)
	return ch
}

// existsW sets an exists watch on path through c and returns its channel.
func (e *env) existsW(c zksim.Conn, p string) <-chan zksim.Event {
	e.t.Helper()
	_, _, ch, err := c.ExistsW(e.ctx, p)
	require.NoError(e.t, err, "existsW %s", p)
	return ch
}

// childrenW sets a child watch on path, which must exist, through c, and
// returns its channel.
func (e *env) childrenW(c zksim.Conn, p string) <-chan zksim.Event {
	e.t.Helper()
	_, _, ch, err := c.ChildrenW(e.ctx, p)
	require.NoError(e.t, err, "childrenW %s", p)
	return ch
}

// roundTrip makes c answer one request. Events and replies reach a session
// in the order the server produced them, so once it returns, every event
// caused by a write that completed before the call has been delivered.
func (e *env) roundTrip(c zksim.Conn) {
	e.t.Helper()
	_, _, err := c.Exists(e.ctx, e.root)
	require.NoError(e.t, err, "round trip (exists %s)", e.root)
}

// noEvent checks that ch, a watch held by c, has received nothing: after a
// round trip on c (see roundTrip) there is no event pending on it.
func (e *env) noEvent(c zksim.Conn, ch <-chan zksim.Event, what string) {
	e.t.Helper()
	require.NotNil(e.t, ch, "%s: nil watch channel", what)
	e.roundTrip(c)
	select {
	case ev, ok := <-ch:
		if ok {
			e.t.Fatalf("%s: unexpected event %v", what, ev)
		}
		e.t.Fatalf("%s: watch channel closed without an event", what)
	default:
	}
}

// quiet checks that ch receives nothing for d: for the few places where
// no round trip can order the events (right after a reconnect, when the
// client re-registers its watches in the background).
func (e *env) quiet(ch <-chan zksim.Event, d time.Duration, what string) {
	e.t.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			e.t.Fatalf("%s: unexpected event %v", what, ev)
		}
		e.t.Fatalf("%s: watch channel closed without an event", what)
	case <-time.After(d):
	}
}

// notWatching checks that the watch ch ends with EventNotWatching carrying
// cause, and is then closed.
func (e *env) notWatching(ch <-chan zksim.Event, cause error, what string) {
	e.t.Helper()
	ev := e.nextEvent(ch, what)
	require.Equal(e.t, zksim.EventNotWatching, ev.Type, "%s: event %v", what, ev)
	e.is(ev.Err, cause, "%s: the error of %v", what, ev)
	e.expectClosed(ch, what)
}

// waitState reads session events from states until one has state want.
func (e *env) waitState(states <-chan zksim.Event, want zksim.State, what string) {
	e.t.Helper()
	timeout := time.After(eventWait + e.facts().MaxSessionTimeout)
	for {
		select {
		case ev, ok := <-states:
			if !ok {
				e.t.Fatalf("%s: session events closed before %v", what, want)
			}
			require.Equal(e.t, zksim.EventSession, ev.Type, "%s: session event %v", what, ev)
			if ev.State == want {
				return
			}
		case <-timeout:
			e.t.Fatalf("%s: no %v session event", what, want)
		case <-e.ctx.Done():
			e.t.Fatalf("%s: %v", what, e.ctx.Err())
		}
	}
}
