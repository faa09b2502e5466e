package barrier

import (
	"context"
	"errors"
	"path"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// Barrier is a distributed barrier (ZooKeeper's barrier recipe, as
// Curator's DistributedBarrier): while its node exists, Wait blocks. A
// Barrier value is safe for concurrent use.
type Barrier struct {
	conn zksim.Conn
	path string
	acl  []zksim.ACL
}

// New returns the barrier whose node is path.
func New(conn zksim.Conn, path string, opts ...Option) *Barrier {
	return &Barrier{conn: conn, path: path, acl: newConfig(opts).acl}
}

// Set raises the barrier: its node is created (persistent, with missing
// parents, again if a parent is deleted meanwhile). Setting a barrier that
// is already set is not an error. It blocks for the round trips and across
// connection losses.
func (b *Barrier) Set(ctx context.Context) error {
	return retry.Do(ctx, b.conn, func() error {
		for {
			_, err := b.conn.Create(ctx, b.path, nil, zksim.ModePersistent, b.acl)
			if errors.Is(err, zksim.ErrNodeExists) {
				return nil
			}
			if !errors.Is(err, zksim.ErrNoNode) {
				return err
			}
			if err := seqnode.EnsurePath(ctx, b.conn, path.Dir(b.path), b.acl); err != nil {
				return err
			}
		}
	})
}

// Remove lowers the barrier: its node is deleted and every waiter goes on.
// Removing a barrier that is not set is not an error.
func (b *Barrier) Remove(ctx context.Context) error {
	return seqnode.Delete(ctx, b.conn, b.path)
}

// Wait blocks while the barrier is set: until its node is deleted, ctx is
// done, or the session can no longer act. It returns at once if the
// barrier is not set. It returns nil only when it has found the barrier
// not set: a barrier removed and set again before Wait looks again keeps
// it waiting.
//
// A Wait that begins after a Set returned (on any client) blocks: each
// look is a sync and then an exists, so that on an ensemble a member that
// lags behind the Set cannot answer that the barrier is not set (ZooKeeper
// reads are sequentially consistent, not linearizable: only a read after a
// sync sees every write that completed before it). This costs one round
// trip more per look; Curator's DistributedBarrier does not sync, and lets
// such a waiter pass.
func (b *Barrier) Wait(ctx context.Context) error {
	for {
		var (
			set bool
			w   <-chan zksim.Event
		)
		err := retry.Do(ctx, b.conn, func() error {
			if _, err := b.conn.Sync(ctx, b.path); err != nil {
				return err
			}
			var err error
			set, _, w, err = b.conn.ExistsW(ctx, b.path)
			return err
		})
		if err != nil || !set {
			return err
		}
		if err := wait(ctx, w); err != nil {
			return err
		}
	}
}

// wait waits for one watch event, and returns the error that ended the
// watch if it could not fire, or ctx.Err().
func wait(ctx context.Context, w <-chan zksim.Event) error {
	select {
	case ev := <-w:
		if ev.Type == zksim.EventNotWatching {
			if ev.Err != nil {
				return ev.Err
			}
			return zksim.ErrClosing
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
