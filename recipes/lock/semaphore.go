package lock

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/contend"
	"github.com/zksim/zksim/recipes/internal/hold"
	"github.com/zksim/zksim/recipes/internal/retry"
	"github.com/zksim/zksim/recipes/internal/seqnode"
)

const leaseName = "lease-"

// Semaphore is a distributed counting semaphore: at most max leases are
// held at once across all clients (Curator's InterProcessSemaphoreV2).
//
// Acquirers take an internal exclusive lock (<dir>/locks) in turn. The one
// holding it creates its lease node in <dir>/leases and, while more than
// max leases exist, watches that directory; it keeps the internal lock
// until it holds a lease, so only one client at a time watches the leases
// (no herd) and leases are granted in arrival order; one whose internal
// lock node is deleted meanwhile (a third party) deletes its lease node
// and queues for the internal lock again. Every client must use the same
// max for the same dir.
//
// WithLayout(Curator) is InterProcessSemaphoreV2 (the same directories,
// and every child of <dir>/leases counts as a lease, as Curator counts
// them); WithLayout(Kazoo) is kazoo's Semaphore: leases are the children
// of dir itself, and the internal lock is a kazoo Lock on <dir>-__lock__
// (see the package doc).
//
// A lease is a held node like a lock's: its State, Watch and Done follow
// the connection (see the package doc), and a lease whose session expires
// is freed for the next acquirer.
type Semaphore struct {
	conn zksim.Conn
	dir  string
	max  int
	cfg  config
}

// NewSemaphore returns a semaphore of max leases on the directory dir.
// Nothing is sent to the server until a call. It returns an error
// matching zksim.ErrBadArguments when max is less than 1 or dir is not a
// valid znode path.
func NewSemaphore(conn zksim.Conn, dir string, max int, opts ...Option) (*Semaphore, error) {
	if max < 1 {
		return nil, fmt.Errorf("%w: lock.NewSemaphore: max %d is less than 1", zksim.ErrBadArguments, max)
	}
	if err := zksim.ValidatePath(dir, false); err != nil {
		return nil, fmt.Errorf("lock.NewSemaphore: %w", err)
	}
	cfg := newConfig(opts)
	return &Semaphore{conn: conn, dir: dir, max: max, cfg: cfg}, nil
}

// Lease is one held permit of a Semaphore. Its methods are safe for
// concurrent use.
type Lease struct {
	conn zksim.Conn
	h    *contend.Hold
}

// Acquire blocks until it holds a lease, ctx is done, or the session can no
// longer act. It waits first for the internal lock, then for a lease to be
// free. Once it holds a lease it releases the internal lock, waiting out
// connection losses (however long: see Cancellation in the package doc),
// so the lease it returns may already be Doubtful or Lost: check its
// State. On error it deletes the nodes it created. It returns an error
// matching recipes.ErrForeignNodes when the directory holds another
// layout's semaphore it can see, and in the Kazoo layout one matching
// zksim.ErrBadArguments when dir's data says another number of leases. A
// Semaphore value may be used by several goroutines at once; each Acquire
// is separate.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) { return s.acquire(ctx, false) }

// TryAcquire takes a lease if one is free now and returns ErrNoLease
// otherwise. It still waits for the internal lock, which is held only
// briefly by acquirers that do not wait.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) { return s.acquire(ctx, true) }

