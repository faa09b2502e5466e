package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// Persistent and recursive watches (addWatch, 3.6+) and removeWatches: an
// optional capability, zksim.PersistentWatcher. go-zookeeper has neither
// call. Removal also tells which one-shot watches the server holds, so the
// "sets a watch or not" rules of exists/getData/getChildren are checked here
// too.
//
// The server-side facts were checked on a real 3.8.0 with raw requests: the
// events of each watch mode, NoWatcher (-121) for kinds Children, Data and
// Any with nothing to remove, and kind Any removing a recursive watch. Two
// rules are the client's, not the server's: the removal events
// (EventDataWatchRemoved, ...) are made by the client library, and addWatch
// paths are checked by the client (the 3.8.0 server accepts "/a/"). Kinds
// WatcherPersistent and WatcherPersistentRecursive follow ZooKeeper 3.9
// (ZOOKEEPER-4472): a 3.8.0 server answers them with MarshallingError (-5)
// whether or not such a watch exists; a 3.8 client removes persistent
// watches with kind Any only.
func persistentWatchCases() []testCase {
	return []testCase{
		{"persistent-fires-every-kind", func(e *env) {
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistent)
			require.NoError(e.t, err)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.expectPersistentEvent(ch, zksim.EventNodeCreated, e.p("a"))
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectPersistentEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.expectPersistentEvent(ch, zksim.EventNodeChildrenChanged, e.p("a"))
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a", "b"), -1))
			e.expectPersistentEvent(ch, zksim.EventNodeChildrenChanged, e.p("a"))
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a"), -1))
			e.expectPersistentEvent(ch, zksim.EventNodeDeleted, e.p("a"))
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.expectPersistentEvent(ch, zksim.EventNodeCreated, e.p("a"))
		}},
		{"persistent-survives-firing", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistent)
			require.NoError(e.t, err)
			for i := 0; i < 3; i++ {
				_, err = e.c.Set(e.ctx, e.p("a"), []byte{byte(i)}, -1)
				require.NoError(e.t, err)
				e.expectPersistentEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			}
		}},
		{"persistent-ignores-descendants", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistent)
			require.NoError(e.t, err)
			_, err = e.c.Set(e.ctx, e.p("a", "b"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.create(e.c, e.p("a", "b", "c"), nil, zksim.ModePersistent)
			e.noEvent(w, ch, "persistent watch on a, after changes below a/b")
		}},
		{"recursive-fires-for-descendants", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.expectPersistentEvent(ch, zksim.EventNodeCreated, e.p("a", "b"))
			e.create(e.c, e.p("a", "b", "c"), nil, zksim.ModePersistent)
			e.expectPersistentEvent(ch, zksim.EventNodeCreated, e.p("a", "b", "c"))
			_, err = e.c.Set(e.ctx, e.p("a", "b", "c"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectPersistentEvent(ch, zksim.EventNodeDataChanged, e.p("a", "b", "c"))
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectPersistentEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a", "b", "c"), -1))
			e.expectPersistentEvent(ch, zksim.EventNodeDeleted, e.p("a", "b", "c"))
		}},
		{"recursive-never-children-changed", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			require.NoError(e.t, e.c.Delete(e.ctx, e.p("a", "b"), -1))
			e.expectPersistentEvent(ch, zksim.EventNodeCreated, e.p("a", "b"))
			e.expectPersistentEvent(ch, zksim.EventNodeDeleted, e.p("a", "b"))
			e.noEvent(w, ch, "recursive watch: no NodeChildrenChanged")
		}},
		{"recursive-on-missing-node", func(e *env) {
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.expectPersistentEvent(ch, zksim.EventNodeCreated, e.p("a"))
		}},
		{"recursive-ignores-siblings", func(e *env) {
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			e.create(e.c, e.p("ab"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("b"), nil, zksim.ModePersistent)
			e.noEvent(w, ch, "recursive watch on a, after creating ab and b")
		}},
		{"persistent-and-one-shot-both-fire", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			pch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistent)
			require.NoError(e.t, err)
			_, _, ch, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			e.expectPersistentEvent(pch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"remove-persistent", func(e *env) {
			w := e.connect()
			pw := e.persistentWatcher(w)
			ch, err := pw.AddWatch(e.ctx, e.p("a"), zksim.WatchPersistent)
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherPersistent))
			e.expectEvent(ch, zksim.EventPersistentWatchRemoved, e.p("a"))
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.is(pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherPersistent), zksim.ErrNoWatcher, "remove it again")
		}},
		{"remove-recursive", func(e *env) {
			w := e.connect()
			pw := e.persistentWatcher(w)
			ch, err := pw.AddWatch(e.ctx, e.p("a"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherPersistentRecursive))
			e.expectEvent(ch, zksim.EventPersistentWatchRemoved, e.p("a"))
		}},
		{"remove-any-removes-persistent-and-recursive", func(e *env) {
			w := e.connect()
			pw := e.persistentWatcher(w)
			pch, err := pw.AddWatch(e.ctx, e.p("a"), zksim.WatchPersistent)
			require.NoError(e.t, err)
			rch, err := pw.AddWatch(e.ctx, e.p("b"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherAny))
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("b"), zksim.WatcherAny))
			e.expectEvent(pch, zksim.EventPersistentWatchRemoved, e.p("a"))
			e.expectEvent(rch, zksim.EventPersistentWatchRemoved, e.p("b"))
			e.is(pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherAny), zksim.ErrNoWatcher, "remove again")
		}},
		{"remove-nothing-no-watcher", func(e *env) {
			pw := e.persistentWatcher(e.c)
			for _, kind := range []zksim.WatcherKind{zksim.WatcherChildren, zksim.WatcherData, zksim.WatcherAny, zksim.WatcherPersistent, zksim.WatcherPersistentRecursive} {
				e.is(pw.RemoveWatches(e.ctx, e.p(), kind), zksim.ErrNoWatcher, "remove %v watches where there are none", kind)
			}
		}},
		{"remove-data-watch", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			pw := e.persistentWatcher(w)
			_, _, ch, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherData))
			e.expectEvent(ch, zksim.EventDataWatchRemoved, e.p("a"))
		}},
		{"remove-child-watch", func(e *env) {
			w := e.connect()
			pw := e.persistentWatcher(w)
			_, _, ch, err := w.ChildrenW(e.ctx, e.p())
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p(), zksim.WatcherChildren))
			e.expectEvent(ch, zksim.EventChildWatchRemoved, e.p())
		}},
		{"remove-any", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			pw := e.persistentWatcher(w)
			_, _, dataCh, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, _, childCh, err := w.ChildrenW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherAny))
			e.expectEvent(dataCh, zksim.EventDataWatchRemoved, e.p("a"))
			e.expectEvent(childCh, zksim.EventChildWatchRemoved, e.p("a"))
		}},
		{"remove-wrong-kind-no-watcher", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			pw := e.persistentWatcher(w)
			_, _, ch, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			e.is(pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherChildren), zksim.ErrNoWatcher, "remove child watches where there is a data watch")
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"remove-is-per-session", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			_, _, ch, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			e.is(e.persistentWatcher(e.c).RemoveWatches(e.ctx, e.p("a"), zksim.WatcherData), zksim.ErrNoWatcher, "another session removes w's watch")
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
		}},
		{"exists-on-missing-sets-removable-watch", func(e *env) {
			// checked: exists sets a watch even when the node is missing.
			w := e.connect()
			pw := e.persistentWatcher(w)
			_, _, ch, err := w.ExistsW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.NoError(e.t, pw.RemoveWatches(e.ctx, e.p("a"), zksim.WatcherData))
			e.expectEvent(ch, zksim.EventDataWatchRemoved, e.p("a"))
		}},
		{"get-on-missing-leaves-nothing-to-remove", func(e *env) {
			w := e.connect()
			_, _, _, err := w.GetW(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoNode, "getW on a missing node")
			e.is(e.persistentWatcher(w).RemoveWatches(e.ctx, e.p("a"), zksim.WatcherData), zksim.ErrNoWatcher, "remove after getW on a missing node")
		}},
		{"children-on-missing-leaves-nothing-to-remove", func(e *env) {
			w := e.connect()
			_, _, _, err := w.ChildrenW(e.ctx, e.p("a"))
			e.is(err, zksim.ErrNoNode, "childrenW on a missing node")
			e.is(e.persistentWatcher(w).RemoveWatches(e.ctx, e.p("a"), zksim.WatcherChildren), zksim.ErrNoWatcher, "remove after childrenW on a missing node")
		}},
		{"fired-watch-leaves-nothing-to-remove", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			w := e.connect()
			_, _, ch, err := w.GetW(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			_, err = e.c.Set(e.ctx, e.p("a"), []byte("x"), -1)
			require.NoError(e.t, err)
			e.expectEvent(ch, zksim.EventNodeDataChanged, e.p("a"))
			e.is(e.persistentWatcher(w).RemoveWatches(e.ctx, e.p("a"), zksim.WatcherData), zksim.ErrNoWatcher, "remove a watch that fired")
		}},
		{"close-ends-persistent-watch", func(e *env) {
			w := e.connect()
			ch, err := e.persistentWatcher(w).AddWatch(e.ctx, e.p("a"), zksim.WatchPersistentRecursive)
			require.NoError(e.t, err)
			require.NoError(e.t, w.Close())
			e.notWatching(ch, zksim.ErrClosing, "persistent watch of a closed Conn")
		}},
		{"add-watch-bad-path", func(e *env) {
			_, err := e.persistentWatcher(e.c).AddWatch(e.ctx, e.p("a")+"/", zksim.WatchPersistent)
			e.is(err, zksim.ErrBadArguments, "addWatch on a path ending in /")
		}},
	}
}
