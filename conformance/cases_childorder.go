package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// The order of children: neither sorted nor creation order, but the
// iteration order of the Java hash set that holds a node's children
// (childOrder models it), for the same history of creates and deletes.
func childOrderCases() []testCase {
	// build creates names under p, in order, in multis of up to 100, and
	// records them in o.
	build := func(e *env, p string, o *childOrder, names ...string) {
		for len(names) > 0 {
			k := min(len(names), 100)
			ops := make([]zksim.Op, 0, k)
			for _, n := range names[:k] {
				ops = append(ops, &zksim.CreateOp{Path: p + "/" + n, Mode: zksim.ModePersistent, ACL: zksim.OpenACL()})
			}
			_, err := e.c.Multi(e.ctx, ops...)
			require.NoError(e.t, err)
			o.add(names[:k]...)
			names = names[k:]
		}
	}
	drop := func(e *env, p string, o *childOrder, names ...string) {
		for _, n := range names {
			e.delete(e.c, p+"/"+n)
		}
		o.remove(names...)
	}
	// check compares both listings with the model.
	check := func(e *env, p string, o *childOrder, what string) {
		e.t.Helper()
		got, _, err := e.c.Children(e.ctx, p)
		require.NoError(e.t, err)
		require.Equal(e.t, o.order(), nonNil(got), "children of %s %s", p, what)
		got, _, _, err = e.c.ChildrenW(e.ctx, p)
		require.NoError(e.t, err)
		require.Equal(e.t, o.order(), nonNil(got), "childrenW of %s %s", p, what)
	}
	return []testCase{
		{"few-children", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			for _, n := range []string{"b", "a", "lock-0000000001", "zz", "c", "q"} {
				e.create(e.c, e.p("a", n), nil, zksim.ModePersistent)
				o.add(n)
				check(e, e.p("a"), o, "after creating "+n)
			}
		}},
		{"after-deletes", func(e *env) {
			// Deletes keep the others in place and never shrink the
			// table; a name created again goes behind its bucket's others.
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			var names []string
			for i := 0; i < 40; i++ {
				names = append(names, sprintf("n%d", i*13))
			}
			build(e, e.p("a"), o, names...)
			check(e, e.p("a"), o, "after 40 creates")
			drop(e, e.p("a"), o, names[:35]...)
			check(e, e.p("a"), o, "after deleting 35")
			build(e, e.p("a"), o, names[3], names[0], "m", names[20])
			check(e, e.p("a"), o, "after creating some again")
			drop(e, e.p("a"), o, names[35:]...)
			build(e, e.p("a"), o, names[36], names[35])
			check(e, e.p("a"), o, "after emptying a bucket and refilling it")
		}},
		{"emptied-parent-keeps-its-table", func(e *env) {
			// A parent that had 40 children and lost them all still has a
			// table of 64 buckets: its next children are ordered by 6 bits
			// of their hash, not 3 as under a new parent.
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("b"), nil, zksim.ModePersistent)
			o, fresh := newChildOrder(), newChildOrder()
			var names []string
			for i := 0; i < 40; i++ {
				names = append(names, sprintf("x%d", i))
			}
			build(e, e.p("a"), o, names...)
			drop(e, e.p("a"), o, names...)
			later := []string{"k7", "a", "k15", "zz", "k23"}
			build(e, e.p("a"), o, later...)
			build(e, e.p("b"), fresh, later...)
			check(e, e.p("a"), o, "after emptying and refilling")
			check(e, e.p("b"), fresh, "a new parent")
			require.NotEqual(e.t, o.order(), fresh.order(), "the case should tell the two tables apart")
		}},
		{"growth-past-hundreds", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			var names []string
			for i := 0; i < 700; i++ {
				names = append(names, sprintf("member-%010d", i))
			}
			build(e, e.p("a"), o, names[:100]...)
			check(e, e.p("a"), o, "at 100")
			build(e, e.p("a"), o, names[100:]...)
			check(e, e.p("a"), o, "at 700")
			var gone []string
			for i := 0; i < 700; i += 3 {
				gone = append(gone, names[i])
			}
			drop(e, e.p("a"), o, gone...)
			check(e, e.p("a"), o, "after deleting every third")
			build(e, e.p("a"), o, "back", names[0], names[699])
			check(e, e.p("a"), o, "after creating three more")
		}},
		{"sequential-children", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			for i := 0; i < 30; i++ {
				p := e.create(e.c, e.p("a", "lock-"), nil, zksim.ModeEphemeralSequential)
				o.add(p[len(e.p("a"))+1:])
			}
			check(e, e.p("a"), o, "after 30 sequential creates")
		}},
		{"non-ascii-names", func(e *env) {
			// The hash is over UTF-16 code units, not UTF-8 bytes.
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			names := []string{"é", "ça", "中文", "ключ", "naïve", "日本語のノード", "ü", "Ω", "a", "ß", "€uro", "zoë", "ﬁ", "한국어"}
			for _, n := range names {
				e.create(e.c, e.p("a", n), nil, zksim.ModePersistent)
				o.add(n)
			}
			check(e, e.p("a"), o, "with non-ASCII names")
		}},
		{"full-bucket-doubles-small-table", func(e *env) {
			// "Aa" and "BB" have one hash, and so do all strings made of
			// them: the ninth such name in a table of 32 buckets doubles it
			// to 64 though the set is not 3/4 full (18 of 32). The fillers
			// sit in buckets of their own, half of them moving when the
			// table doubles, so that the doubling shows in the order. (A
			// tenth equal hash would make the bucket a tree; not modelled.)
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			same := []string{""}
			for len(same) < 16 {
				var next []string
				for _, s := range same {
					next = append(next, s+"Aa", s+"BB")
				}
				same = next
			}
			spread := func(s string) uint32 { h := uint32(javaStringHash(s)); return h ^ h>>16 }
			used := map[uint32]bool{spread(same[0]) & 31: true}
			var fill []string
			for k := 0; len(fill) < 9; k++ {
				f := sprintf("f%d", k*7)
				if h := spread(f); !used[h&31] && h>>5&1 == uint32(len(fill)%2) {
					used[h&31] = true
					fill = append(fill, f)
				}
			}
			for i := 0; i < 9; i++ {
				build(e, e.p("a"), o, same[i], fill[i])
				check(e, e.p("a"), o, sprintf("after %d equal hashes", i+1))
			}
			require.Equal(e.t, uint(6), o.log, "the model's table doubled to 64")
		}},
		{"failed-multi-keeps-order", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			o := newChildOrder()
			var names []string
			for i := 0; i < 20; i++ {
				names = append(names, sprintf("c%d", i))
			}
			build(e, e.p("a"), o, names...)
			var ops []zksim.Op
			for i := 0; i < 30; i++ {
				ops = append(ops, &zksim.CreateOp{Path: e.p("a", sprintf("new%d", i)), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()})
			}
			for _, n := range names[:10] {
				ops = append(ops, &zksim.DeleteOp{Path: e.p("a", n), Version: -1})
			}
			ops = append(ops, &zksim.CheckOp{Path: e.p("missing"), Version: -1})
			_, err := e.c.Multi(e.ctx, ops...)
			e.is(err, zksim.ErrNoNode, "a multi ending in a failed check")
			check(e, e.p("a"), o, "after a failed multi")
			build(e, e.p("a"), o, "later")
			check(e, e.p("a"), o, "after one more create")
		}},
	}
}

func nonNil(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
