package lock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/contend"
	"github.com/zksim/zksim/recipes/internal/hold"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

// internalLock returns the exclusive lock acquirers take in turn: an
// ordinary Mutex on <dir>/locks, or in the Kazoo layout a kazoo Lock on
// the sibling <dir>-__lock__, as kazoo's Semaphore takes it.
func (s *Semaphore) internalLock() *Mutex {
	cfg := config{acl: s.cfg.acl, layout: s.cfg.layout}
	dir := s.dir + "/locks"
	if s.cfg.layout == Kazoo {
		dir = s.dir + "-" + kazooLockName
	}
	name := exclusiveName(s.cfg.layout)
	return newMutex(s.conn, dir, name, []string{name}, contend.Exclusive, cfg)
}

// kazooLeaseNode is the name of a kazoo Semaphore's lease: uuid4().hex.
var kazooLeaseNode = regexp.MustCompile(`^[0-9a-f]{32}$`)

// kazooLease takes a lease as kazoo's Semaphore does, holding the internal
// lock: leases are the children of dir, named by a GUID, not sequential; a
// client creates its lease when fewer than max children exist, and
// otherwise waits for the children to change. dir's data is max in
// decimal, which kazoo checks.
func (s *Semaphore) kazooLease(ctx context.Context, try bool) (_ *Lease, err error) {
	if err := s.ensureKazooDir(ctx); err != nil {
		return nil, err
	}
	p := seqnode.Join(s.dir, seqnode.KazooGUID(seqnode.NewGUID(s.conn)))
	defer func() {
		if err != nil {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			_ = seqnode.DeleteOwned(cctx, s.conn, p)
		}
	}()
	for {
		var (
			children []string
			watch    <-chan zksim.Event
		)
		err := retry.Do(ctx, s.conn, func() error {
			var err error
			children, _, watch, err = s.conn.ChildrenW(ctx, s.dir)
			return err
		})
		if err != nil {
			return nil, err
		}
		if i := slices.IndexFunc(children, isSemaphoreDir); i >= 0 {
			return nil, fmt.Errorf("%w: %s holds %s, a Curator or zksim semaphore's", recipes.ErrForeignNodes, s.dir, children[i])
		}
		if len(children) < s.max {
			owned, st, err := seqnode.CreateOwned(ctx, s.conn, p, s.cfg.data, s.cfg.acl)
			if err != nil {
				return nil, err
			}
			if !owned {
				return nil, fmt.Errorf("lock: lease %s is owned by another session", p)
			}
			return &Lease{conn: s.conn, h: &contend.Hold{Path: p, Token: st.Czxid, Tracker: hold.Start(s.conn, p)}}, nil
		}
		if try {
			return nil, ErrNoLease
		}
		select {
		case ev := <-watch:
			if ev.Type == zksim.EventNotWatching {
				if ev.Err != nil {
					return nil, ev.Err
				}
				return nil, zksim.ErrClosing
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// isSemaphoreDir reports whether a child of a semaphore's directory is
// one of the two directories of the Zksim and Curator layouts.
func isSemaphoreDir(child string) bool { return child == "locks" || child == "leases" }

// ensureKazooDir creates dir with max as its data, or checks the max an
// existing dir carries, as kazoo's Semaphore does: data that is not a
// number is not checked.
func (s *Semaphore) ensureKazooDir(ctx context.Context) error {
	want := strconv.Itoa(s.max)
	if err := seqnode.EnsurePath(ctx, s.conn, path.Dir(s.dir), s.cfg.acl); err != nil {
		return err
	}
	var data []byte
	err := retry.Do(ctx, s.conn, func() error {
		_, err := s.conn.Create(ctx, s.dir, []byte(want), zksim.ModePersistent, s.cfg.acl)
		if !errors.Is(err, zksim.ErrNodeExists) {
			return err
		}
		data, _, err = s.conn.Get(ctx, s.dir)
		return err
	})
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(string(data)); err == nil && n != s.max {
		return fmt.Errorf("%w: lock.Semaphore: %s is a semaphore of %d leases, not %d", zksim.ErrBadArguments, s.dir, n, s.max)
	}
	return nil
}

// checkNoKazooLeases refuses, in the Curator layout, a directory that
// holds a kazoo Semaphore's leases, which Curator's leases directory does
// not count.
func (s *Semaphore) checkNoKazooLeases(ctx context.Context) error {
	var children []string
	err := retry.Do(ctx, s.conn, func() error {
		var err error
		children, _, err = s.conn.Children(ctx, s.dir)
		return err
	})
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(children, kazooLeaseNode.MatchString); i >= 0 {
		return fmt.Errorf("%w: %s holds %s, a kazoo semaphore's lease", recipes.ErrForeignNodes, s.dir, children[i])
	}
	return nil
}
