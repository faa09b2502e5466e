package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// getEphemerals (3.6+, zksim.EphemeralsLister): the caller's own
// ephemerals whose path starts with a plain string prefix ("" and "/": all
// of them). Checked on a real 3.8.0 with raw requests; the server returns
// them in the order of a clone of the session's hash set (see
// ephemeralOrderCases), zksim sorts them.
func getEphemeralsCases() []testCase {
	return []testCase{
		{"lists-own-sorted", func(e *env) {
			w := e.connect()
			el := e.ephemeralsLister(w)
			e.create(e.c, e.p("d"), nil, zksim.ModePersistent)
			for _, name := range []string{"c", "a", "b"} {
				e.create(w, e.p("d", name), nil, zksim.ModeEphemeral)
			}
			got, err := el.GetEphemerals(e.ctx, e.p())
			require.NoError(e.t, err)
			require.Equal(e.t, []string{e.p("d", "a"), e.p("d", "b"), e.p("d", "c")}, got)
		}},
		{"prefix-is-a-plain-string", func(e *env) {
			w := e.connect()
			el := e.ephemeralsLister(w)
			e.create(w, e.p("ab"), nil, zksim.ModeEphemeral)
			e.create(w, e.p("abc"), nil, zksim.ModeEphemeral)
			e.create(w, e.p("b"), nil, zksim.ModeEphemeral)
			got, err := el.GetEphemerals(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, []string{e.p("ab"), e.p("abc")}, sorted(got))
		}},
		{"slash-lists-all-of-the-session", func(e *env) {
			w := e.connect()
			el := e.ephemeralsLister(w)
			e.create(w, e.p("x"), nil, zksim.ModeEphemeral)
			got := e.create(w, e.p("s-"), nil, zksim.ModeEphemeralSequential)
			all, err := el.GetEphemerals(e.ctx, "/")
			require.NoError(e.t, err)
			require.Equal(e.t, sorted([]string{e.p("x"), got}), sorted(all))
		}},
		{"excludes-other-sessions-and-persistent-nodes", func(e *env) {
			w := e.connect()
			el := e.ephemeralsLister(w)
			e.create(w, e.p("mine"), nil, zksim.ModeEphemeral)
			e.create(e.c, e.p("theirs"), nil, zksim.ModeEphemeral)
			e.create(w, e.p("persistent"), nil, zksim.ModePersistent)
			e.create(w, e.p("container"), nil, zksim.ModeContainer)
			got, err := el.GetEphemerals(e.ctx, e.p())
			require.NoError(e.t, err)
			require.Equal(e.t, []string{e.p("mine")}, got)
		}},
		{"empty-prefix-lists-all", func(e *env) {
			// checked: the server treats "" like "/".
			w := e.connect()
			el := e.ephemeralsLister(w)
			e.create(w, e.p("x"), nil, zksim.ModeEphemeral)
			got, err := el.GetEphemerals(e.ctx, "")
			require.NoError(e.t, err)
			require.Equal(e.t, []string{e.p("x")}, got)
		}},
		{"none-is-empty", func(e *env) {
			w := e.connect()
			got, err := e.ephemeralsLister(w).GetEphemerals(e.ctx, "/")
			require.NoError(e.t, err)
			require.Empty(e.t, got)
		}},
		{"deleted-not-listed", func(e *env) {
			w := e.connect()
			el := e.ephemeralsLister(w)
			e.create(w, e.p("a"), nil, zksim.ModeEphemeral)
			e.create(w, e.p("b"), nil, zksim.ModeEphemeral)
			require.NoError(e.t, w.Delete(e.ctx, e.p("a"), -1))
			got, err := el.GetEphemerals(e.ctx, e.p())
			require.NoError(e.t, err)
			require.Equal(e.t, []string{e.p("b")}, got)
		}},
	}
}

// getAllChildrenNumber (3.6+, zksim.ChildCounter): the number of
// descendants of a node, NoNode if it is missing (checked on a real 3.8.0
// with raw requests).
func childCountCases() []testCase {
	count := func(e *env, p string) int32 {
		e.t.Helper()
		n, err := e.childCounter(e.c).GetAllChildrenNumber(e.ctx, p)
		require.NoError(e.t, err, "getAllChildrenNumber %s", p)
		return n
	}
	return []testCase{
		{"counts-descendants", func(e *env) {
			e.childCounter(e.c)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "b", "c"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "d"), nil, zksim.ModeEphemeral)
			e.create(e.c, e.p("e"), nil, zksim.ModeContainer)
			require.Equal(e.t, int32(5), count(e, e.p()))
			require.Equal(e.t, int32(3), count(e, e.p("a")))
			require.Equal(e.t, int32(1), count(e, e.p("a", "b")))
		}},
		{"leaf-is-zero", func(e *env) {
			e.childCounter(e.c)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			require.Zero(e.t, count(e, e.p("a")))
		}},
		{"missing-no-node", func(e *env) {
			_, err := e.childCounter(e.c).GetAllChildrenNumber(e.ctx, e.p("missing"))
			e.is(err, zksim.ErrNoNode, "getAllChildrenNumber of a missing node")
		}},
		{"follows-deletes-and-other-sessions", func(e *env) {
			e.childCounter(e.c)
			c2 := e.connect()
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(c2, e.p("a", "e1"), nil, zksim.ModeEphemeral)
			e.create(c2, e.p("a", "e2"), nil, zksim.ModeEphemeral)
			require.Equal(e.t, int32(2), count(e, e.p("a")))
			require.NoError(e.t, c2.Close())
			require.Zero(e.t, count(e, e.p("a")))
		}},
	}
}
