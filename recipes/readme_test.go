package recipes_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/election"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/recipes/queue"
)

// The Go-shaped calls the README lists, in its order; kept here so they
// stay true.
func TestREADMERecipes(t *testing.T) {
	ctx := t.Context()
	conn := newConn(t)
	if _, err := conn.Create(ctx, "/config", nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	v := []byte("v")

	m := lock.New(conn, "/locks/report")
	err := m.Lock(ctx)
	check(t, "Lock", err)
	guard, err := m.Guard()
	check(t, "Guard", err)
	_, err = conn.Multi(ctx, guard, &zksim.SetOp{Path: "/config", Data: v, Version: -1})
	check(t, "guarded Multi", err)
	check(t, "Unlock", m.Unlock(ctx))
	var l sync.Locker = lock.NewLocker(m)
	l.Lock()
	//lint:ignore SA2001 the README's calls, nothing to do while held
	l.Unlock()

	rw := lock.NewRWMutex(conn, "/locks/config")
	err = rw.RLock(ctx)
	check(t, "RLock", err)
	check(t, "RUnlock", rw.RUnlock(ctx))

	e := election.New(conn, "/election/app")
	err = e.Campaign(ctx, []byte("me"))
	check(t, "Campaign", err)
	check(t, "Resign", e.Resign(ctx))

	if _, err := lock.NewSemaphore(conn, "/sem", 0); !errors.Is(err, zksim.ErrBadArguments) {
		t.Errorf("NewSemaphore of 0: %v, want ErrBadArguments", err)
	}
	if _, err := queue.New(conn, "/q").TryTake(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Errorf("TryTake on an empty queue: %v, want ErrEmpty", err)
	}

	p, err := recipes.CreateProtectedEphemeralSequential(ctx, conn, "/workers/w-", nil, zksim.OpenACL())
	check(t, "CreateProtectedEphemeralSequential", err)
	if ok, _, err := conn.Exists(ctx, p); !ok || err != nil {
		t.Errorf("%s: exists %v, %v", p, ok, err)
	}
}

// The README's layouts, in its order.
func TestREADMELayouts(t *testing.T) {
	ctx := t.Context()
	conn := newConn(t)
	m := lock.New(conn, "/app/lock", lock.WithLayout(lock.Curator))
	check(t, "Curator Mutex", m.Lock(ctx))
	rw := lock.NewRWMutex(conn, "/app/rw", lock.WithLayout(lock.Kazoo))
	check(t, "kazoo RLock", rw.RLock(ctx))
	sem, err := lock.NewSemaphore(conn, "/app/sem", 2, lock.WithLayout(lock.Curator))
	check(t, "NewSemaphore", err)
	_, err = sem.Acquire(ctx)
	check(t, "Curator Acquire", err)
	e := election.New(conn, "/app/leader", election.WithLayout(election.CuratorLatch))
	check(t, "LeaderLatch Campaign", e.Campaign(ctx, nil))
	// A kazoo-layout lock on the Curator lock's path refuses it.
	if err := lock.New(conn, "/app/lock", lock.WithLayout(lock.Kazoo)).Lock(ctx); !errors.Is(err, recipes.ErrForeignNodes) {
		t.Errorf("kazoo layout on a Curator lock's path: %v, want ErrForeignNodes", err)
	}
}

func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
