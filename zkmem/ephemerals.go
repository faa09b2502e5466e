package zkmem

import (
	"math/bits"
	"strings"
)

// A session's ephemerals, kept so that closing or expiring the session
// deletes them, and getEphemerals lists them, in the order ZooKeeper 3.8.0
// does.
//
// The server keeps them in a java.util.HashSet<String> of full paths per
// session (DataTree.ephemerals; createNode makes it with new HashSet<>(),
// 16 buckets, at the session's first ephemeral, deleteNode removes from it,
// and it lives until the session ends). Both getEphemerals
// (FinalRequestProcessor) and closeSession (PrepRequestProcessor, whose
// CloseSessionTxn lists the paths to delete, closeSessionTxnEnabled being
// the default) work on DataTree.getEphemerals(sessionId): a clone of that
// set. HashSet.clone is HashMap.clone, which puts the entries, in the
// set's iteration order, into a new table sized for them
// (HashMap.putMapEntries: tableSizeFor((int)(size/0.75f + 1)) buckets, so
// not necessarily the set's own size). The order is the clone's iteration
// order.
//
// The live set is the children table of children.go, reused as is: a
// holder node whose children are one entry node per ephemeral, named by
// the ephemeral's full path, so that the same hash, growth and bucket
// order apply. The clone is modelled by cloneOrder.
//
// Not modelled: a bucket Java turns into a tree (as for children: nine
// paths sharing a bucket of a table of 64 or more, in the set or in its
// clone), and requests of the session still in the server's pipeline when
// it closes (PrepRequestProcessor adds their paths to the clone or removes
// them from it); zkmem applies every request before the next.
type ephemeralSet struct {
	holder  node            // its children are the entries
	entries map[*node]*node // ephemeral -> its entry among holder's children
	spare   []*node         // removed entries, for reuse: a lock's create and delete allocate none
}

const maxSpareEntries = 8

// sessionSetTableLog is the table size of new HashSet<>(): 16 buckets.
const sessionSetTableLog = 4

func newEphemeralSet() *ephemeralSet {
	return &ephemeralSet{
		holder:  node{tableLog: sessionSetTableLog},
		entries: make(map[*node]*node),
	}
}

func (es *ephemeralSet) len() int { return len(es.entries) }

// add puts n in the set (HashSet.add). With keep, it returns how to undo
// that, leaving the set exactly as it was; otherwise nil.
func (es *ephemeralSet) add(n *node, free *childSets, keep bool) (undo func()) {
	var e *node
	if k := len(es.spare); k > 0 {
		e, es.spare = es.spare[k-1], es.spare[:k-1]
	} else {
		e = new(node)
	}
	*e = node{path: n.path, jhash: javaHash(n.path), parent: &es.holder}
	es.entries[n] = e
	before, log := es.holder.addChild(e, free, keep)
	if !keep {
		return nil
	}
	return func() {
		es.holder.unaddChild(e, before, log, free)
		delete(es.entries, n)
	}
}

// remove takes n out of the set (HashSet.remove). With keep, it returns
// how to put n back in the very place it had; otherwise nil.
func (es *ephemeralSet) remove(n *node, free *childSets, keep bool) (undo func()) {
	e := es.entries[n]
	if e == nil {
		if keep {
			return func() {}
		}
		return nil
	}
	delete(es.entries, n)
	prev := es.holder.removeChild(e, free)
	if !keep {
		if len(es.spare) < maxSpareEntries {
			es.spare = append(es.spare, e)
		}
		return nil
	}
	return func() {
		es.holder.restoreChild(e, prev, free)
		es.entries[n] = e
	}
}

// ephEffect is an add to (add) or a removal from session sess's set of
// the ephemeral n, as a log entry carries it to the members that fell
// behind.
type ephEffect struct {
	sess int64
	n    *node
	add  bool
}

// clone returns a copy of the set that lists and evolves as es does: the
// same table, each bucket's entries in the same order (a member that
// falls behind keeps the sessions' sets as they were).
func (es *ephemeralSet) clone() *ephemeralSet {
	c := &ephemeralSet{holder: es.holder, entries: make(map[*node]*node, len(es.entries))}
	c.holder.children = nil
	src := es.holder.children
	if src == nil {
		return c
	}
	copies := make(map[*node]*node, len(es.entries))
	cs := &childSet{table: make([]*node, len(src.table)), n: src.n}
	c.holder.children = cs
	for i, head := range src.table {
		var last *node
		for e := head; e != nil; e = e.next {
			ce := new(node)
			*ce = *e
			ce.parent, ce.next = &c.holder, nil
			copies[e] = ce
			if last == nil {
				cs.table[i] = ce
			} else {
				last.next = ce
			}
			last = ce
		}
	}
	for n, e := range es.entries {
		c.entries[n] = copies[e]
	}
	return c
}

// paths returns the paths that start with prefix in the order of a clone
// of the set (DataTree.getEphemerals).
func (es *ephemeralSet) paths(prefix string) []string {
	var order []*node
	if es != nil {
		order = cloneOrder(es.holder.appendChildren(make([]*node, 0, es.len())))
	}
	paths := make([]string, 0, len(order))
	for _, e := range order {
		if strings.HasPrefix(e.path, prefix) {
			paths = append(paths, e.path)
		}
	}
	return paths
}

// cloneOrder returns the iteration order of a clone of a Java HashSet
// whose entries iterate in the order src (HashMap.clone, putMapEntries):
// a table of tableSizeFor((int)(n/0.75f + 1)) buckets is filled in src's
// order, and doubles whenever a bucket reaches 9 entries while it has
// fewer than 64 buckets (putVal's treeifyBin). Since filling and doubling
// keep the relative order of entries that share a bucket, the result is
// src stably sorted by the bucket of the final table.
func cloneOrder(src []*node) []*node {
	if len(src) == 0 {
		return src
	}
	t := int32(float32(len(src))/float32(0.75) + 1) // Java float arithmetic
	log := bits.Len32(uint32(t - 1))                // tableSizeFor(t), t >= 2
	counts := make([]int32, 1<<log)
	for i, e := range src {
		b := e.jhash & (1<<log - 1)
		counts[b]++
		if counts[b] > treeifyBin && log < treeifyTableLog {
			log++
			counts = make([]int32, 1<<log)
			for _, f := range src[:i+1] {
				counts[f.jhash&(1<<log-1)]++
			}
		}
	}
	// A stable counting sort by bucket.
	start := make([]int32, len(counts)+1)
	for _, e := range src {
		start[e.jhash&(1<<log-1)+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	out := make([]*node, len(src))
	for _, e := range src {
		b := e.jhash & (1<<log - 1)
		out[start[b]] = e
		start[b]++
	}
	return out
}

// javaTrim is String.trim: it strips every char up to ' ' at both ends.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}
