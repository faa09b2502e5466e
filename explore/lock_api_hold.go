package explore

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// The holds of the real lock recipes with the rest of their API, as the
// API actions of lock_api.go use them.

// apiHold is a hold of a real lock recipe, with the rest of its API.
type apiHold interface {
	holdable
	Key() string
	Watch() (recipes.HoldState, <-chan struct{})
	Done() <-chan struct{}
	Guard() (zksim.Op, error)
	// tryAcquire acquires only if the hold is free now (TryLock,
	// TryRLock, TryAcquire).
	tryAcquire(ctx context.Context) error
	// refusal is what tryAcquire returns when the hold is not free.
	refusal() error
	// locker is the hold's sync.Locker, nil if the recipe has none.
	locker() sync.Locker
	// mutex is the Mutex behind the hold, nil for a semaphore lease.
	mutex() *lock.Mutex
	// blocked reports whether the tree holds a node that keeps a try
	// from succeeding: one of another session, or one that was there
	// when the try began (before).
	blocked(w *world, session int64, before map[string]bool) bool
}

// apiClient is what the API actions remember of one client.
type apiClient struct {
	trying    atomic.Bool // a try acquisition runs
	contended atomic.Bool // a node that could refuse it was seen since it began
	before    map[string]bool
	// h and last are the hold and state checkHolds last saw, doubtful
	// since when it has been Doubtful (-1 if not): machine goroutine only.
	h        apiHold
	key      string // h's Key then
	last     recipes.HoldState
	doubtful time.Duration
	// since is when the hold last became Doubtful (-1: it is not);
	// released that a release of it was called: machine goroutine only.
	since    time.Duration
	released bool
	// downFrom is when the client's Conn last left StateConnected (-1:
	// connected); longDown, that it has stayed down for the session
	// timeout since the acquisition began: machine goroutine only.
	downFrom time.Duration
	longDown bool
	closed   atomic.Bool // its process closed the session
	ownerCache
}

// apiMutex is a lock or one half of a read-write lock.
type apiMutex struct {
	*lock.Mutex
	rw    *lock.RWMutex // nil for an exclusive lock
	write bool
}

func (h apiMutex) Acquire(ctx context.Context) error {
	switch {
	case h.rw == nil:
		return h.Lock(ctx)
	case h.write:
		return h.rw.Lock(ctx)
	}
	return h.rw.RLock(ctx)
}

func (h apiMutex) Release(ctx context.Context) error {
	switch {
	case h.rw == nil:
		return h.Unlock(ctx)
	case h.write:
		return h.rw.Unlock(ctx)
	}
	return h.rw.RUnlock(ctx)
}

func (h apiMutex) tryAcquire(ctx context.Context) error {
	switch {
	case h.rw == nil:
		return h.TryLock(ctx)
	case h.write:
		return h.rw.TryLock(ctx)
	}
	return h.rw.TryRLock(ctx)
}

func (h apiMutex) Exclusive() bool    { return h.rw == nil || h.write }
func (h apiMutex) refusal() error     { return lock.ErrLocked }
func (h apiMutex) mutex() *lock.Mutex { return h.Mutex }

func (h apiMutex) locker() sync.Locker {
	switch {
	case h.rw == nil:
		return lock.NewLocker(h.Mutex)
	case h.write:
		return lock.NewLocker(h.rw.Writer())
	}
	return h.rw.RLocker()
}

// blocked: any node blocks a lock or a writer; a reader only a writer's.
func (h apiMutex) blocked(w *world, session int64, before map[string]bool) bool {
	for _, n := range w.children(lockDir) {
		if h.rw != nil && !h.write && !strings.Contains(n, "write-") {
			continue
		}
		if before[n] || w.owner(lockDir+"/"+n) != session {
			return true
		}
	}
	return false
}

// apiLease is a semaphore lease. The lease is set by the acquiring
// goroutine and read by the machine's checks at any time, hence atomic.
type apiLease struct {
	sem   *lock.Semaphore
	lease *atomic.Pointer[lock.Lease]
	cfg   semaphoreConfig // sem's layout and max
}

func (h apiLease) Acquire(ctx context.Context) error {
	l, err := h.sem.Acquire(ctx)
	if err == nil {
		h.lease.Store(l)
	}
	return err
}

func (h apiLease) tryAcquire(ctx context.Context) error {
	l, err := h.sem.TryAcquire(ctx)
	if err == nil {
		h.lease.Store(l)
	}
	return err
}

func (h apiLease) Release(ctx context.Context) error { return h.lease.Load().Release(ctx) }
func (h apiLease) Exclusive() bool                   { return false }

func (h apiLease) State() recipes.HoldState {
	if l := h.lease.Load(); l != nil {
		return l.State()
	}
	return recipes.NotHeld
}

func (h apiLease) Key() string {
	if l := h.lease.Load(); l != nil {
		return l.Key()
	}
	return ""
}

func (h apiLease) Watch() (recipes.HoldState, <-chan struct{}) {
	if l := h.lease.Load(); l != nil {
		return l.Watch()
	}
	return recipes.NotHeld, closedChan
}

func (h apiLease) Done() <-chan struct{} {
	if l := h.lease.Load(); l != nil {
		return l.Done()
	}
	return closedChan
}

func (h apiLease) Guard() (zksim.Op, error) {
	if l := h.lease.Load(); l != nil {
		return l.Guard()
	}
	return nil, lock.ErrNotHeld
}

func (h apiLease) Token() int64 {
	if l := h.lease.Load(); l != nil {
		return l.Token()
	}
	return 0
}

func (h apiLease) refusal() error      { return lock.ErrNoLease }
func (h apiLease) locker() sync.Locker { return nil }
func (h apiLease) mutex() *lock.Mutex  { return nil }

// blocked: max leases of others (or there before the try) exist, counted
// as the layout counts them (semaphoreConfig.counts).
func (h apiLease) blocked(w *world, session int64, before map[string]bool) bool {
	n, dir := 0, h.cfg.leaseDir()
	for _, name := range w.children(dir) {
		if h.cfg.counts(name) && (before[name] || w.owner(dir+"/"+name) != session) {
			n++
		}
	}
	return n >= h.cfg.max
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// newAPIMutex and newAPIRWMutex make the holds of the real lock recipes
// for the API actions, with data as the node's data (the semaphore's:
// semaphoreKindOf).
func newAPIMutex(_ *rapid.T, c *client, data []byte) apiHold {
	return apiMutex{Mutex: lock.New(recipeConn(c), lockDir, lock.WithData(data))}
}

func newAPIRWMutex(t *rapid.T, c *client, data []byte) apiHold {
	rw := lock.NewRWMutex(recipeConn(c), lockDir, lock.WithData(data), lock.WithACL(zksim.OpenACL()))
	if rapid.Bool().Draw(t, "write") {
		return apiMutex{Mutex: rw.Writer(), rw: rw, write: true}
	}
	return apiMutex{Mutex: rw.Reader(), rw: rw}
}
