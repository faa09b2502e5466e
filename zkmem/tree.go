package zkmem

import (
	"hash/maphash"
	"strings"

	"github.com/google/btree"
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
	key      uint64 // nameKey(name), to order siblings without loading path
	nameAt   int32
	version  int32
	cversion int32 // internal: number of child creates
	aversion int32
	kind     nodeKind
	parent   *node
	children *btree.BTreeG[*node] // nil until the first child
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

// nameKey packs the first 8 bytes of name big-endian, padded with zero
// bytes. For any two names, a smaller key means a smaller name (a zero pad
// sorts before every byte a longer name could have there), so nodeLess
// needs the names themselves only for equal keys.
//
// Why: comparing names loads the child node and then, elsewhere in memory,
// its path: in a wide parent, two cache misses for each of the ~log2(n)
// comparisons of a B-tree search, most of the cost of a create or delete.
// With the key in the node it is one. (The node has room for it: 136 bytes
// became 144, which is the size class it was allocated in anyway.)
func nameKey(name string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(name) {
			k |= uint64(name[i])
		}
	}
	return k
}

func nodeLess(a, b *node) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.name() < b.name()
}

// childrenDegree keeps the per-parent B-tree small for the common case of a
// few children while staying shallow for very wide parents.
const childrenDegree = 16

func (n *node) numChildren() int {
	if n.children == nil {
		return 0
	}
	return n.children.Len()
}

// addChild and removeChild take the tree's free list of B-tree nodes, which
// every parent shares. btree.NewG would give each parent a free list of its
// own, three more allocations (one of 256 bytes) for every parent's first
// child; and a parent losing its last child returns its B-tree node to the
// shared list, so that a create and delete of a lone child, as the lock
// and election recipes do, allocates no B-tree node.
func (n *node) addChild(c *node, free *btree.FreeListG[*node]) {
	if n.children == nil {
		n.children = btree.NewWithFreeListG(childrenDegree, nodeLess, free)
	}
	n.children.ReplaceOrInsert(c)
}

func (n *node) removeChild(c *node) {
	if n.children == nil {
		return
	}
	n.children.Delete(c)
	if n.children.Len() == 0 {
		n.children.Clear(true) // the empty root goes to the free list
		n.children = nil
	}
}

// childNames returns the names of n's children in sorted order.
func (n *node) childNames() []string {
	names := make([]string, 0, n.numChildren())
	if n.children != nil {
		n.children.Ascend(func(c *node) bool {
			names = append(names, c.name())
			return true
		})
	}
	return names
}

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

// tree is the znode tree: an index by path for lookup, per-parent B-trees
// for order.
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
	free     *btree.FreeListG[*node] // see addChild
}

func newTree(open, read *aclList) *tree {
	t := &tree{
		seed:  maphash.MakeSeed(),
		mask:  ^uint64(0),
		nodes: make(map[uint64]*node),
		free:  btree.NewFreeListG[*node](btree.DefaultFreeListSize),
	}
	t.root = &node{path: "/", nameAt: 1, acl: open}
	t.nodes[t.hash("/")] = t.root
	// The system nodes of a fresh server, with zero zxids and times. The
	// config node is read-only, its ACL set with version -1 at startup
	// (ZKDatabase), which leaves its aversion at -1.
	for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		n := &node{path: p, nameAt: int32(strings.LastIndexByte(p, '/') + 1), parent: t.get(parentPath(p)), acl: open}
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
	n.key = nameKey(n.name())
	n.parent.addChild(n, t.free)
	t.index(n)
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
	n.parent.removeChild(n)
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
		n.children.Ascend(func(c *node) bool {
			total += 1 + countDescendants(c)
			return true
		})
	}
	return total
}
