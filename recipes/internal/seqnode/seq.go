package seqnode

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Node is a child of a recipe directory whose name ends in a sequence
// number.
type Node struct {
	Name   string // the child's name, not its path
	Marker string // the name part just before the sequence, such as "lock-"
	Seq    int32  // the sequence number the server appended
}

// Parse finds the sequence number at the end of name, just after the last
// occurrence of marker. The server formats it with %010d, so it is ten
// digits, or a minus sign and nine or ten digits after the int32 wrap.
func Parse(name, marker string) (Node, bool) {
	i := strings.LastIndex(name, marker)
	if i < 0 {
		return Node{}, false
	}
	s := name[i+len(marker):]
	if len(s) < 10 || s[0] == '+' {
		return Node{}, false
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return Node{}, false
	}
	return Node{Name: name, Marker: marker, Seq: int32(v)}, true
}

// ParseAll parses the names that carry one of markers, drops the others,
// and returns the nodes in sequence order (see Compare).
func ParseAll(names []string, markers ...string) []Node {
	nodes := make([]Node, 0, len(names))
	for _, name := range names {
		for _, m := range markers {
			if n, ok := Parse(name, m); ok {
				nodes = append(nodes, n)
				break
			}
		}
	}
	Sort(nodes)
	return nodes
}

// Compare orders two sequence numbers as serial numbers (RFC 1982 on 32
// bits): a comes before b when the wrapped difference b-a is positive. So
// 2147483647 comes before -2147483648, which is what the server hands out
// next. The order is a true order for any set of numbers that spans fewer
// than 2^31 creations.
func Compare(a, b int32) int {
	return cmp.Compare(int32(uint32(a)-uint32(b)), 0)
}

// Sort sorts nodes by sequence number (Compare), then by name so that equal
// numbers (nodes from different markers of one directory cannot share one,
// but a hand-made node can) still sort deterministically.
func Sort(nodes []Node) {
	slices.SortFunc(nodes, func(a, b Node) int {
		if c := Compare(a.Seq, b.Seq); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Index returns the position of the node called name in nodes, or -1.
func Index(nodes []Node, name string) int {
	return slices.IndexFunc(nodes, func(n Node) bool { return n.Name == name })
}
