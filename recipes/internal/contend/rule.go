package contend

import "github.com/zksim/zksim/recipes/internal/seqnode"

// Rule decides from the contenders in sequence order and our index in them
// whether we hold; if not, it names the node to wait for: the one whose
// deletion may change the answer.
type Rule func(nodes []seqnode.Node, me int) (holds bool, waitFor string)

// Exclusive holds when we are first, and otherwise waits for our
// predecessor. It is the rule of the exclusive lock, of the write half of a
// read-write lock (which any earlier node blocks) and of election.
func Exclusive(nodes []seqnode.Node, me int) (bool, string) {
	if me == 0 {
		return true, ""
	}
	return false, nodes[me-1].Name
}

// Shared is the rule of the read half of a read-write lock: it holds when
// no node with writeMarker comes before us, and otherwise waits for the
// last such node before us.
func Shared(writeMarker string) Rule {
	return func(nodes []seqnode.Node, me int) (bool, string) {
		for i := me - 1; i >= 0; i-- {
			if nodes[i].Marker == writeMarker {
				return false, nodes[i].Name
			}
		}
		return true, ""
	}
}
