package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zksim/zksim"
)

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// sorted returns a sorted copy of names: ZooKeeper returns children in no
// defined order.
func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// sortedACL returns acl sorted by scheme, id and perms, for comparisons:
// the server keeps no particular order for the entries it derives.
func sortedACL(acl []zksim.ACL) []zksim.ACL {
	out := slices.Clone(acl)
	slices.SortFunc(out, func(a, b zksim.ACL) int {
		if c := strings.Compare(a.Scheme, b.Scheme); c != 0 {
			return c
		}
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return int(a.Perms - b.Perms)
	})
	return out
}

// seqName is the name ZooKeeper gives the sequential node prefix+n.
func seqName(prefix string, n int32) string {
	return fmt.Sprintf("%s%010d", prefix, n)
}
