package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"

	"github.com/zksim/zksim"

	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/zkmem"
)

// Two clients contend for one lock; the fencing token grows with each hold.
func ExampleMutex() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	alice, _ := srv.Connect()
	bob, _ := srv.Connect()

	a, b := lock.New(alice, "/locks/report"), lock.New(bob, "/locks/report")
	if err := a.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("bob TryLock:", b.TryLock(ctx))
	first := a.Token()
	if err := a.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	if err := b.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("bob holds:", b.State(), "newer token:", b.Token() > first)
	_ = b.Unlock(ctx)
	// Output:
	// bob TryLock: lock: held by another client
	// bob holds: Held newer token: true
}

// A holder learns that its session expired: its hold is Lost.
func ExampleMutex_Done() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	m := lock.New(conn, "/locks/job")
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	conn.Server().Control(conn.SessionID()).Expire() // as if the process had been paused past its session timeout
	<-m.Done()
	fmt.Println(m.State())
	// Output: Lost
}

// Readers share the lock; a writer has it alone. The calls read like
// sync.RWMutex's, with a context first.
func ExampleRWMutex() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()
	c3, _ := srv.Connect()

	r1 := lock.NewRWMutex(c1, "/locks/config")
	r2 := lock.NewRWMutex(c2, "/locks/config")
	w := lock.NewRWMutex(c3, "/locks/config")
	fmt.Println("r1:", r1.RLock(ctx))
	fmt.Println("r2:", r2.RLock(ctx))
	fmt.Println("w:", w.TryLock(ctx))
	_ = r1.RUnlock(ctx)
	_ = r2.RUnlock(ctx)
	fmt.Println("w after the readers:", w.TryLock(ctx), w.Writer().State())
	_ = w.Unlock(ctx)
	// Output:
	// r1: <nil>
	// r2: <nil>
	// w: lock: held by another client
	// w after the readers: <nil> Held
}

// A semaphore of two leases.
func ExampleSemaphore() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	if _, err := lock.NewSemaphore(conn, "/semaphores/workers", 0); err != nil {
		fmt.Println(err)
	}
	sem, err := lock.NewSemaphore(conn, "/semaphores/workers", 2)
	if err != nil {
		log.Fatal(err)
	}
	l1, _ := sem.Acquire(ctx)
	l2, _ := sem.Acquire(ctx)
	_, err = sem.TryAcquire(ctx)
	fmt.Println("third:", err)
	_ = l1.Release(ctx)
	l3, err := sem.TryAcquire(ctx)
	fmt.Println("after a release:", err)
	_ = l2.Release(ctx)
	_ = l3.Release(ctx)
	// Output:
	// zk: bad arguments: lock.NewSemaphore: max 0 is less than 1
	// third: lock: no lease available
	// after a release: <nil>
}

// A write guarded by the lock: the Multi is applied only while the lock
// node exists. Once the holder's session has expired the same Multi is
// refused, whatever the holder believes.
func ExampleMutex_Guard() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()
	_, _ = conn.Create(ctx, "/config", []byte("v1"), zksim.ModePersistent, zksim.OpenACL())

	m := lock.New(conn, "/locks/config")
	if err := m.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	guard, err := m.Guard()
	if err != nil {
		log.Fatal(err)
	}
	_, err = conn.Multi(ctx, guard, &zksim.SetOp{Path: "/config", Data: []byte("v2"), Version: -1})
	fmt.Println("while held:", err)

	srv.Control(conn.SessionID()).Expire() // the holder's session ends, say after a long pause
	other, _ := srv.Connect()
	_, err = other.Multi(ctx, guard, &zksim.SetOp{Path: "/config", Data: []byte("v3"), Version: -1})
	fmt.Println("after the session expired:", errors.Is(err, zksim.ErrNoNode))
	data, _, _ := other.Get(ctx, "/config")
	fmt.Printf("config: %s\n", data)
	// Output:
	// while held: <nil>
	// after the session expired: true
	// config: v2
}

// A Mutex as a sync.Locker, for code written against that interface. It
// has no context and no error: it blocks for as long as it takes and
// panics when it cannot lock or unlock (see NewLocker).
func ExampleNewLocker() {
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	m := lock.New(conn, "/locks/counter")
	var l sync.Locker = lock.NewLocker(m)
	l.Lock()
	fmt.Println(m.State())
	l.Unlock()
	fmt.Println(m.State())
	// Output:
	// Held
	// Released
}

// A read-write lock that Curator's InterProcessReadWriteLock and kazoo's
// ReadLock and WriteLock take part in: every client of the directory, Go,
// Java or Python, names and orders its nodes alike. A lock of another
// layout refuses the directory rather than ignore their nodes.
func ExampleWithLayout() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	rw := lock.NewRWMutex(conn, "/locks/shared", lock.WithLayout(lock.Curator))
	if err := rw.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	key := rw.Writer().Key() // /locks/shared/_c_<guid>-__WRIT__0000000000
	fmt.Println("Curator's writer:", key[len(key)-18:])

	// kazoo's names on the same directory: the Curator layout cannot
	// order them as kazoo does, so it refuses.
	k := lock.New(conn, "/locks/kazoo", lock.WithLayout(lock.Kazoo))
	if err := k.Lock(ctx); err != nil {
		log.Fatal(err)
	}
	key = k.Key() // /locks/kazoo/<guid>__lock__0000000000
	fmt.Println("kazoo's lock:", key[len(key)-18:])
	c := lock.New(conn, "/locks/kazoo", lock.WithLayout(lock.Curator))
	fmt.Println("Curator layout beside it:", errors.Is(c.Lock(ctx), recipes.ErrForeignNodes))
	// Output:
	// Curator's writer: __WRIT__0000000000
	// kazoo's lock: __lock__0000000000
	// Curator layout beside it: true
}
