package barrier

import (
	"context"
	"errors"
	"slices"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// DoubleBarrier lets a group of size members begin a computation together
// (Enter) and end it together (Leave): ZooKeeper's double-barrier recipe.
// Enter blocks until size members have entered; Leave blocks until every
// member has left. Each member uses its own DoubleBarrier value (it names
// one member node); its calls must not be concurrent.
//
// The directory may be used for another round once every member of the
// previous round has returned from Leave (the ready node is deleted by
// then); a member of the next round that entered earlier would find the
// old ready node and pass at once.
type DoubleBarrier struct{ g group }

// NewDouble returns a member of the double barrier on dir for a group of
// size members. It returns an error matching zksim.ErrBadArguments when
// size is less than 1 or dir is not a valid znode path.
func NewDouble(conn zksim.Conn, dir string, size int, opts ...Option) (*DoubleBarrier, error) {
	g, err := newGroup("NewDouble", conn, dir, "ready", size, opts)
	if err != nil {
		return nil, err
	}
	return &DoubleBarrier{g: g}, nil
}

// Enter joins the group and blocks until size members have joined (the
// ready node exists), ctx is done, or the session can no longer act. On
// error our member node is deleted.
func (b *DoubleBarrier) Enter(ctx context.Context) error { return b.g.enter(ctx) }

// Leave deletes our member node and blocks until every member's node is
// gone, ctx is done, or the session can no longer act. Members leave in
// the recipe's order: the lowest-named member waits for the highest and
// leaves last (deleting the ready node with its own); every other member
// deletes its node and waits for the lowest. A member that dies counts as
// gone.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	g := &b.g
	mePath := g.dir + "/" + g.me
	for {
		members, err := g.members(ctx)
		if err != nil {
			return err
		}
		if len(members) == 0 {
			// Everyone is out. The last member normally deleted the ready
			// node with its own; if it died instead, delete it here.
			return seqnode.Delete(ctx, g.conn, g.dir+"/"+g.gate)
		}
		idx := slices.Index(members, g.me)
		var waitFor string
		switch {
		case len(members) == 1 && idx == 0:
			return g.leaveLast(ctx, mePath)
		case idx == 0:
			waitFor = members[len(members)-1]
		default:
			if idx > 0 {
				if err := seqnode.Delete(ctx, g.conn, mePath); err != nil {
					return err
				}
			}
			waitFor = members[0]
		}
		var (
			exists bool
			w      <-chan zksim.Event
		)
		err = retry.Do(ctx, g.conn, func() error {
			var err error
			exists, _, w, err = g.conn.ExistsW(ctx, g.dir+"/"+waitFor)
			return err
		})
		if err != nil {
			return err
		}
		if exists {
			if err := wait(ctx, w); err != nil {
				return err
			}
		}
	}
}

// leaveLast deletes our node and the ready node in one multi, so a member
// of the next round sees either both or neither.
func (g *group) leaveLast(ctx context.Context, mePath string) error {
	gate := g.dir + "/" + g.gate
	for losses := 0; ; {
		res, err := g.conn.Multi(ctx,
			&zksim.DeleteOp{Path: mePath, Version: -1},
			&zksim.DeleteOp{Path: gate, Version: -1})
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zksim.ErrConnectionLoss):
			if err := retry.Pause(ctx, g.conn, losses); err != nil {
				return err
			}
			losses++
			gone, err := g.memberGone(ctx, mePath)
			if err != nil || gone {
				return err
			}
		case len(res) == 2 && errors.Is(res[1].Err, zksim.ErrNoNode):
			return seqnode.Delete(ctx, g.conn, mePath) // no ready node
		case len(res) == 2 && errors.Is(res[0].Err, zksim.ErrNoNode):
			return nil // our node is already gone
		default:
			return err
		}
	}
}

// memberGone reports whether the node at p no longer exists.
func (g *group) memberGone(ctx context.Context, p string) (bool, error) {
	var ok bool
	err := retry.Do(ctx, g.conn, func() error {
		var err error
		ok, _, err = g.conn.Exists(ctx, p)
		return err
	})
	return !ok, err
}
