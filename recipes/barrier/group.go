package barrier

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// group is a directory of member nodes with a gate node that opens it:
// what DoubleBarrier and StartBarrier share.
type group struct {
	conn zksim.Conn
	dir  string
	gate string // the gate's name in dir: "ready" or "start"
	// closes tells that the gate is deleted when the group has left (the
	// double barrier's), so a member that arrives late must join it.
	closes bool
	size   int
	me     string // our member name, a GUID
	acl    []zksim.ACL
}

// newGroup checks the arguments of the constructor called what.
func newGroup(what string, conn zksim.Conn, dir, gate string, size int, opts []Option) (group, error) {
	if size < 1 {
		return group{}, fmt.Errorf("%w: barrier.%s: size %d is less than 1", zksim.ErrBadArguments, what, size)
	}
	if err := zksim.ValidatePath(dir, false); err != nil {
		return group{}, fmt.Errorf("barrier.%s: %w", what, err)
	}
	return group{conn: conn, dir: dir, gate: gate, size: size, me: seqnode.NewGUID(conn), acl: newConfig(opts).acl}, nil
}

// enter creates our member node and blocks until the gate exists: either
// it was open already, or we complete the group and open it, or another
// member does. On error it deletes our member node.
//
// A gate that closes (the double barrier's ready node) needs one more
// step from a member whose node was created after the gate: the group was
// already open and may be leaving, and a leaving member may have listed
// the members before our node existed. Such a member joins by writing to
// the gate (any version), which bumps its version after our node exists;
// the last member to leave deletes the gate only at the version it read
// before listing the members, so either it sees our node or its delete
// fails and it looks again. A gate that is gone by then closed a round we
// were too late for: we wait for the next one.
func (g *group) enter(ctx context.Context) (err error) {
	gate := g.dir + "/" + g.gate
	// Watch the gate before joining, so its opening cannot be missed.
	var (
		open bool
		gst  *zksim.Stat
		w    <-chan zksim.Event
	)
	look := func() error {
		return retry.Do(ctx, g.conn, func() error {
			var err error
			open, gst, w, err = g.conn.ExistsW(ctx, gate)
			return err
		})
	}
	if err := look(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			_ = seqnode.Delete(cctx, g.conn, g.dir+"/"+g.me)
		}
	}()
	owned, mine, err := seqnode.CreateOwned(ctx, g.conn, g.dir+"/"+g.me, nil, g.acl)
	if err != nil {
		return err
	}
	if !owned {
		return seqnode.ErrNotOwner
	}
	for {
		if open {
			if !g.closes || gst.Czxid > mine.Czxid {
				return nil // our node was there when the gate opened
			}
			joined, err := g.join(ctx, gate, gst.Version)
			if err != nil || joined {
				return err
			}
		} else {
			members, gated, err := g.listing(ctx)
			if err != nil {
				return err
			}
			switch {
			case gated:
				// The gate is open after all (the look that said it was
				// not is older than our node): the members listed with
				// it may be its round's, leaving. Look again, and join
				// that round if it is still open; opening a round of our
				// own on its members' count would let us pass without
				// them (its last leaver may delete the gate at any time).
			case len(members) >= g.size:
				created, err := g.open(ctx, gate)
				if err != nil || created {
					return err
				}
			default:
				if err := wait(ctx, w); err != nil {
					return err
				}
			}
		}
		// The gate was created, or (it was deleted and) something else
		// happened to it: look again, with a new watch.
		if err := look(); err != nil {
			return err
		}
	}
}

// open creates the gate and reports whether we created it; a gate already
// there is no error.
func (g *group) open(ctx context.Context, gate string) (bool, error) {
	created := false
	err := retry.Do(ctx, g.conn, func() error {
		_, err := g.conn.Create(ctx, gate, nil, zksim.ModePersistent, g.acl)
		if errors.Is(err, zksim.ErrNodeExists) {
			return nil
		}
		created = err == nil
		return err
	})
	return created, err
}

// join writes to the open gate, after our member node exists, at the
// version we saw it at before our node was created, and reports whether
// that gate was still there, unchanged (we are a member of its round). A
// gate deleted or written since (another member joined, or the round
// ended and the next one opened: a gate our node is older than) makes it
// report false, for the caller to look again. So a member whose node is
// older than the gate (it belongs to that round from the start) writes to
// it only if that gate replaced the one it saw at the very version it saw
// (a write no one is hurt by: the round cannot end before we leave).
func (g *group) join(ctx context.Context, gate string, version int32) (bool, error) {
	err := retry.Do(ctx, g.conn, func() error {
		_, err := g.conn.Set(ctx, gate, nil, version)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) || errors.Is(err, zksim.ErrBadVersion) {
		return false, nil
	}
	return err == nil, err
}

// listing lists the member nodes (every child but the gate), sorted by
// name, and reports whether the gate was among the children.
func (g *group) listing(ctx context.Context) ([]string, bool, error) {
	var children []string
	err := retry.Do(ctx, g.conn, func() error {
		var err error
		children, _, err = g.conn.Children(ctx, g.dir)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	gated := slices.Contains(children, g.gate)
	children = slices.DeleteFunc(children, func(c string) bool { return c == g.gate })
	slices.Sort(children)
	return children, gated, nil
}
