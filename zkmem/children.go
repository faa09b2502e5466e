package zkmem

import (
	"math/bits"
	"slices"
)

// A node's children, kept so that listing them gives the order ZooKeeper
// 3.8.0 gives.
//
// The server keeps a node's children in a java.util.HashSet<String>
// (DataNode.addChild: new HashSet<>(8) on the first child, never dropped
// afterwards, not even when the node loses its last child), and
// getChildren copies that set into a list. So the order a client sees is
// the iteration order of a Java HashMap: its buckets in index order, each
// bucket's entries in the order they were put there. zkmem keeps the same
// table:
//
//   - the hash of a name is Java's String.hashCode over its UTF-16 code
//     units, spread as HashMap.hash does (h ^ h>>>16); a bucket is the
//     hash's low bits;
//   - the table has 8 buckets at the first child and doubles when the
//     number of children passes three quarters of it; doubling splits each
//     bucket in two, keeping the entries' relative order; removals never
//     shrink it;
//   - a bucket that reaches 9 entries in a table of fewer than 64 buckets
//     doubles the table too (HashMap.treeifyBin below MIN_TREEIFY_CAPACITY);
//   - entries of a bucket are in insertion order.
//
// Not modelled: in a table of 64 buckets or more, a bucket that reaches 9
// entries becomes a red-black tree in Java, whose iteration order follows
// the tree's shape rather than insertion order. With the spread hash of
// real names that takes nine names sharing their hash's low 6+ bits at a
// load of at most 3/4 (for random hashes, about one bucket in ten million
// at full load); zkmem keeps such a bucket in insertion order.
//
// The table is a slice of bucket heads and the entries are the child nodes
// themselves, linked by node.next: a create appends to one short list, a
// delete unlinks from one, and no comparison of names is ever made. When
// a node loses its last child its table goes to a free list (only its size,
// node.tableLog, stays with the node, since it decides the order of later
// children), so a lone child created and deleted over and over, as the lock
// and election recipes do, allocates nothing for the parent. A parent that
// once had a million children and lost them all gets a table that size
// again with its next child, as the server keeps its table all along.

// childSet is the table of one node's children.
type childSet struct {
	table []*node // bucket heads; len(table) == 1<<owner.tableLog
	n     int32   // number of children
}

const (
	initialTableLog = 3 // new HashSet<String>(8)
	treeifyTableLog = 6 // MIN_TREEIFY_CAPACITY = 64
	treeifyBin      = 8 // a bucket of this many entries is full (TREEIFY_THRESHOLD)
	maxFreeTableLog = 6 // free tables of up to 64 buckets are kept
	maxFreeTables   = 64
)

// childSets is a free list of emptied child tables by size.
type childSets struct {
	free [maxFreeTableLog + 1][]*childSet
}

func (f *childSets) get(log uint8) *childSet {
	if int(log) < len(f.free) {
		if l := f.free[log]; len(l) > 0 {
			cs := l[len(l)-1]
			f.free[log] = l[:len(l)-1]
			return cs
		}
	}
	return &childSet{table: make([]*node, 1<<log)}
}

// put takes back an empty table (every bucket nil). Tables of more than
// 1<<maxFreeTableLog buckets are left to the garbage collector.
func (f *childSets) put(cs *childSet) {
	log := bits.TrailingZeros(uint(len(cs.table)))
	if log < len(f.free) && len(f.free[log]) < maxFreeTables {
		f.free[log] = append(f.free[log], cs)
	}
}

// javaHash is HashMap.hash(name): String.hashCode over the UTF-16 code
// units of name, spread as h ^ (h >>> 16). A valid path has no rune beyond
// U+FFFF (zksim.ValidatePath), but the surrogate pair is handled anyway.
func javaHash(name string) uint32 {
	var h uint32
	for i := 0; i < len(name); i++ {
		if b := name[i]; b < 0x80 {
			h = 31*h + uint32(b)
			continue
		}
		for _, r := range name[i:] {
			if r >= 0x10000 {
				r -= 0x10000
				h = 31*h + uint32(0xd800+(r>>10))
				h = 31*h + uint32(0xdc00+(r&0x3ff))
			} else {
				h = 31*h + uint32(r)
			}
		}
		break
	}
	return h ^ h>>16
}

func (n *node) numChildren() int {
	if n.children == nil {
		return 0
	}
	return int(n.children.n)
}

