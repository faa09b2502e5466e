package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// reconnectQuiet is how long a case waits, after a reconnect, to be sure a
// re-registered watch did not fire: the client re-registers its watches in
// the background, so no round trip orders their events.
const reconnectQuiet = 200 * time.Millisecond

// A client that reconnects within its session timeout re-sends its watches
// with the last zxid it saw (DataTree.setWatches):
//
//	data watch, node now missing          -> NodeDeleted
//	data watch, mzxid > last zxid         -> NodeDataChanged
//	child watch, node now missing         -> NodeDeleted
//	child watch, pzxid > last zxid        -> NodeChildrenChanged
//	exists watch (node was missing), node now present -> NodeCreated
//	otherwise the watch is re-armed.
//
// An exists watch on a present node is a data watch. A create and delete
// during the disconnect is missed by an exists watch (documented).
func reconnectCases() []testCase {
	// cut drops w's connection, runs changes through e.c, and reconnects w.
	cut := func(e *env, w zksim.Conn, changes func()) {
		e.t.Helper()
		require.NoError(e.t, e.b.Disconnect(e.ctx, w), "backend %s: Disconnect", e.b.Name)
		changes()
		require.NoError(e.t, e.b.Reconnect(e.ctx, w), "backend %s: Reconnect", e.b.Name)
	}
	// rearmed checks that ch stayed silent through the reconnect, and that
	// fire, a change after it, makes it deliver want.
	rearmed := func(e *env, w zksim.Conn, ch <-chan zksim.Event, fire func(), want zksim.EventType, path string) {
		e.t.Helper()
		e.roundTrip(w)
		e.quiet(ch, reconnectQuiet, "a re-armed watch on "+path)
		fire()
		e.expectEvent(ch, want, path)
	}
	set := func(e *env, p string) func() {
		return func() { e.set(e.c, p, []byte("x")) }
	}
	create := func(e *env, p string) func() {
		return func() { e.create(e.c, p, nil, zksim.ModePersistent) }
	}
	return []testCase{
		{"same-session-after-reconnect", func(e *env) {
			e.needDisconnect()
			w := e.connect()
			e.create(w, e.p("e"), nil, zksim.ModeEphemeral)
			sid := w.SessionID()
			cut(e, w, func() {
				require.True(e.t, e.exists(e.c, e.p("e")), "the ephemeral of a disconnected, live session")
			})
			require.Equal(e.t, sid, w.SessionID())
			require.Equal(e.t, zksim.StateConnected, w.State())
			require.Equal(e.t, sid, e.stat(w, e.p("e")).EphemeralOwner)
			e.create(w, e.p("after"), nil, zksim.ModeEphemeral)
		}},
		{"session-events-disconnected-then-connected", func(e *env) {
			e.needDisconnect()
			w := e.connect()
			states := w.SessionEvents(e.ctx)
			require.NoError(e.t, e.b.Disconnect(e.ctx, w))
			e.waitState(states, zksim.StateDisconnected, "after Disconnect")
			require.NoError(e.t, e.b.Reconnect(e.ctx, w))
			e.waitState(states, zksim.StateConnected, "after Reconnect")
		}},
		{"data-watch-changed", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, set(e, e.p("a")))
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"data-watch-changed-several-times-fires-once", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, func() {
				for i := 0; i < 3; i++ {
					set(e, e.p("a"))()
				}
			})
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"data-watch-deleted", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, func() { e.delete(e.c, e.p("a")) })
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("a"))
		}},
		{"data-watch-recreated-fires-data-changed", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, func() {
				e.delete(e.c, e.p("a"))
				e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			})
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"data-watch-unchanged-rearmed", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, create(e, e.p("elsewhere")))
			rearmed(e, w, ch, set(e, e.p("a")), zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"data-watch-ignores-child-changes", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, create(e, e.p("a", "child")))
			rearmed(e, w, ch, set(e, e.p("a")), zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"exists-watch-created", func(e *env) {
			e.needDisconnect()
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			cut(e, w, create(e, e.p("a")))
			e.expectEvent(ch, zksim.EventNodeCreated, e.p("a"))
		}},
		{"exists-watch-misses-create-and-delete", func(e *env) {
			// Documented: the node is missing again at reconnect, so the
			// exists watch is simply re-armed.
			e.needDisconnect()
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			cut(e, w, func() {
				create(e, e.p("a"))()
				e.delete(e.c, e.p("a"))
			})
			rearmed(e, w, ch, create(e, e.p("a")), zksim.EventNodeCreated, e.p("a"))
		}},
		{"exists-watch-still-missing-rearmed", func(e *env) {
			e.needDisconnect()
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			cut(e, w, create(e, e.p("b")))
			rearmed(e, w, ch, create(e, e.p("a")), zksim.EventNodeCreated, e.p("a"))
		}},
		{"exists-watch-on-present-node-deleted", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			cut(e, w, func() { e.delete(e.c, e.p("a")) })
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("a"))
		}},
		{"exists-watch-on-present-node-changed", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			cut(e, w, set(e, e.p("a")))
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"child-watch-child-added", func(e *env) {
			e.needDisconnect()
			w := e.connect()
			ch := e.childrenW(w, e.p())
			cut(e, w, create(e, e.p("a")))
			e.expectEvent(ch, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"child-watch-child-removed", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.childrenW(w, e.p())
			cut(e, w, func() { e.delete(e.c, e.p("a")) })
			e.expectEvent(ch, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"child-watch-node-deleted", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.childrenW(w, e.p("d"))
			cut(e, w, func() { e.delete(e.c, e.p("d")) })
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("d"))
		}},
		{"child-watch-ignores-data-changes", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("d", "c"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.childrenW(w, e.p("d"))
			cut(e, w, func() {
				set(e, e.p("d"))()
				set(e, e.p("d", "c"))()
				create(e, e.p("d", "c", "grandchild"))()
			})
			rearmed(e, w, ch, create(e, e.p("d", "new")), zksim.EventNodeChildrenChanged, e.p("d"))
		}},
		{"watches-of-several-kinds", func(e *env) {
			e.needDisconnect()
			e.create(e.c, e.p("changed"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("deleted"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("parent"), nil, zksim.ModePersistent)
			w := e.connect()
			changedCh := e.getW(w, e.p("changed"))
			deletedCh := e.existsW(w, e.p("deleted"))
			createdCh := e.existsW(w, e.p("created"))
			childCh := e.childrenW(w, e.p("parent"))
			cut(e, w, func() {
				set(e, e.p("changed"))()
				e.delete(e.c, e.p("deleted"))
				create(e, e.p("created"))()
				create(e, e.p("parent", "c"))()
			})
			e.expectEvent(changedCh, zksim.EventNodeDataChanged, e.p("changed"))
			e.expectEvent(deletedCh, zksim.EventNodeDeleted, e.p("deleted"))
			e.expectEvent(createdCh, zksim.EventNodeCreated, e.p("created"))
			e.expectEvent(childCh, zksim.EventNodeChildrenChanged, e.p("parent"))
		}},
		{"changes-before-the-watch-do-not-fire", func(e *env) {
			// The last zxid is the client's latest: a change it had already
			// seen when it set the watch does not fire it.
			e.needDisconnect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			set(e, e.p("a"))()
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			cut(e, w, func() {})
			rearmed(e, w, ch, set(e, e.p("a")), zksim.EventNodeDataChanged, e.p("a"))
		}},
	}
}
