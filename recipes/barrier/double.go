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
// # Rounds
//
// A round opens when the ready node is created and ends when it is
// deleted. A member belongs to the round if its node existed when the
// ready node was created, or if it arrives while the round is open: Enter
// then writes to the ready node once its own node exists, and passes only
// if the ready node was still there. A member that arrives after the
// round's ready node is gone waits for the next round, which counts its
// members from zero. So the directory can be used round after round.
//
// # Guarantees, under connection loss and session expiry
//
//   - Enter returns nil only if the ready node existed at some moment when
//     our member node existed: size members were present when it was
//     created, or we joined the open round.
//   - Leave returns nil only once its round's ready node is deleted, and
//     the ready node is deleted (at the version read before the members
//     were listed) only when no member node of the round is left. So a
//     member's Leave returns only after every other member of its round
//     has begun to Leave (deleted its node) or lost its session.
//   - A member whose session expires is no longer a member: its node is
//     gone, the others stop waiting for it, and its own calls fail with an
//     error matching zksim.ErrSessionExpired. A process that goes on with
//     a new session and a new DoubleBarrier is a new member: it joins the
//     round if the round is still open (the others' Leave then waits for
//     it too), or waits for the next round.
//   - Not guaranteed: that the size members counted by Enter are all
//     alive when the others pass. A member may die after completing the
//     group, even before it learned that it did; its Enter then fails.
type DoubleBarrier struct{ g group }

// NewDouble returns a member of the double barrier on dir for a group of
// size members. It returns an error matching zksim.ErrBadArguments when
// size is less than 1 or dir is not a valid znode path.
func NewDouble(conn zksim.Conn, dir string, size int, opts ...Option) (*DoubleBarrier, error) {
	g, err := newGroup("NewDouble", conn, dir, "ready", size, opts)
	if err != nil {
		return nil, err
	}
	g.closes = true
	return &DoubleBarrier{g: g}, nil
}

// Enter joins the group and blocks until size members have joined (the
// ready node exists), ctx is done, or the session can no longer act. On
// error our member node is deleted.
func (b *DoubleBarrier) Enter(ctx context.Context) error { return b.g.enter(ctx) }

// Leave deletes our member node and blocks until every member node of our
// round is gone (its ready node deleted), ctx is done, or the session can
// no longer act. Members leave in the recipe's order: the lowest-named
// member waits for the highest and leaves last (deleting the ready node
// with its own); every other member deletes its node and waits for the
// lowest. A member that dies counts as gone. A member whose node someone
// else deleted still leaves with its round, and never waits for a member
// of the next round: once its round's ready node is gone it returns nil.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	g := &b.g
	mePath := g.dir + "/" + g.me
	gate := g.dir + "/" + g.gate
	round := int64(-1) // the czxid of our round's ready node
	for {
		// The ready node's version before the members are listed: a member
		// that joins later bumps it, and the versioned deletes below fail.
		var (
			gateOK bool
			gst    *zksim.Stat
		)
		err := retry.Do(ctx, g.conn, func() error {
			var err error
			gateOK, gst, err = g.conn.Exists(ctx, gate)
			return err
		})
		if err != nil {
			return err
		}
		if round == -1 && gateOK {
			round = gst.Czxid
		}
		if !gateOK || gst.Czxid != round {
			// Our round is over: its ready node is deleted only once no
			// member of it is left. Member nodes still there are the next
			// round's.
			return seqnode.Delete(ctx, g.conn, mePath)
		}
		members, gated, err := g.listing(ctx)
		if err != nil {
			return err
		}
		if !gated {
			// Our round's ready node, there when we looked, was gone
			// when the members were listed: the round is over (a ready
			// node never comes back), and the members listed are the
			// next round's, which our Leave must not wait for. A listing
			// so late needs our node gone before the round ended:
			// deleted by us (waiting for the lowest member, whose
			// session expired, while another member deleted the ready
			// node) or by a third party.
			return seqnode.Delete(ctx, g.conn, mePath)
		}
		if len(members) == 0 {
			// Everyone is out. The last member normally deleted the ready
			// node with its own; if it died instead, delete it here.
			err := retry.Do(ctx, g.conn, func() error { return g.conn.Delete(ctx, gate, gst.Version) })
			switch {
			case err == nil, errors.Is(err, zksim.ErrNoNode):
				return nil
			case errors.Is(err, zksim.ErrBadVersion):
				continue // a late member joined: look again
			default:
				return err
			}
		}
		idx := slices.Index(members, g.me)
		var waitFor string
		switch {
		case len(members) == 1 && idx == 0:
			done, err := g.leaveLast(ctx, mePath, gst.Version)
			if err != nil || done {
				return err
			}
			continue // a late member joined: look again
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

// leaveLast deletes our node and the ready node (at version gateVersion)
// in one multi, so a member of the next round sees either both or
// neither. It reports false when the caller must look again: the ready
// node's version changed (a late member joined), or our node is gone.
func (g *group) leaveLast(ctx context.Context, mePath string, gateVersion int32) (bool, error) {
	gate := g.dir + "/" + g.gate
	for losses := 0; ; {
		res, err := g.conn.Multi(ctx,
			&zksim.DeleteOp{Path: mePath, Version: -1},
			&zksim.DeleteOp{Path: gate, Version: gateVersion})
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, zksim.ErrConnectionLoss):
			if err := retry.Pause(ctx, g.conn, losses); err != nil {
				return false, err
			}
			losses++
			gone, err := g.roundGone(ctx, mePath)
			if err != nil || gone {
				return true, err
			}
		case len(res) == 2 && errors.Is(res[1].Err, zksim.ErrBadVersion):
			return false, nil
		case len(res) == 2 && errors.Is(res[1].Err, zksim.ErrNoNode):
			return true, seqnode.Delete(ctx, g.conn, mePath) // no ready node
		case len(res) == 2 && errors.Is(res[0].Err, zksim.ErrNoNode):
			return false, nil // our node is gone (a third party): the ready node is not
		default:
			return false, err
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

// roundGone reports whether our node at p and the ready node are both
// gone: after a multi deleting both whose reply was lost, our node gone
// alone does not tell that it took effect (a third party may have deleted
// our node and nothing else).
func (g *group) roundGone(ctx context.Context, p string) (bool, error) {
	gone, err := g.memberGone(ctx, p)
	if err != nil || !gone {
		return gone, err
	}
	return g.memberGone(ctx, g.dir+"/"+g.gate)
}
