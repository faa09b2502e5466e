package zkmem

import (
	"hash/maphash"
	"strings"

	"github.com/zksim/zksim"
)

// nodeKind distinguishes the node types whose lifetime the server manages.
type nodeKind uint8

const (
	kindPlain nodeKind = iota
	kindEphemeral
	kindContainer
	kindTTL
)

// node is a znode. The Stat is stored as ZooKeeper's StatPersisted: the
// client-visible cversion, dataLength and numChildren are computed on read.
type node struct {
	path     string // full path; name is path[nameAt:]
	next     *node  // the next sibling in its bucket of parent.children
	nameAt   int32
	version  int32
	cversion int32 // internal: number of child creates
	aversion int32
	kind     nodeKind
	tableLog uint8  // log2 of the size of children's table; 0 before the first child
	jhash    uint32 // javaHash(name), which places the node among its siblings
	parent   *node
	children *childSet // nil while there are no children
	data     []byte
	acl      *aclList
	czxid    int64
	mzxid    int64
	pzxid    int64
	ctime    int64
	mtime    int64
	owner    int64 // session id for ephemerals, ttl in ms for TTL nodes
}

func (n *node) name() string { return n.path[n.nameAt:] }

// stat returns the client view of n's Stat (DataNode.copyStat).
func (n *node) stat() *zksim.Stat {
	st := new(zksim.Stat)
	n.fillStat(st)
	return st
}

func (n *node) fillStat(st *zksim.Stat) {
	nc := int32(n.numChildren())
	*st = zksim.Stat{
		Czxid:       n.czxid,
		Mzxid:       n.mzxid,
		Ctime:       n.ctime,
		Mtime:       n.mtime,
		Version:     n.version,
		Cversion:    n.cversion*2 - nc,
		Aversion:    n.aversion,
		DataLength:  int32(len(n.data)),
		NumChildren: nc,
		Pzxid:       n.pzxid,
	}
	if n.kind == kindEphemeral {
		st.EphemeralOwner = n.owner
	}
}

// parentPath returns the parent of a valid path other than "/".
func parentPath(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return "/"
	}
	return path[:i]
}

// tree is the znode tree: an index by path for lookup, per-parent hash
// tables (children.go) for the order of children.
//
// The index is keyed by a 64-bit hash of the path, not by the path. A
// map[string] rehashes every key each time it grows, loading each path
// string from wherever it lives, a cache miss per node: growth alone was
// about half the cost of inserting into a large map[string]. Hashing a
// path once and keying the map by the hash leaves nothing to load on
// growth, and a lookup that finds no slot with the hash (every create's
// NodeExists check) compares no strings. A node whose hash another node
// already holds goes to overflow, keyed by path; with 64-bit hashes that
// is rare, but it keeps the index exact.
type tree struct {
	seed     maphash.Seed
	mask     uint64           // ANDed into every hash: all ones; tests narrow it to force collisions
	nodes    map[uint64]*node // by hash(path)
	overflow map[string]*node // by path: nodes whose hash is taken in nodes
	root     *node
	sets     childSets // emptied children tables, for reuse
	sorted   bool      // list children sorted (Options.SortedChildren)
	// rec, set on an ensemble's committed tree only, records each insert
	// and remove in the transaction being made (see effect).
	rec *txn
}

func newTree(open, read *aclList) *tree {
	t := &tree{
		seed:  maphash.MakeSeed(),
		mask:  ^uint64(0),
		nodes: make(map[uint64]*node),
	}
	// Every node of a fresh server holds empty data, not null (DataTree
	// builds them with new byte[0]): getData answers length 0.
	t.root = &node{path: "/", nameAt: 1, acl: open, data: []byte{}}
	t.nodes[t.hash("/")] = t.root
	// The system nodes of a fresh server, with zero zxids and times. The
	// config node is read-only, its ACL set with version -1 at startup
	// (ZKDatabase), which leaves its aversion at -1.
	for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		n := &node{path: p, nameAt: int32(strings.LastIndexByte(p, '/') + 1), parent: t.get(parentPath(p)), acl: open, data: []byte{}}
		if p == "/zookeeper/config" {
			n.acl, n.aversion = read, -1
		}
		t.insert(n)
	}
	return t
}

func (t *tree) hash(path string) uint64 { return maphash.String(t.seed, path) & t.mask }

func (t *tree) get(path string) *node {
	if n := t.nodes[t.hash(path)]; n != nil && n.path == path {
		return n
	}
	if len(t.overflow) > 0 {
		return t.overflow[path]
	}
	return nil
}

// insert adds n, whose path is not in the tree, below n.parent.
func (t *tree) insert(n *node) {
	if t.rec != nil {
		t.rec.fx = append(t.rec.fx, effect{path: n.path, insert: true})
	}
	n.jhash = javaHash(n.name())
	n.parent.addChild(n, &t.sets, false)
	t.index(n)
}

// insertUndoable is insert for a multi: it returns how to take n out
// again, leaving its siblings exactly as they were.
func (t *tree) insertUndoable(n *node) (undo func()) {
	if t.rec != nil {
		t.rec.fx = append(t.rec.fx, effect{path: n.path, insert: true})
	}
	n.jhash = javaHash(n.name())
	before, log := n.parent.addChild(n, &t.sets, true)
	t.index(n)
	return func() {
		n.parent.unaddChild(n, before, log, &t.sets)
		t.unindex(n)
	}
}

// index enters n in the index by path.
func (t *tree) index(n *node) {
	h := t.hash(n.path)
	if t.nodes[h] == nil {
		t.nodes[h] = n
		return
	}
	if t.overflow == nil {
		t.overflow = make(map[string]*node)
	}
	t.overflow[n.path] = n
}

func (t *tree) remove(n *node) {
	if t.rec != nil {
		t.rec.fx = append(t.rec.fx, effect{path: n.path})
	}
	n.parent.removeChild(n, &t.sets)
	t.unindex(n)
}

// removeUndoable is remove for a multi: it returns how to put n back in
// the place it had among its siblings.
func (t *tree) removeUndoable(n *node) (undo func()) {
	if t.rec != nil {
		t.rec.fx = append(t.rec.fx, effect{path: n.path})
	}
	prev := n.parent.removeChild(n, &t.sets)
	t.unindex(n)
	return func() {
		n.parent.restoreChild(n, prev, &t.sets)
		t.index(n)
	}
}

func (t *tree) unindex(n *node) {
	if h := t.hash(n.path); t.nodes[h] == n {
		delete(t.nodes, h)
	} else {
		delete(t.overflow, n.path)
	}
}

// isSpecialPath reports the paths a client may not delete
// (ZKDatabase.isSpecialPath).
func isSpecialPath(path string) bool {
	switch path {
	case "/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config":
		return true
	}
	return false
}

// countDescendants counts every node below n.
func countDescendants(n *node) int32 {
	var total int32
	if n.children != nil {
		for _, c := range n.children.table {
			for ; c != nil; c = c.next {
				total += 1 + countDescendants(c)
			}
		}
	}
	return total
}
