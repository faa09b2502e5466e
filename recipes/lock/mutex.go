package lock

import (
	"context"
	"errors"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/internal/contend"
)

// Marker names of the contender nodes (the part before the sequence).
const (
	lockName  = "lock-"
	readName  = "read-"
	writeName = "write-"

	// Curator's InterProcessReadWriteLock and kazoo's locks.
	curatorReadName  = "__READ__"
	curatorWriteName = "__WRIT__"
	kazooLockName    = "__lock__"
	kazooReadName    = "__rlock__"
)

// Mutex is a distributed lock: an exclusive lock made by New, or one half
// of an RWMutex. It is not reentrant. Lock, TryLock and Unlock must not be
// called concurrently on one Mutex (make one Mutex per goroutine that
// contends); Key, Token, Guard, State, Watch and Done are safe at any
// time. NewLocker adapts it to [sync.Locker].
type Mutex struct {
	holder *contend.Holder
	data   []byte // our lock node's data (WithData)
}

// New returns an exclusive lock on the directory dir. Every client that
// locks the same dir, with the same layout (WithLayout), contends for the
// same lock. Nothing is sent to the server until Lock or TryLock.
func New(conn zksim.Conn, dir string, opts ...Option) *Mutex {
	cfg := newConfig(opts)
	name := exclusiveName(cfg.layout)
	return newMutex(conn, dir, name, []string{name}, contend.Exclusive, cfg)
}

// exclusiveName is the name of an exclusive lock's nodes in layout l.
func exclusiveName(l Layout) string {
	if l == Kazoo {
		return kazooLockName
	}
	return lockName
}

func newMutex(conn zksim.Conn, dir, name string, markers []string, rule contend.Rule, cfg config) *Mutex {
	return &Mutex{holder: contend.NewHolder(contend.Contender{
		Conn: conn, Dir: dir, Name: name, Markers: markers,
		ACL: cfg.acl, Rule: rule, Layout: cfg.layout.seq(),
	}), data: cfg.data}
}

// Lock blocks until this Mutex holds the lock, ctx is done, or the session
// can no longer act (expired or closed). It creates a contender node, then
// waits for the node just before it to go away; connection losses in
// between are waited out (a lost create reply included). On error it
// deletes its node and returns ctx.Err(), an error matching
// zksim.ErrSessionExpired or zksim.ErrClosing, ErrAlreadyHeld, or one
// matching recipes.ErrForeignNodes when dir holds nodes of a layout this
// lock cannot order (see the package doc).
//
// A Mutex may be locked again after any outcome of its last call: after
// Unlock, after a Lock that failed, and after its hold was Lost, without
// Unlock; Lock then first deletes what is left of the Lost hold, as a
// cleanup does (waiting out connection losses even after ctx is done: see
// Cancellation in the package doc; if the session ends meanwhile, it
// returns an error matching
// zksim.ErrSessionExpired, having contended on no other session).
func (m *Mutex) Lock(ctx context.Context) error { return m.lock(ctx, false) }

// TryLock takes the lock if it is free now and returns ErrLocked (having
// deleted its node) if another client holds it or waits for it ahead of
// us. It blocks only for the round trips, and across connection losses.
func (m *Mutex) TryLock(ctx context.Context) error { return m.lock(ctx, true) }

func (m *Mutex) lock(ctx context.Context, try bool) error {
	err := m.holder.Acquire(ctx, m.data, try)
	switch {
	case errors.Is(err, contend.ErrBusy):
		return ErrAlreadyHeld
	case errors.Is(err, contend.ErrWouldBlock):
		return ErrLocked
	}
	return err
}

// Unlock releases the lock: its state becomes Released and its node is
// deleted. It blocks until the delete is done, waiting out connection
// losses, or until ctx is done (the node then stays until the session
// ends, and Unlock may be called again). A lock node that is already gone
// (the hold was Lost) counts as released. It returns ErrNotHeld when this
// Mutex holds nothing.
func (m *Mutex) Unlock(ctx context.Context) error {
	err := m.holder.Release(ctx)
	if errors.Is(err, contend.ErrNothingHeld) {
		return ErrNotHeld
	}
	return err
}

// Key returns the path of the lock node of the current or last hold, ""
// if there is none.
func (m *Mutex) Key() string { return m.holder.Key() }

// Token returns the fencing token of the current or last hold: the czxid
// of its lock node, which is larger for every later hold of any lock of the
// ensemble. A resource that must not be written by two holders refuses
// tokens lower than the highest it has seen. 0 before the first hold.
func (m *Mutex) Token() int64 { return m.holder.Token() }

// Guard returns an op for a guarded [zksim.Conn.Multi], as etcd's
// Mutex.IsOwner returns a comparison for a guarded Txn: a
// [zksim.CheckOp] on our lock node, so the Multi is applied only if the
// node still exists, that is only while this hold lasts, as the server
// sees it, whatever the client believes. Put it first in the ops:
//
//	guard, err := m.Guard()
//	...
//	_, err = conn.Multi(ctx, guard, &zksim.SetOp{Path: "/config", Data: v, Version: -1})
//	// errors.Is(err, zksim.ErrNoNode): the lock was lost, nothing applied
//
// Where the fencing token (Token) needs the protected resource to compare
// tokens, the guard needs nothing of it but that it lives in the same
// ZooKeeper ensemble. A guard taken while the hold is Doubtful is still
// safe to use: the server decides. Guard returns ErrNotHeld when there is
// no current hold (never locked, Unlocked, or Lost).
func (m *Mutex) Guard() (zksim.Op, error) {
	op, ok := m.holder.Guard()
	if !ok {
		return nil, ErrNotHeld
	}
	return op, nil
}

// State returns what this Mutex knows of its hold: NotHeld before the
// first Lock, then Held, Doubtful, Lost or Released (see the package doc).
func (m *Mutex) State() recipes.HoldState { return m.holder.State() }

// Watch returns the current state and a channel closed at its next change
// (already closed once the hold has ended, or before the first hold).
// Changes can be missed between two calls (a short Doubtful spell, say),
// never a final state.
func (m *Mutex) Watch() (recipes.HoldState, <-chan struct{}) { return m.holder.Watch() }

// Done returns a channel closed when the current hold ends: Lost or
// Released. It is already closed when there is no hold.
func (m *Mutex) Done() <-chan struct{} { return m.holder.Done() }
