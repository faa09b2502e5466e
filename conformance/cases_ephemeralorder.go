package conformance

import (
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// The order in which a session's ephemerals go when it is closed or
// expires, which other sessions see as the order of their watch events.
// The server keeps a session's ephemerals in a Java hash set of full paths
// and deletes them in the order of a clone of that set (newEphemeralOrder,
// cloneOrder): neither path order nor creation order. The watcher is a
// go-zookeeper session whose events are logged in the order they arrive
// (wireWatcher), with an exists watch on every ephemeral and a child watch
// on every parent: NodeDeleted for each ephemeral in turn, each parent's
// NodeChildrenChanged right after its first ephemeral goes.
func ephemeralOrderCases() []testCase {
	parents := []string{"a", "b", "c"}
	// setUp makes the parents, has v create 40 ephemerals among them and
	// returns their paths in creation order.
	makeParents := func(e *env) {
		for _, p := range parents {
			e.create(e.c, e.p(p), nil, zksim.ModePersistent)
		}
	}
	setUp := func(e *env, v zksim.Conn, o *childOrder) []string {
		makeParents(e)
		var paths []string
		for i := range 40 {
			p := e.create(v, e.p(parents[i%len(parents)], sprintf("e%d", i*7)), nil, zksim.ModeEphemeral)
			o.add(p)
			paths = append(paths, p)
		}
		return paths
	}
	// watch sets the watches on what is left of paths.
	watch := func(e *env, zc *zk.Conn, paths []string) {
		for _, p := range parents {
			_, _, _, err := zc.ChildrenW(e.p(p))
			require.NoError(e.t, err)
		}
		for _, p := range paths {
			ok, _, _, err := zc.ExistsW(p)
			require.NoError(e.t, err)
			require.True(e.t, ok, "%s exists", p)
		}
	}
	// expect waits for the events of deleting order and compares.
	expect := func(e *env, zc *zk.Conn, log *wireLog, order []string) {
		e.t.Helper()
		var want []string
		seen := make(map[string]bool)
		for _, p := range order {
			want = append(want, wireEvent(zk.EventNodeDeleted, p))
			if parent := parentOf(p); !seen[parent] {
				seen[parent] = true
				want = append(want, wireEvent(zk.EventNodeChildrenChanged, parent))
			}
		}
		e.poll(eventWait, "the watcher's events", func() bool { return len(log.events()) >= len(want) })
		_, err := zc.Sync(e.p()) // a round trip: anything more would be here by now
		require.NoError(e.t, err)
		require.Equal(e.t, want, log.events(), "the watcher's events, in order")
		require.NotEqual(e.t, sorted(order), order, "the case should tell the server's order from path order")
	}
	// createEphemerals creates paths as v's ephemerals, in order, and
	// returns the server's set of them as the model has it.
	createEphemerals := func(e *env, v zksim.Conn, paths []string) *childOrder {
		o := newEphemeralOrder()
		for _, p := range paths {
			e.create(v, p, nil, zksim.ModeEphemeral)
			o.add(p)
		}
		return o
	}
	// closeAndExpect watches every path of o, closes v and checks that the
	// watcher hears the deletes in the order of a clone of o.
	closeAndExpect := func(e *env, zc *zk.Conn, log *wireLog, v zksim.Conn, o *childOrder) {
		watch(e, zc, o.order())
		require.NoError(e.t, v.Close())
		expect(e, zc, log, o.cloneOrder())
	}
	return []testCase{
		{"close-deletes-in-set-order", func(e *env) {
			zc, log := e.wireWatcher()
			v := e.connect()
			o := newEphemeralOrder()
			paths := setUp(e, v, o)
			// A few go and come back: deletes keep the others in place, a
			// path created again goes behind its bucket's others.
			for _, p := range paths[5:10] {
				e.delete(v, p)
				o.remove(p)
			}
			for _, p := range []string{paths[7], paths[5]} {
				e.create(v, p, nil, zksim.ModeEphemeral)
				o.add(p)
			}
			closeAndExpect(e, zc, log, v, o)
		}},
		{"close-small-set", func(e *env) {
			// The set starts with 16 buckets (new HashSet<>()), a clone of
			// 5 paths has 8: the clone takes the set's order bucket by
			// bucket, so the set's size shows. Names are picked so that it
			// does (a set of 8 buckets would give another order).
			zc, log := e.wireWatcher()
			v := e.connect()
			makeParents(e)
			paths := smallSetPaths(e)
			closeAndExpect(e, zc, log, v, createEphemerals(e, v, paths))
		}},
		{"close-twelve-clone-grows", func(e *env) {
			// 12 paths fill a set of 16 buckets to its threshold without
			// growing it; a clone of them gets tableSizeFor((int)(12/0.75f
			// + 1)) = 32 buckets (JDK 17's HashMap.putMapEntries; JDK 19
			// and later size it ceil(12/0.75) = 16, the set's own order).
			// Names are picked so that the two orders differ.
			zc, log := e.wireWatcher()
			v := e.connect()
			makeParents(e)
			var paths []string
			for k := 0; ; k++ {
				require.Less(e.t, k, 1000, "no 12 names tell the clone's size apart")
				paths = paths[:0]
				for i := range 12 {
					paths = append(paths, e.p(parents[i%len(parents)], sprintf("t%d", k+i*11)))
				}
				trial := newEphemeralOrder()
				trial.add(paths...)
				if !slices.Equal(trial.order(), trial.cloneOrder()) {
					break
				}
			}
			closeAndExpect(e, zc, log, v, createEphemerals(e, v, paths))
		}},
		{"expiry-deletes-in-clone-order", func(e *env) {
			// 40 ephemerals grow the set to 64 buckets; once 14 are left,
			// a clone has 32, so its order is not the set's.
			e.needExpire()
			zc, log := e.wireWatcher()
			v := e.connectTimeout(min(max(e.facts().MinSessionTimeout, time.Second), e.facts().MaxSessionTimeout))
			o := newEphemeralOrder()
			paths := setUp(e, v, o)
			// Keep 14 whose clone order differs from the set's (nearly
			// any 14 do; the names depend on the case's root).
			var keep []string
			for k := 0; k < len(paths); k++ {
				keep = keep[:0]
				for i := range 14 {
					keep = append(keep, paths[(k+i*3)%len(paths)])
				}
				trial := newEphemeralOrder()
				trial.add(paths...)
				for _, p := range paths {
					if !slices.Contains(keep, p) {
						trial.remove(p)
					}
				}
				if !slices.Equal(trial.order(), trial.cloneOrder()) {
					break
				}
			}
			for _, p := range paths {
				if !slices.Contains(keep, p) {
					e.delete(v, p)
					o.remove(p)
				}
			}
			require.NotEqual(e.t, o.order(), o.cloneOrder(), "the case should tell a clone's order from the set's")
			watch(e, zc, o.order())
			require.NoError(e.t, e.b.Expire(e.ctx, v), "backend %s: Expire", e.b.Name)
			expect(e, zc, log, o.cloneOrder())
		}},
	}
}

// smallSetPaths returns 5 paths, s<k> and four consecutive s<j> under
// p("a"), that a set of 16 buckets and one of 8 clone to different orders,
// neither of them path order. It takes two paths that share their bucket
// among 8 but not among 16 for that: the names depend on the case's root.
func smallSetPaths(e *env) []string {
	e.t.Helper()
	name := func(i int) string { return e.p("a", sprintf("s%d", i)) }
	for k := range 100 {
		for j := k + 1; j < 200; j++ {
			paths := []string{name(k), name(j), name(j + 1), name(j + 2), name(j + 3)}
			o16, o8 := newEphemeralOrder(), newChildOrder()
			o16.add(paths...)
			o8.add(paths...)
			if got := o16.cloneOrder(); !slices.Equal(got, o8.cloneOrder()) && !slices.Equal(got, sorted(got)) {
				return paths
			}
		}
	}
	e.t.Fatal("no 5 names tell the table sizes apart")
	return nil
}

// parentOf returns the parent of an absolute path other than "/".
func parentOf(p string) string {
	i := len(p) - 1
	for i > 0 && p[i] != '/' {
		i--
	}
	if i == 0 {
		return "/"
	}
	return p[:i]
}
