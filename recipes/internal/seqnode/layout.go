package seqnode

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
)

// Layout is whose naming and ordering of contender nodes a recipe follows,
// so that it can share a directory with that library's recipes.
type Layout int

const (
	// Zksim is the recipes' own layout: protected names
	// _c_<guid>-<name><seq>, only the names of the recipe's markers
	// taken part, ordered as serial numbers (Compare).
	Zksim Layout = iota
	// Curator is Apache Curator's layout: the same protected names, but
	// every child of the directory takes part, ordered as Curator's
	// LockInternals.getSortedChildren orders them: by the text after the
	// last occurrence of each marker in turn (the whole name when there is
	// none), compared as Java strings.
	Curator
	// Kazoo is kazoo's layout: names <32 hex digits><name><seq>, only the
	// children whose name ends in a marker and a sequence take part,
	// ordered by the text of the sequence, as kazoo's Lock orders them.
	Kazoo
)

// String names the layout.
func (l Layout) String() string {
	switch l {
	case Zksim:
		return "Zksim"
	case Curator:
		return "Curator"
	case Kazoo:
		return "Kazoo"
	}
	return "Layout(?)"
}

// KazooGUID returns a GUID in kazoo's form (uuid4().hex: 32 hexadecimal
// digits, no dashes), drawn as NewGUID draws. ProtectedName and HasGUID
// tell the two forms apart by their length.
func KazooGUID(guid string) string { return strings.ReplaceAll(guid, "-", "") }

// isKazooGUID reports whether guid is in KazooGUID's form.
func isKazooGUID(guid string) bool { return len(guid) == 32 && !strings.Contains(guid, "-") }

// GUIDFor returns guid in the form layout l names its nodes with.
func (l Layout) GUIDFor(guid string) string {
	if l == Kazoo {
		return KazooGUID(guid)
	}
	return guid
}

// Order returns the contenders among children, in the order layout l
// gives them, for a recipe whose nodes carry one of markers (ours
// included). The Marker of a node is the marker its name carries ("" for
// a child that takes part without one, in the Curator layout). foreign is
// the first child that belongs to another library's layout which l cannot
// order as that library does (see Foreign), "" when there is none.
func (l Layout) Order(children []string, markers ...string) (nodes []Node, foreign string) {
	if i := slices.IndexFunc(children, func(c string) bool { return l.Foreign(c, markers...) }); i >= 0 {
		foreign = children[i]
	}
	switch l {
	case Curator:
		return curatorOrder(children, markers), foreign
	case Kazoo:
		return kazooOrder(children, markers), foreign
	}
	return ParseAll(children, markers...), foreign
}

// Foreign reports whether child is a contender node of another library
// (or another recipe) that layout l, for a recipe whose nodes carry
// markers, does not order as its owner does, so that neither can see the
// other in line: a kazoo node (<32 hex>__lock__<seq> or __rlock__) to the
// Zksim and Curator layouts; a protected node (_c_<guid>-<name><seq>) with
// one of Curator's names (lock-, latch-, __READ__, __WRIT__) other than
// markers to the Zksim layout, and with one of zksim's own names (read-,
// write-, n_) to the Curator layout; any protected node to the Kazoo
// layout.
func (l Layout) Foreign(child string, markers ...string) bool {
	switch l {
	case Kazoo:
		return protectedNode.MatchString(child)
	case Curator:
		return kazooNode.MatchString(child) || protectedKindIn(child, zksimOnly)
	default:
		others := slices.DeleteFunc(slices.Clone(curatorNames), func(n string) bool { return slices.Contains(markers, n) })
		return kazooNode.MatchString(child) || protectedKindIn(child, others)
	}
}

var (
	// kazooNode matches a kazoo lock, read-lock or election node.
	kazooNode = regexp.MustCompile(`^[0-9a-f]{32}__r?lock__-?[0-9]{9,10}$`)
	// protectedNode matches _c_<guid>-<name><seq>.
	protectedNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-.*[0-9]{9,10}$`)
	// The names of Curator's contender nodes, and of those only zksim
	// writes.
	curatorNames = []string{"lock-", "latch-", "__READ__", "__WRIT__"}
	zksimOnly    = []string{"read-", "write-", "n_"}
)

// protectedKindIn reports whether child is a protected contender node
// _c_<guid>-<name><seq> whose name is one of names.
func protectedKindIn(child string, names []string) bool {
	if !protectedNode.MatchString(child) {
		return false
	}
	rest := child[len("_c_")+36+1:]
	return slices.ContainsFunc(names, func(n string) bool {
		_, ok := Parse(rest, n)
		return ok && strings.HasPrefix(rest, n)
	})
}

// curatorOrder orders every child as Curator's getSortedChildren with
// StandardLockInternalsDriver.fixForSorting applied for each marker in
// turn (InterProcessReadWriteLock's SortingLockInternalsDriver applies
// __READ__ then __WRIT__), comparing the results as Java's
// String.compareTo does (UTF-16 code units). Java's sort is stable and the
// server's order is arbitrary, so equal keys (only hand-made names can
// tie) are ordered by name.
func curatorOrder(children, markers []string) []Node {
	type keyed struct {
		n   Node
		key []uint16
	}
	ks := make([]keyed, 0, len(children))
	for _, c := range children {
		k := c
		for _, m := range markers {
			if i := strings.LastIndex(k, m); i >= 0 {
				k = k[i+len(m):]
			}
		}
		n := Node{Name: c}
		for i := len(markers) - 1; i >= 0; i-- {
			if strings.Contains(c, markers[i]) {
				n.Marker = markers[i]
				if p, ok := Parse(c, markers[i]); ok {
					n.Seq = p.Seq
				}
				break
			}
		}
		ks = append(ks, keyed{n, utf16.Encode([]rune(k))})
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := slices.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.n.Name, b.n.Name)
	})
	nodes := make([]Node, len(ks))
	for i, k := range ks {
		nodes[i] = k.n
	}
	return nodes
}

// kazooOrder keeps the children whose name ends in one of markers and a
// sequence and orders them by the text of the sequence, as kazoo's Lock
// sorts its contenders (the regular expression (?:markers)(-?\d{10})$ and
// Python's string order). A sequence between -999999999 and -1 (written
// -000000001, nine digits after the sign) escapes kazoo's expression;
// such nodes are kept here all the same, so this order never waits for
// fewer nodes than kazoo does.
func kazooOrder(children, markers []string) []Node {
	var nodes []Node
	for _, c := range children {
		for _, m := range markers {
			if n, ok := Parse(c, m); ok {
				nodes = append(nodes, n)
				break
			}
		}
	}
	slices.SortFunc(nodes, func(a, b Node) int {
		if c := strings.Compare(seqText(a.Name, a.Marker), seqText(b.Name, b.Marker)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nodes
}

// seqText is the text after the last marker in name.
func seqText(name, marker string) string {
	i := strings.LastIndex(name, marker)
	if i < 0 {
		return ""
	}
	return name[i+len(marker):]
}
