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
	size int
	me   string // our member name, a GUID
	acl  []zksim.ACL
}

// newGroup checks the arguments of the constructor called what.
func newGroup(what string, conn zksim.Conn, dir, gate string, size int, opts []Option) (group, error) {
	if size < 1 {
		return group{}, fmt.Errorf("%w: barrier.%s: size %d is less than 1", zksim.ErrBadArguments, what, size)
	}
	if err := zksim.ValidatePath(dir, false); err != nil {
		return group{}, fmt.Errorf("barrier.%s: %w", what, err)
	}
	return group{conn: conn, dir: dir, gate: gate, size: size, me: seqnode.NewGUID(), acl: newConfig(opts).acl}, nil
}

// enter creates our member node and blocks until the gate exists: either
// it was open already, or we complete the group and open it, or another
// member does. On error it deletes our member node.
func (g *group) enter(ctx context.Context) (err error) {
	gate := g.dir + "/" + g.gate
	// Watch the gate before joining, so its opening cannot be missed.
	var (
		open bool
		w    <-chan zksim.Event
	)
	err = retry.Do(ctx, g.conn, func() error {
		var err error
		open, _, w, err = g.conn.ExistsW(ctx, gate)
		return err
	})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			cctx, cancel := retry.CleanupContext(ctx, g.conn)
			defer cancel()
			_ = seqnode.Delete(cctx, g.conn, g.dir+"/"+g.me)
		}
	}()
	owned, _, err := seqnode.CreateOwned(ctx, g.conn, g.dir+"/"+g.me, nil, g.acl)
	if err != nil {
		return err
	}
	if !owned {
		return seqnode.ErrNotOwner
	}
	for !open {
		members, err := g.members(ctx)
		if err != nil {
			return err
		}
		if len(members) >= g.size {
			return g.open(ctx, gate)
		}
		if err := wait(ctx, w); err != nil {
			return err
		}
		// The gate was created, or (it was deleted and) something else
		// happened to it: look again, with a new watch.
		err = retry.Do(ctx, g.conn, func() error {
			var err error
			open, _, w, err = g.conn.ExistsW(ctx, gate)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// open creates the gate; a gate already there is fine.
func (g *group) open(ctx context.Context, gate string) error {
	return retry.Do(ctx, g.conn, func() error {
		_, err := g.conn.Create(ctx, gate, nil, zksim.ModePersistent, g.acl)
		if errors.Is(err, zksim.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// members lists the member nodes (every child but the gate), sorted by
// name.
func (g *group) members(ctx context.Context) ([]string, error) {
	var children []string
	err := retry.Do(ctx, g.conn, func() error {
		var err error
		children, _, err = g.conn.Children(ctx, g.dir)
		return err
	})
	if errors.Is(err, zksim.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	children = slices.DeleteFunc(children, func(c string) bool { return c == g.gate })
	slices.Sort(children)
	return children, nil
}
