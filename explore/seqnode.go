package explore

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// seqNode is a contender node as the machines see it: its name, the
// marker before its sequence number, and the number.
type seqNode struct {
	name, marker string
	seq          int32
}

// parseSeqNode parses name if it carries one of markers followed by a
// ten-digit sequence number (a minus sign after the int32 wrap).
func parseSeqNode(name string, markers ...string) (seqNode, bool) {
	for _, m := range markers {
		i := strings.LastIndex(name, m)
		if i < 0 {
			continue
		}
		v, err := strconv.ParseInt(name[i+len(m):], 10, 32)
		if err != nil {
			continue
		}
		return seqNode{name: name, marker: m, seq: int32(v)}, true
	}
	return seqNode{}, false
}

// compareSeq orders two names by the sequence numbers they end with, as
// serial numbers (across the int32 wrap: "-2147483648" follows
// "2147483647").
func compareSeq(a, b string) int {
	return cmp.Compare(int32(uint32(trailingSeq(a))-uint32(trailingSeq(b))), 0)
}

// trailingSeq reads the sequence number a name ends with: ten digits, or a
// minus sign and digits after the wrap ("qn--2147483648").
func trailingSeq(name string) int32 {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i > 1 && name[i-1] == '-' && name[i-2] == '-' {
		i--
	}
	v, _ := strconv.ParseInt(name[i:], 10, 32)
	return int32(v)
}

// sortSeqNodes orders nodes by sequence number as serial numbers (across
// the int32 wrap), then by name.
func sortSeqNodes(nodes []seqNode) {
	slices.SortFunc(nodes, func(a, b seqNode) int {
		return cmp.Or(cmp.Compare(int32(uint32(a.seq)-uint32(b.seq)), 0), strings.Compare(a.name, b.name))
	})
}