// addChild appends c, whose jhash is set, to n's children
// (HashMap.putVal). If the table grows and keep is set, it returns n's
// children in their order before the growth (c included) and the table's
// size before it, for unaddChild.
func (n *node) addChild(c *node, free *childSets, keep bool) (before []*node, log uint8) {
	if n.tableLog == 0 {
		n.tableLog = initialTableLog
	}
	log = n.tableLog
	cs := n.children
	if cs == nil {
		cs = free.get(n.tableLog)
		n.children = cs
	}
	p := &cs.table[c.jhash&uint32(len(cs.table)-1)]
	inBin := 0
	for *p != nil {
		p = &(*p).next
		inBin++
	}
	*p, c.next = c, nil
	cs.n++
	full := inBin >= treeifyBin && n.tableLog < treeifyTableLog
	over := int(cs.n) > len(cs.table)/4*3
	if (full || over) && keep {
		before = n.appendChildren(make([]*node, 0, cs.n))
	}
	if full {
		n.grow(free)
	}
	if int(cs.n) > len(cs.table)/4*3 { // threshold = capacity * 0.75
		n.grow(free)
	}
	return before, log
}

// grow doubles n's table (HashMap.resize): bucket i splits into buckets i
// and i+old, each keeping its entries' relative order.
func (n *node) grow(free *childSets) {
	cs := n.children
	old := len(cs.table)
	var table []*node
	if int(n.tableLog)+1 < len(free.free) && len(free.free[n.tableLog+1]) > 0 {
		spare := free.get(n.tableLog + 1)
		table = spare.table
	} else {
		table = make([]*node, 2*old)
	}
	for i, e := range cs.table {
		lo, hi := &table[i], &table[i+old]
		for e != nil {
			next := e.next
			e.next = nil
			if e.jhash&uint32(old) == 0 {
				*lo = e
				lo = &e.next
			} else {
				*hi = e
				hi = &e.next
			}
			e = next
		}
	}
	clear(cs.table)
	free.put(&childSet{table: cs.table})
	cs.table = table
	n.tableLog++
}

// removeChild unlinks c from n's children (HashMap.removeNode). It returns
// the entry before c in its bucket (nil if c was first), for restoreChild.
func (n *node) removeChild(c *node, free *childSets) (prev *node) {
	cs := n.children
	if cs == nil {
		return nil
	}
	p := &cs.table[c.jhash&uint32(len(cs.table)-1)]
	for *p != nil && *p != c {
		prev = *p
		p = &(*p).next
	}
	if *p == nil {
		return nil
	}
	*p, c.next = c.next, nil
	cs.n--
	if cs.n == 0 {
		n.children = nil
		free.put(cs) // n.tableLog stays: it orders the next children
	}
	return prev
}

// restoreChild undoes removeChild(c), which returned prev, in a state
// where nothing else changed since: c goes back to the very place it had.
func (n *node) restoreChild(c, prev *node, free *childSets) {
	if n.children == nil {
		n.children = free.get(n.tableLog)
	}
	cs := n.children
	if prev == nil {
		p := &cs.table[c.jhash&uint32(len(cs.table)-1)]
		c.next, *p = *p, c
	} else {
		c.next, prev.next = prev.next, c
	}
	cs.n++
}

// unaddChild undoes addChild(c), which returned before and log, in a state
// where nothing else changed since: a table that grew goes back to 1<<log
// buckets with the children in their old places, and c goes.
func (n *node) unaddChild(c *node, before []*node, log uint8, free *childSets) {
	if before != nil {
		n.rebuild(before, log, free)
	}
	n.removeChild(c, free)
}

// rebuild lays children out again in a table of 1<<log buckets, appending
// them in the order given.
func (n *node) rebuild(order []*node, log uint8, free *childSets) {
	cs := n.children
	clear(cs.table)
	free.put(&childSet{table: cs.table})
	cs.table = free.get(log).table
	n.tableLog = log
	for _, c := range order {
		p := &cs.table[c.jhash&uint32(len(cs.table)-1)]
		for *p != nil {
			p = &(*p).next
		}
		*p, c.next = c, nil
	}
}

// appendChildren appends n's children to dst in the server's order.
func (n *node) appendChildren(dst []*node) []*node {
	if n.children == nil {
		return dst
	}
	for _, e := range n.children.table {
		for ; e != nil; e = e.next {
			dst = append(dst, e)
		}
	}
	return dst
}

// childNames returns the names of n's children in the order a ZooKeeper
// 3.8.0 server lists them, or sorted.
func (n *node) childNames(sorted bool) []string {
	names := make([]string, 0, n.numChildren())
	if n.children != nil {
		for _, e := range n.children.table {
			for ; e != nil; e = e.next {
				names = append(names, e.name())
			}
		}
	}
	if sorted {
		slices.Sort(names)
	}
	return names
}
