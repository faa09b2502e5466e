package explore

import (
	"context"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
)

// The real lock recipes as the lock machine's holdables, and their kinds.

// mutexHold is a Mutex as a holdable.
type mutexHold struct{ *lock.Mutex }

func (h mutexHold) Acquire(ctx context.Context) error { return h.Lock(ctx) }
func (h mutexHold) Release(ctx context.Context) error { return h.Unlock(ctx) }
func (h mutexHold) Exclusive() bool                   { return true }

// rwHold is either half of a read-write lock as a holdable.
type rwHold struct {
	*lock.Mutex
	write bool
}

func (h rwHold) Acquire(ctx context.Context) error { return h.Lock(ctx) }
func (h rwHold) Release(ctx context.Context) error { return h.Unlock(ctx) }
func (h rwHold) Exclusive() bool                   { return h.write }

// leaseHold is a semaphore's lease as a holdable.
type leaseHold struct {
	sem   *lock.Semaphore
	lease *lock.Lease
}

func (h *leaseHold) Acquire(ctx context.Context) error {
	l, err := h.sem.Acquire(ctx)
	if err == nil {
		h.lease = l
	}
	return err
}
func (h *leaseHold) Release(ctx context.Context) error { return h.lease.Release(ctx) }
func (h *leaseHold) Exclusive() bool                   { return false }
func (h *leaseHold) Token() int64                      { return h.lease.Token() }
func (h *leaseHold) State() recipes.HoldState {
	if h.lease == nil {
		return recipes.NotHeld
	}
	return h.lease.State()
}

// lockDir is the directory of the locks' contender nodes.
const lockDir = "/lock"

// mutexKind and rwKind are the lock machine's kinds of the real locks,
// each with the rest of its API (lock_api.go); the semaphore's:
// lock_semaphore.go.
var (
	mutexKind = lockKind{
		name: "lock",
		dirs: []string{lockDir},
		newHold: func(_ *rapid.T, c *client) holdable {
			return mutexHold{lock.New(recipeConn(c), lockDir)}
		},
		newAPI: newAPIMutex,
	}
	rwKind = lockKind{
		name:        "read-write lock",
		dirs:        []string{lockDir},
		readMarker:  "read-",
		writeMarker: "write-",
		newHold: func(t *rapid.T, c *client) holdable {
			write := c.idx%2 == 0 // in the liveness phase: fixed roles
			if t != nil {
				write = rapid.Bool().Draw(t, "write")
			}
			rw := lock.NewRWMutex(recipeConn(c), lockDir)
			if write {
				return rwHold{rw.Writer(), true}
			}
			return rwHold{rw.Reader(), false}
		},
		newAPI: newAPIRWMutex,
	}
)
