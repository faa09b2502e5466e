package sim

import (
	"context"
	"slices"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// A third party: an operator with zkCli, a cleanup job, another
// application sharing the ensemble. It acts on the server directly, on a
// session of its own that no client of the World owns, so the clients see
// only what it did: their watches fire, their nodes are gone. On an
// ensemble its session reads and writes the committed state, whatever the
// members do (zkmem.WithCommittedView).

// thirdParty opens the third party's session for one action.
func (w *World) thirdParty() (*zkmem.Conn, error) {
	return w.srv.Connect(zkmem.WithSessionTimeout(time.Hour), zkmem.WithCommittedView())
}

// DeleteNode has a third party delete the node at path, whatever its
// version (a recipe's lock node, a queue item, a barrier's gate): the
// watches on it fire as for any delete. It fails with zksim.ErrNoNode if
// path is missing and zksim.ErrNotEmpty if it has children.
func (f *Faults) DeleteNode(path string) error {
	op, err := f.w.thirdParty()
	if err != nil {
		return err
	}
	defer op.Close()
	return op.Delete(context.Background(), path, -1)
}

// Leaves returns the nodes below dir (not dir itself) that have no
// children, in canonical (sorted) order: the nodes a third party can
// delete, for a fault that draws one. A missing dir has none.
func (f *Faults) Leaves(dir string) []string {
	op, err := f.w.thirdParty()
	if err != nil {
		return nil
	}
	defer op.Close()
	var out []string
	var walk func(p string)
	walk = func(p string) {
		names, _, err := op.Children(context.Background(), p)
		if err != nil {
			return
		}
		slices.Sort(names)
		for _, n := range names {
			child := p + "/" + n
			if p == "/" {
				child = "/" + n
			}
			before := len(out)
			walk(child)
			if len(out) == before {
				if kids, _, err := op.Children(context.Background(), child); err == nil && len(kids) == 0 {
					out = append(out, child)
				}
			}
		}
	}
	walk(dir)
	return out
}
