package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// One-shot watches: the trigger table, which calls set a watch, one event
// per registration, no data in events, and events ordered before newer
// data. Watches are set by a second session w unless the case says
// otherwise; e.c makes the changes.
//
//	create X  -> NodeCreated on X's exists/data watches, NodeChildrenChanged on the parent's child watches
//	setData X -> NodeDataChanged on X's exists/data watches
//	delete X  -> NodeDeleted on X's exists/data/child watches, NodeChildrenChanged on the parent
func watchCases() []testCase {
	return []testCase{
		{"exists-on-missing-fires-created", func(e *env) {
			w := e.connect()
			ok, _, ch, err := w.ExistsW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.False(e.t, ok)
			e.create(e.c, e.p("a"), []byte("x"), zksim.ModePersistent)
			e.expectEvent(ch, zksim.EventNodeCreated, e.p("a"))
		}},
		{"exists-fires-data-changed", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ok, st, ch, err := w.ExistsW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.True(e.t, ok)
			require.Equal(e.t, e.stat(e.c, e.p("a")), *st)
			e.set(e.c, e.p("a"), []byte("x"))
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"exists-fires-deleted", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			e.delete(e.c, e.p("a"))
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("a"))
		}},
		{"get-fires-data-changed", func(e *env) {
			e.create(e.c, e.p("a"), []byte("1"), zksim.ModePersistent)
			w := e.connect()
			data, st, ch, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, []byte("1"), data)
			require.Zero(e.t, st.Version)
			e.set(e.c, e.p("a"), []byte("2"))
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"get-fires-deleted", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			e.delete(e.c, e.p("a"))
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("a"))
		}},
		{"children-fires-on-child-create", func(e *env) {
			w := e.connect()
			names, st, ch, err := w.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			require.Empty(e.t, names)
			require.Zero(e.t, st.NumChildren)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.expectEvent(ch, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"children-fires-on-child-delete", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			names, _, ch, err := w.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			require.Equal(e.t, []string{"a"}, sorted(names))
			e.delete(e.c, e.p("a"))
			e.expectEvent(ch, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"children-fires-deleted-on-node-delete", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.childrenW(w, e.p("a"))
			e.delete(e.c, e.p("a"))
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("a"))
		}},
		{"children-fires-on-ephemeral-sequential-create", func(e *env) {
			w := e.connect()
			ch := e.childrenW(w, e.p())
			e.create(e.c, e.p("s-"), nil, zksim.ModeEphemeralSequential)
			e.expectEvent(ch, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"children-not-fired-by-set", func(e *env) {
			w := e.connect()
			ch := e.childrenW(w, e.p())
			e.set(e.c, e.p(), []byte("x"))
			_, err := e.c.SetACL(e.ctx, e.p(), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			e.noEvent(w, ch, "child watch after a set and a setACL on the node")
		}},
		{"children-not-fired-by-grandchild", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.childrenW(w, e.p())
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.set(e.c, e.p("a"), []byte("x"))
			e.noEvent(w, ch, "child watch after a grandchild create and a child set")
		}},
		{"get-not-fired-by-child-change", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			dataCh := e.getW(w, e.p("a"))
			existCh := e.existsW(w, e.p("a"))
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.delete(e.c, e.p("a", "b"))
			e.noEvent(w, dataCh, "data watch after a child create and delete")
			e.noEvent(w, existCh, "exists watch after a child create and delete")
		}},
		{"set-acl-fires-nothing", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), -1)
			require.NoError(e.t, err)
			e.noEvent(w, ch, "data watch after a setACL")
		}},
		{"get-on-missing-sets-no-watch", func(e *env) {
			w := e.connect()
			_, _, ch, err := w.GetW(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoNode, "getW on a missing node")
			require.Nil(e.t, ch, "getW on a missing node returns no watch")
		}},
		{"children-on-missing-sets-no-watch", func(e *env) {
			w := e.connect()
			_, _, ch, err := w.ChildrenW(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoNode, "childrenW on a missing node")
			require.Nil(e.t, ch, "childrenW on a missing node returns no watch")
		}},
		{"one-shot", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			e.set(e.c, e.p("a"), []byte("1"))
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			e.set(e.c, e.p("a"), []byte("2"))
			e.roundTrip(w)
			_, ok := <-ch
			require.False(e.t, ok, "a fired watch stays closed")
		}},
		{"rearm-fires-again", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			for i := 0; i < 3; i++ {
				ch := e.getW(w, e.p("a"))
				e.set(e.c, e.p("a"), []byte{byte(i)})
				e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			}
		}},
		{"same-watch-twice-one-event-each", func(e *env) {
			// The server keeps one watch per session, path and kind; the
			// client hands its one event to every registration.
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			var chans []<-chan zksim.Event
			for i := 0; i < 3; i++ {
				ch := e.getW(w, e.p("a"))
				chans = append(chans, ch)
			}
			e.set(e.c, e.p("a"), []byte("x"))
			for _, ch := range chans {
				e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			}
		}},
		{"exists-and-get-fire-together", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			existCh := e.existsW(w, e.p("a"))
			dataCh := e.getW(w, e.p("a"))
			e.set(e.c, e.p("a"), []byte("x"))
			e.expectEvent(existCh, zksim.EventNodeDataChanged, e.p("a"))
			e.expectEvent(dataCh, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"delete-fires-every-kind", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			existCh := e.existsW(w, e.p("a"))
			dataCh := e.getW(w, e.p("a"))
			childCh := e.childrenW(w, e.p("a"))
			parentCh := e.childrenW(w, e.p())
			e.delete(e.c, e.p("a"))
			e.expectEvent(existCh, zksim.EventNodeDeleted, e.p("a"))
			e.expectEvent(dataCh, zksim.EventNodeDeleted, e.p("a"))
			e.expectEvent(childCh, zksim.EventNodeDeleted, e.p("a"))
			e.expectEvent(parentCh, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"create-fires-exists-and-parent", func(e *env) {
			w := e.connect()
			existCh := e.existsW(w, e.p("a"))
			parentCh := e.childrenW(w, e.p())
			e.create(e.c, e.p("a"), nil, zksim.ModeEphemeral)
			e.expectEvent(existCh, zksim.EventNodeCreated, e.p("a"))
			e.expectEvent(parentCh, zksim.EventNodeChildrenChanged, e.p())
		}},
		{"event-carries-no-data", func(e *env) {
			// An event has a type, a state and a path; the new data must
			// be read.
			e.create(e.c, e.p("a"), []byte("old"), zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			e.set(e.c, e.p("a"), []byte("new"))
			ev := e.nextEvent(ch, "data watch")
			require.Equal(e.t, zksim.Event{Type: zksim.EventNodeDataChanged, State: zksim.StateConnected, Path: e.p("a")}, ev)
			require.Equal(e.t, []byte("new"), e.data(w, e.p("a")))
		}},
		{"event-before-newer-data", func(e *env) {
			// Once w reads data newer than a change, the change's event has
			// already been delivered: no wait is allowed here.
			e.create(e.c, e.p("a"), []byte("1"), zksim.ModePersistent)
			w := e.connect()
			ch := e.getW(w, e.p("a"))
			e.set(e.c, e.p("a"), []byte("2"))
			require.Equal(e.t, []byte("2"), e.data(w, e.p("a")))
			select {
			case ev := <-ch:
				require.Equal(e.t, zksim.EventNodeDataChanged, ev.Type, "%v", ev)
			default:
				e.t.Fatal("w read the new data before it received the watch event")
			}
		}},
		{"own-write-fires-own-watch", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, _, ch, err := e.c.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			e.set(e.c, e.p("a"), []byte("x"))
			select {
			case ev := <-ch:
				require.Equal(e.t, zksim.EventNodeDataChanged, ev.Type, "%v", ev)
			default:
				e.t.Fatal("the watch event of a session's own write must arrive before the write's reply")
			}
		}},
		{"every-session-gets-its-event", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			var chans []<-chan zksim.Event
			for i := 0; i < 3; i++ {
				chans = append(chans, e.getW(e.connect(), e.p("a")))
			}
			e.set(e.c, e.p("a"), []byte("x"))
			for _, ch := range chans {
				e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			}
		}},
		{"failed-writes-fire-nothing", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			w := e.connect()
			dataCh := e.getW(w, e.p("a"))
			childCh := e.childrenW(w, e.p("a"))
			_, err := e.c.Set(e.ctx, e.p("a"), nil, 5)
			e.is(err, zksim.ErrBadVersion, "set with version 5")
			e.is(e.c.Delete(e.ctx, e.p("a"), -1), zksim.ErrNotEmpty, "delete a non-empty node")
			_, err = e.c.Create(e.ctx, e.p("a", "b"), nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrNodeExists, "create an existing child")
			e.noEvent(w, dataCh, "data watch after failed writes")
			e.noEvent(w, childCh, "child watch after failed writes")
		}},
		{"sequential-create-fires-exists-on-its-name", func(e *env) {
			w := e.connect()
			ch := e.existsW(w, e.p("s-0000000000"))
			e.create(e.c, e.p("s-"), nil, zksim.ModePersistentSequential)
			e.expectEvent(ch, zksim.EventNodeCreated, e.p("s-0000000000"))
		}},
		{"exists-watch-after-create-fires-data-changed", func(e *env) {
			// An exists watch set on a missing node fires once on create; a
			// new one on the now-present node fires on its delete.
			w := e.connect()
			ch := e.existsW(w, e.p("a"))
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.expectEvent(ch, zksim.EventNodeCreated, e.p("a"))
			ch = e.existsW(w, e.p("a"))
			e.delete(e.c, e.p("a"))
			e.expectEvent(ch, zksim.EventNodeDeleted, e.p("a"))
		}},
	}
}
