package contend

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/hold"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// ErrWouldBlock is what a try-only Acquire returns when it does not hold at
// once. Its node has been deleted.
var ErrWouldBlock = errors.New("recipes: would block")

// errVanished says our node disappeared while we waited (deleted by hand):
// Acquire starts over with a new node.
var errVanished = errors.New("recipes: our node vanished")

// Contender takes part in one directory of contenders.
type Contender struct {
	Conn    zksim.Conn
	Dir     string      // the directory of the contenders
	Name    string      // our node's name before the sequence, e.g. "lock-"
	Markers []string    // every name that takes part in Dir (ours included)
	ACL     []zksim.ACL // our node's ACL (and the ACL of a missing Dir)
	Rule    Rule
	// Layout is whose names and order the contenders follow (Zksim, the
	// zero value, is ours). Name and Markers are in that layout.
	Layout seqnode.Layout
	// Herd makes waiters watch every child of Dir instead of one node, so a
	// release wakes them all. Only for benchmarks against the herd effect.
	Herd bool
}

// Hold is a node that holds, with its tracker.
type Hold struct {
	Path  string // our node
	Token int64  // its czxid: the fencing token
	*hold.Tracker
}

// Guard returns the check op that succeeds while h's node exists: its
// path, any version (a leader's Proclaim changes the version). The node's
// name is unique (GUID and sequence number), so it exists exactly while
// the hold's session lives and the hold has not been released.
func (h *Hold) Guard() zksim.Op { return &zksim.CheckOp{Path: h.Path, Version: -1} }

// Acquire creates our node with data and blocks until the rule says it
// holds, ctx is done, or the session can no longer act. With try it does not wait: it
// returns ErrWouldBlock when it does not hold at once. On every error it
// deletes the node it created (or may have created).
func (c *Contender) Acquire(ctx context.Context, data []byte, try bool) (h *Hold, err error) {
	guid := c.Layout.GUIDFor(seqnode.NewGUID(c.Conn))
	defer func() {
		if err != nil {
			c.abandon(ctx, guid)
		}
	}()
	for {
		p, err := seqnode.CreateProtected(ctx, c.Conn, c.Dir, guid, c.Name, data, zksim.ModeEphemeralSequential, c.ACL)
		if err != nil {
			return nil, err
		}
		st, err := c.wait(ctx, p, try)
		if errors.Is(err, errVanished) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Hold{Path: p, Token: st.Czxid, Tracker: hold.Start(c.Conn, p)}, nil
	}
}

// ErrNotOurs is what Adopt returns, having done nothing, when the node to
// adopt is not a contender node of ours: not in Dir, not named with Name,
// missing, or owned by another session. It is also what Adopt returns when
// the node vanishes while it waits.
var ErrNotOurs = errors.New("recipes: not a contender node of this session")

// Adopt takes the existing node p, which our session created, as our
// contender node and blocks until the rule says it holds, ctx is done, or
// the session can no longer act, as Acquire does after its create. On an
// error other than ErrNotOurs it deletes p, as Acquire deletes its node.
func (c *Contender) Adopt(ctx context.Context, p string) (h *Hold, err error) {
	dir, name := path.Split(p)
	if path.Clean(dir) != path.Clean(c.Dir) {
		return nil, fmt.Errorf("%w: %s is not in %s", ErrNotOurs, p, c.Dir)
	}
	if _, ok := seqnode.Parse(name, c.Name); !ok {
		return nil, fmt.Errorf("%w: %s is not named %s<sequence>", ErrNotOurs, p, c.Name)
	}
	st, err := seqnode.OwnedStat(ctx, c.Conn, p)
	switch {
	case errors.Is(err, seqnode.ErrNotOwner):
		return nil, fmt.Errorf("%w: %s is owned by another session", ErrNotOurs, p)
	case err != nil:
		return nil, err
	case st == nil:
		return nil, fmt.Errorf("%w: %s does not exist", ErrNotOurs, p)
	}
	defer func() {
		if err != nil {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			_ = seqnode.Delete(cctx, c.Conn, p)
		}
	}()
	st, err = c.wait(ctx, p, false)
	if errors.Is(err, errVanished) {
		return nil, fmt.Errorf("%w: %s was deleted", ErrNotOurs, p)
	}
	if err != nil {
		return nil, err
	}
	return &Hold{Path: p, Token: st.Czxid, Tracker: hold.Start(c.Conn, p)}, nil
}

// wait loops until our node at p holds, and returns its Stat.
func (c *Contender) wait(ctx context.Context, p string, try bool) (*zksim.Stat, error) {
	name := path.Base(p)
	for {
		var (
			children []string
			herd     <-chan zksim.Event
		)
		err := retry.Do(ctx, c.Conn, func() error {
			var err error
			if c.Herd {
				children, _, herd, err = c.Conn.ChildrenW(ctx, c.Dir)
			} else {
				children, _, err = c.Conn.Children(ctx, c.Dir)
			}
			return err
		})
		if errors.Is(err, zksim.ErrNoNode) {
			return nil, errVanished // the directory itself was deleted
		}
		if err != nil {
			return nil, err
		}
		nodes, foreign := c.Layout.Order(children, c.Markers...)
		if foreign != "" {
			return nil, fmt.Errorf("%w: %s holds %s, which the %v layout cannot order", recipes.ErrForeignNodes, c.Dir, foreign, c.Layout)
		}
		me := seqnode.Index(nodes, name)
		if me < 0 {
			return nil, errVanished
		}
		holds, waitFor := c.Rule(nodes, me)
		if holds {
			st, err := seqnode.OwnedStat(ctx, c.Conn, p)
			if err != nil {
				return nil, err
			}
			if st == nil {
				return nil, errVanished
			}
			return st, nil
		}
		if try {
			return nil, ErrWouldBlock
		}
		watch := herd
		if !c.Herd {
			var exists bool
			err := retry.Do(ctx, c.Conn, func() error {
				var err error
				exists, _, watch, err = c.Conn.ExistsW(ctx, c.Dir+"/"+waitFor)
				return err
			})
			if err != nil {
				return nil, err
			}
			if !exists {
				continue
			}
		}
		select {
		case ev := <-watch:
			if ev.Type == zksim.EventNotWatching {
				return nil, notWatching(ev)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// abandon deletes whatever node guid named, after a failed Acquire.
func (c *Contender) abandon(ctx context.Context, guid string) {
	cctx, cancel := retry.CleanupContext(ctx)
	defer cancel()
	_ = seqnode.DeleteGUID(cctx, c.Conn, c.Dir, guid)
}

// Release stops h's tracking and deletes its node. A node already gone
// (deleted, or taken with an expired or closed session) counts as released.
func (c *Contender) Release(ctx context.Context, h *Hold) error {
	h.Stop()
	err := seqnode.Delete(ctx, c.Conn, h.Path)
	if retry.Final(err) {
		return nil
	}
	return err
}

// notWatching turns an EventNotWatching into the error that ended the
// watch.
func notWatching(ev zksim.Event) error {
	if ev.Err != nil {
		return ev.Err
	}
	return fmt.Errorf("recipes: watch ended: %v", ev)
}
