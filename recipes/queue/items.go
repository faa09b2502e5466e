package queue

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// itemName is the name part of every item before its sequence number.
const itemName = "qn-"

// item is a queue item as listed: its name, sequence number and priority
// (0 in a plain Queue).
type item struct {
	name     string
	seq      int32
	priority int32
}

// priorityName returns the name part of a PriorityQueue item before
// "qn-": 'p' and 8 hex digits of the priority with its sign bit flipped, so
// the text sorts as the number does.
func priorityName(priority int32) string {
	return fmt.Sprintf("p%08x-%s", uint32(priority)^0x80000000, itemName)
}

// parsePriority reads the priority back from a PriorityQueue item name; a
// name without one has priority 0.
func parsePriority(name string) int32 {
	i := strings.LastIndex(name, "-"+itemName)
	if i < 9 || name[i-9] != 'p' {
		return 0
	}
	u, err := strconv.ParseUint(name[i-8:i], 16, 32)
	if err != nil {
		return 0
	}
	return int32(uint32(u) ^ 0x80000000)
}

// parseItems keeps the children that are items and returns them in
// delivery order: by priority (lowest first) when prioritized, then by
// sequence number.
func parseItems(children []string, prioritized bool) []item {
	nodes := seqnode.ParseAll(children, itemName)
	items := make([]item, len(nodes))
	for i, n := range nodes {
		items[i] = item{name: n.Name, seq: n.Seq}
		if prioritized {
			items[i].priority = parsePriority(n.Name)
		}
	}
	if prioritized {
		// Stable: items of one priority keep their sequence order.
		slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.priority, b.priority) })
	}
	return items
}
