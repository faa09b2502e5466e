package conformance

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Sessions: ids, timeout negotiation (clamped to [2, 20] ticks by default),
// and Close: ephemerals deleted in one transaction, other sessions notified,
// the Conn finished.
func sessionCases() []testCase {
	return []testCase{
		{"ids-distinct-and-nonzero", func(e *env) {
			seen := map[int64]bool{e.c.SessionID(): true}
			require.NotZero(e.t, e.c.SessionID())
			for i := 0; i < 3; i++ {
				c := e.connect()
				require.NotZero(e.t, c.SessionID())
				require.False(e.t, seen[c.SessionID()], "session id %#x given twice", c.SessionID())
				seen[c.SessionID()] = true
			}
		}},
		{"state-connected", func(e *env) {
			require.Equal(e.t, zksim.StateConnected, e.c.State())
		}},
		{"timeout-clamped-to-min", func(e *env) {
			c := e.connectTimeout(time.Millisecond)
			require.Equal(e.t, e.facts().MinSessionTimeout, c.SessionTimeout())
		}},
		{"timeout-clamped-to-max", func(e *env) {
			c := e.connectTimeout(time.Hour)
			require.Equal(e.t, e.facts().MaxSessionTimeout, c.SessionTimeout())
		}},
		{"timeout-in-range-kept", func(e *env) {
			want := e.facts().MinSessionTimeout + e.facts().TickTime
			require.Less(e.t, want, e.facts().MaxSessionTimeout, "the backend's bounds leave no room")
			c := e.connectTimeout(want)
			require.Equal(e.t, want, c.SessionTimeout())
		}},
		{"close-deletes-ephemerals", func(e *env) {
			c2 := e.connect()
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(c2, e.p("d", "e"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("d", "s-"), nil, zksim.ModeEphemeralSequential)
			e.create(c2, e.p("d", "p"), nil, zksim.ModePersistent)
			require.NoError(e.t, c2.Close())
			require.Equal(e.t, []string{"p"}, e.children(e.c, e.p("d")))
		}},
		{"close-deletes-in-one-transaction", func(e *env) {
			c2 := e.connect()
			e.create(e.c, e.p("p1"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("p2"), nil, zksim.ModePersistent)
			e.create(c2, e.p("p1", "e"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("p2", "e"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("p2", "f"), nil, zksim.ModeEphemeral)
			require.NoError(e.t, c2.Close())
			next := e.czxid(e.c)
			p1, p2 := e.stat(e.c, e.p("p1")), e.stat(e.c, e.p("p2"))
			require.Equal(e.t, p1.Pzxid, p2.Pzxid, "both parents changed in one transaction")
			require.Equal(e.t, next-1, p1.Pzxid, "the close is the last write before the mark")
			require.Equal(e.t, int32(2), p1.Cversion)
			require.Equal(e.t, int32(4), p2.Cversion)
		}},
		{"close-notifies-other-sessions", func(e *env) {
			c2 := e.connect()
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(c2, e.p("d", "e"), nil, zksim.ModeEphemeral)
			_, _, dataCh, err := e.c.GetW(e.ctx, e.p("d", "e"))
			require.NoError(e.t, err)
			_, _, existCh, err := e.c.ExistsW(e.ctx, e.p("d", "e"))
			require.NoError(e.t, err)
			_, _, childCh, err := e.c.ChildrenW(e.ctx, e.p("d"))
			require.NoError(e.t, err)
			require.NoError(e.t, c2.Close())
			e.expectEvent(dataCh, zksim.EventNodeDeleted, e.p("d", "e"))
			e.expectEvent(existCh, zksim.EventNodeDeleted, e.p("d", "e"))
			e.expectEvent(childCh, zksim.EventNodeChildrenChanged, e.p("d"))
		}},
		{"close-is-idempotent", func(e *env) {
			c2 := e.connect()
			require.NoError(e.t, c2.Close())
			require.NoError(e.t, c2.Close())
		}},
		{"calls-after-close-fail-closing", func(e *env) {
			c2 := e.connect()
			require.NoError(e.t, c2.Close())
			_, _, err := c2.Get(e.ctx, e.p())
			e.is(err, zksim.ErrClosing, "get after Close")
			_, err = c2.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrClosing, "create after Close")
			require.False(e.t, e.exists(e.c, e.p("a")))
		}},
		{"state-closed-after-close", func(e *env) {
			c2 := e.connect()
			require.NoError(e.t, c2.Close())
			require.Equal(e.t, zksim.StateClosed, c2.State())
		}},
		{"close-ends-pending-watches", func(e *env) {
			c2 := e.connect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, _, dataCh, err := c2.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, _, existCh, err := c2.ExistsW(e.ctx, e.p("missing"))
			require.NoError(e.t, err)
			_, _, childCh, err := c2.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			require.NoError(e.t, c2.Close())
			e.notWatching(dataCh, zksim.ErrClosing, "data watch at Close")
			e.notWatching(existCh, zksim.ErrClosing, "exists watch at Close")
			e.notWatching(childCh, zksim.ErrClosing, "child watch at Close")
		}},
		{"close-fires-own-ephemeral-watches-first", func(e *env) {
			// The server deletes the session's ephemerals in the close
			// transaction and notifies the closing session too, before it
			// answers the close; only the watches left after that end with
			// EventNotWatching (checked on a real 3.8.0 by the adapter's
			// tests).
			c2 := e.connect()
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(c2, e.p("d", "e"), nil, zksim.ModeEphemeral)
			_, _, dataCh, err := c2.GetW(e.ctx, e.p("d", "e"))
			require.NoError(e.t, err)
			_, _, childCh, err := c2.ChildrenW(e.ctx, e.p("d"))
			require.NoError(e.t, err)
			_, _, otherCh, err := c2.ExistsW(e.ctx, e.p("never"))
			require.NoError(e.t, err)
			require.NoError(e.t, c2.Close())
			e.expectEvent(dataCh, zksim.EventNodeDeleted, e.p("d", "e"))
			e.expectEvent(childCh, zksim.EventNodeChildrenChanged, e.p("d"))
			e.notWatching(otherCh, zksim.ErrClosing, "exists watch at Close")
		}},
		{"close-ends-session-events", func(e *env) {
			c2 := e.connect()
			states := c2.SessionEvents(e.ctx)
			require.NoError(e.t, c2.Close())
			deadline := time.After(eventWait)
			for {
				select {
				case ev, ok := <-states:
					if !ok {
						return
					}
					require.Equal(e.t, zksim.EventSession, ev.Type, "%v", ev)
				case <-deadline:
					e.t.Fatal("SessionEvents not closed after Close")
				}
			}
		}},
		{"session-events-end-with-context", func(e *env) {
			ctx, cancel := context.WithCancel(e.ctx)
			states := e.c.SessionEvents(ctx)
			cancel()
			deadline := time.After(eventWait)
			for {
				select {
				case _, ok := <-states:
					if !ok {
						return
					}
				case <-deadline:
					e.t.Fatal("SessionEvents not closed after its context ended")
				}
			}
		}},
		{"ephemerals-stay-while-session-lives", func(e *env) {
			// With a short timeout, the session lives only if the client
			// keeps it alive while idle. (Not the shortest: 200ms is within
			// reach of a scheduling stall on a loaded machine.)
			timeout := min(max(e.facts().MinSessionTimeout, time.Second), e.facts().MaxSessionTimeout)
			c2 := e.connectTimeout(timeout)
			e.create(c2, e.p("e"), nil, zksim.ModeEphemeral)
			e.sleep(3 * c2.SessionTimeout())
			require.True(e.t, e.exists(e.c, e.p("e")), "a live session's ephemeral went away")
			require.Equal(e.t, c2.SessionID(), e.stat(e.c, e.p("e")).EphemeralOwner)
		}},
		{"deleting-own-ephemeral", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("e"), nil, zksim.ModeEphemeral)
			require.NoError(e.t, c2.Delete(e.ctx, e.p("e"), -1))
			require.False(e.t, e.exists(e.c, e.p("e")))
			require.NoError(e.t, c2.Close())
			require.Equal(e.t, int32(2), e.stat(e.c, e.p()).Cversion)
		}},
		{"other-session-deletes-ephemeral", func(e *env) {
			c2 := e.connect()
			e.create(c2, e.p("e"), nil, zksim.ModeEphemeral)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("e"), -1))
			require.False(e.t, e.exists(c2, e.p("e")))
		}},
	}
}