func (s *Semaphore) acquire(ctx context.Context, try bool) (_ *Lease, err error) {
	// One internal Mutex per call: a Mutex is not for concurrent use.
	m := s.internalLock()
	if err := m.Lock(ctx); err != nil {
		return nil, err
	}
	defer func() {
		// Runs after the lease cleanup below, even when ctx is done: it
		// goes on until the node is deleted or the session is known to
		// have ended (see retry.CleanupContext). The lease (or
		// the error) is still the answer.
		cctx, cancel := retry.CleanupContext(ctx)
		defer cancel()
		_ = m.Unlock(cctx)
	}()
	switch s.cfg.layout {
	case Kazoo:
		return s.kazooLease(ctx, try)
	case Curator:
		if err := s.checkNoKazooLeases(ctx); err != nil {
			return nil, err
		}
	}
	leases := s.dir + "/leases"
	guid := seqnode.NewGUID(s.conn)
	defer func() {
		if err != nil {
			cctx, cancel := retry.CleanupContext(ctx)
			defer cancel()
			_ = seqnode.DeleteGUID(cctx, s.conn, leases, guid)
		}
	}()
	for {
		p, err := seqnode.CreateProtected(ctx, s.conn, leases, guid, leaseName, s.cfg.data, zksim.ModeEphemeralSequential, s.cfg.acl)
		if err != nil {
			return nil, err
		}
		st, err := s.waitForLease(ctx, m.Key(), p, try)
		if errors.Is(err, errLeaseVanished) {
			continue
		}
		if errors.Is(err, errLockLost) {
			// A third party deleted our internal lock node: another
			// acquirer may hold the lock now and wait for a lease
			// beside us, each counting the other's lease node for
			// ever. Give our place back and queue again, as Curator's
			// InterProcessSemaphoreV2 starts over from its lock when
			// its lease node vanishes.
			if err := seqnode.Delete(ctx, s.conn, p); err != nil {
				return nil, err
			}
			_ = m.Unlock(ctx) // its node is gone: nothing to wait for
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Lease{conn: s.conn, h: &contend.Hold{Path: p, Token: st.Czxid, Tracker: hold.Start(s.conn, p)}}, nil
	}
}

var (
	errLeaseVanished = errors.New("lock: lease node vanished")
	errLockLost      = errors.New("lock: the semaphore's internal lock node vanished")
)

// waitForLease waits, holding the internal lock (its node lockNode),
// until at most max leases exist, ours included. It returns errLockLost
// once lockNode is gone while it waits.
func (s *Semaphore) waitForLease(ctx context.Context, lockNode, p string, try bool) (*zksim.Stat, error) {
	dir, name := path.Split(p)
	dir = path.Clean(dir)
	for {
		var (
			children []string
			watch    <-chan zksim.Event
		)
		err := retry.Do(ctx, s.conn, func() error {
			var err error
			children, _, watch, err = leasesGone(s.conn.ChildrenW(ctx, dir))
			return err
		})
		if err != nil {
			return nil, err
		}
		nodes := seqnode.ParseAll(children, leaseName)
		if seqnode.Index(nodes, name) < 0 {
			return nil, errLeaseVanished
		}
		count := len(nodes)
		if s.cfg.layout == Curator {
			count = len(children) // Curator counts every child
		}
		if count <= s.max {
			st, err := seqnode.OwnedStat(ctx, s.conn, p)
			if err != nil {
				return nil, err
			}
			if st == nil {
				return nil, errLeaseVanished
			}
			return st, nil
		}
		if try {
			return nil, ErrNoLease
		}
		var (
			held      bool
			lockWatch <-chan zksim.Event
		)
		err = retry.Do(ctx, s.conn, func() error {
			var err error
			held, _, lockWatch, err = s.conn.ExistsW(ctx, lockNode)
			return err
		})
		if err != nil {
			return nil, err
		}
		if !held {
			return nil, errLockLost
		}
		var ev zksim.Event
		select {
		case ev = <-watch:
		case ev = <-lockWatch: // both end with the session
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ev.Type == zksim.EventNotWatching {
			if ev.Err != nil {
				return nil, ev.Err
			}
			return nil, zksim.ErrClosing
		}
	}
}

// Release gives the lease back: its state becomes Released and its node is
// deleted, waiting out connection losses until ctx is done. A lease node
// already gone (the lease was Lost) counts as released. Release a Lost
// lease too: after a long disconnection its node may remain, taking a
// permit for as long as the session lives (see Lost in the package doc);
// the next Acquire is a new lease and deletes nothing of this one.
func (l *Lease) Release(ctx context.Context) error {
	l.h.Stop()
	err := seqnode.Delete(ctx, l.conn, l.h.Path)
	if retry.Final(err) {
		return nil
	}
	return err
}

// Key returns the path of the lease node.
func (l *Lease) Key() string { return l.h.Path }

// Token returns the lease node's czxid, a fencing token as for Mutex.Token.
func (l *Lease) Token() int64 { return l.h.Token }

// Guard returns a check op on the lease node, so that a Multi that starts
// with it is applied only while the lease lasts, as Mutex.Guard. It
// returns ErrNotHeld once the lease has ended (Lost or Released).
func (l *Lease) Guard() (zksim.Op, error) {
	if l.h.State().Final() {
		return nil, ErrNotHeld
	}
	return l.h.Guard(), nil
}

// State returns Held, Doubtful, Lost or Released (see the package doc).
func (l *Lease) State() recipes.HoldState { return l.h.State() }

// Watch returns the current state and a channel closed at its next change
// (already closed once the lease has ended).
func (l *Lease) Watch() (recipes.HoldState, <-chan struct{}) { return l.h.Watch() }

// Done returns a channel closed when the lease ends: Lost or Released.
func (l *Lease) Done() <-chan struct{} { return l.h.Done() }

// leasesGone maps ErrNoNode from listing the leases directory to
// errLeaseVanished: the directory is deleted only once empty, so our
// lease node went first (a third party deleted them), and Acquire starts
// over, creating both again. (Defined last, so as not to move the lines
// above.)
func leasesGone(children []string, st *zksim.Stat, watch <-chan zksim.Event, err error) ([]string, *zksim.Stat, <-chan zksim.Event, error) {
	if errors.Is(err, zksim.ErrNoNode) {
		err = errLeaseVanished
	}
	return children, st, watch, err
}
