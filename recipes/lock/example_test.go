package lock_test

import (
	"context"
	"fmt"
	"log"

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

// Readers share the lock; a writer has it alone.
func ExampleRWMutex() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	c1, _ := srv.Connect()
	c2, _ := srv.Connect()
	c3, _ := srv.Connect()

	r1 := lock.NewRWMutex(c1, "/locks/config").ReadLock()
	r2 := lock.NewRWMutex(c2, "/locks/config").ReadLock()
	w := lock.NewRWMutex(c3, "/locks/config").WriteLock()
	fmt.Println("r1:", r1.Lock(ctx))
	fmt.Println("r2:", r2.Lock(ctx))
	fmt.Println("w:", w.TryLock(ctx))
	_ = r1.Unlock(ctx)
	_ = r2.Unlock(ctx)
	fmt.Println("w after the readers:", w.TryLock(ctx))
	_ = w.Unlock(ctx)
	// Output:
	// r1: <nil>
	// r2: <nil>
	// w: lock: held by another client
	// w after the readers: <nil>
}

// A semaphore of two leases.
func ExampleSemaphore() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()
	conn, _ := srv.Connect()

	sem := lock.NewSemaphore(conn, "/semaphores/workers", 2)
	l1, _ := sem.Acquire(ctx)
	l2, _ := sem.Acquire(ctx)
	_, err := sem.TryAcquire(ctx)
	fmt.Println("third:", err)
	_ = l1.Release(ctx)
	l3, err := sem.TryAcquire(ctx)
	fmt.Println("after a release:", err)
	_ = l2.Release(ctx)
	_ = l3.Release(ctx)
	// Output:
	// third: lock: no lease available
	// after a release: <nil>
}
