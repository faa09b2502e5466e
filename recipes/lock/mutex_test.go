package lock_test

import (
	"context"
	"errors"
	"path"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	bt "github.com/zksim/zksim/zktest"
)

var cases = bt.Cases{
	"MutexBasics":                  testMutexBasics,
	"MutexExclusion":               testMutexExclusion,
	"MutexFIFO":                    testMutexFIFO,
	"TryLock":                      testTryLock,
	"CancelRemovesNode":            testCancelRemovesNode,
	"HolderClosed":                 testHolderClosed,
	"RWMutexSharing":               testRWMutexSharing,
	"RWMutexNoWriterStarvation":    testRWMutexNoWriterStarvation,
	"Semaphore":                    testSemaphore,
	"SemaphoreLeasesDeleted":       testSemaphoreLeasesDeleted,
	"SemaphoreInternalLockDeleted": testSemaphoreInternalLockDeleted,
	"Guard":                        testGuard,
	"LeaseGuard":                   testLeaseGuard,
	"Locker":                       testLocker,
}

var lockNodeName = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-lock-\d{10}$`)

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testMutexBasics(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	conn := env.Conn(t)
	dir := env.Path("lock")
	m := lock.New(conn, dir)
	if got := m.State(); got != recipes.NotHeld {
		t.Fatalf("state before Lock = %v, want NotHeld", got)
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Unlock before Lock: %v, want ErrNotHeld", err)
	}
	must(t, "Lock", m.Lock(ctx))
	if got := m.State(); got != recipes.Held {
		t.Fatalf("state after Lock = %v, want Held", got)
	}
	if err := m.Lock(ctx); !errors.Is(err, lock.ErrAlreadyHeld) {
		t.Fatalf("second Lock: %v, want ErrAlreadyHeld", err)
	}
	if path.Dir(m.Key()) != dir || !lockNodeName.MatchString(path.Base(m.Key())) {
		t.Fatalf("key %q does not follow %s/_c_<guid>-lock-<seq>", m.Key(), dir)
	}
	ok, st, err := conn.Exists(ctx, m.Key())
	must(t, "exists", err)
	if !ok || st.EphemeralOwner != conn.SessionID() {
		t.Fatalf("lock node: exists %v stat %v, want ephemeral of session %#x", ok, st, conn.SessionID())
	}
	if m.Token() != st.Czxid {
		t.Fatalf("token %d, want the node's czxid %d", m.Token(), st.Czxid)
	}
	done := m.Done()
	must(t, "Unlock", m.Unlock(ctx))
	<-done
	if got := m.State(); got != recipes.Released {
		t.Fatalf("state after Unlock = %v, want Released", got)
	}
	if children := bt.Children(t, ctx, conn, dir); len(children) != 0 {
		t.Fatalf("children after Unlock: %v, want none", children)
	}
	if err := m.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want ErrNotHeld", err)
	}
	first := m.Token()
	must(t, "Lock again", m.Lock(ctx))
	if m.Token() <= first {
		t.Fatalf("token of the second hold %d, want > %d", m.Token(), first)
	}
	must(t, "Unlock", m.Unlock(ctx))
}

// testMutexExclusion runs several clients that lock and unlock in a loop:
// never two holders at once, and every hold's fencing token is larger than
// every earlier one's.
func testMutexExclusion(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	const clients, rounds = 3, 4
	dir := env.Path("lock")
	var (
		holders   atomic.Int32
		mu        sync.Mutex
		lastToken int64
		wg        sync.WaitGroup
	)
	for i := 0; i < clients; i++ {
		m := lock.New(env.Conn(t), dir)
		wg.Go(func() {
			for r := 0; r < rounds; r++ {
				if err := m.Lock(ctx); err != nil {
					t.Errorf("Lock: %v", err)
					return
				}
				if n := holders.Add(1); n != 1 {
					t.Error("two holders at once")
				}
				mu.Lock()
				if m.Token() <= lastToken {
					t.Error("fencing token did not grow")
				}
				lastToken = m.Token()
				mu.Unlock()
				holders.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					t.Errorf("Unlock: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if children := bt.Children(t, ctx, env.Conn(t), dir); len(children) != 0 {
		t.Fatalf("orphans: %v", children)
	}
}

// testMutexFIFO: waiters get the lock in the order they asked for it.
func testMutexFIFO(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	observer := env.Conn(t)
	a, b, c := lock.New(env.Conn(t), dir), lock.New(env.Conn(t), dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	cDone := bt.GoErr(func() error { return c.Lock(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 3)
	env.Settle()
	bt.Pending(t, bDone, "b.Lock while a holds")
	bt.Pending(t, cDone, "c.Lock while a holds")
	must(t, "a.Unlock", a.Unlock(ctx))
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	env.Settle()
	bt.Pending(t, cDone, "c.Lock while b holds")
	must(t, "b.Unlock", b.Unlock(ctx))
	must(t, "c.Lock", bt.Recv(t, ctx, cDone).Err)
	must(t, "c.Unlock", c.Unlock(ctx))
}

func testTryLock(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	a, b := lock.New(env.Conn(t), dir), lock.New(env.Conn(t), dir)
	must(t, "a.TryLock", a.TryLock(ctx))
	if err := b.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("b.TryLock while a holds: %v, want ErrLocked", err)
	}
	if got := b.State(); got != recipes.NotHeld {
		t.Fatalf("b state after a failed TryLock = %v, want NotHeld", got)
	}
	if children := bt.Children(t, ctx, env.Conn(t), dir); len(children) != 1 || dir+"/"+children[0] != a.Key() {
		t.Fatalf("children %v, want only a's node %s", children, a.Key())
	}
	must(t, "a.Unlock", a.Unlock(ctx))
	must(t, "b.TryLock after a.Unlock", b.TryLock(ctx))
	must(t, "b.Unlock", b.Unlock(ctx))
}

func testCancelRemovesNode(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	observer := env.Conn(t)
	a, b := lock.New(env.Conn(t), dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bctx, cancel := context.WithCancel(ctx)
	bDone := bt.GoErr(func() error { return b.Lock(bctx) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	cancel()
	if err := bt.Recv(t, ctx, bDone).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock: %v, want context.Canceled", err)
	}
	if children := bt.Children(t, ctx, observer, dir); len(children) != 1 || dir+"/"+children[0] != a.Key() {
		t.Fatalf("children after cancel %v, want only a's node", children)
	}
	must(t, "a.Unlock", a.Unlock(ctx))
	must(t, "b.Lock after cancel", b.Lock(ctx))
	must(t, "b.Unlock", b.Unlock(ctx))
}

// testHolderClosed: a holder that closes its Conn is told Lost, and the
// next waiter gets the lock.
func testHolderClosed(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	aConn := env.Conn(t)
	a, b := lock.New(aConn, dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	must(t, "close a", aConn.Close())
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("a's hold not ended after its Conn closed")
	}
	if got := a.State(); got != recipes.Lost {
		t.Fatalf("a state = %v, want Lost", got)
	}
	if b.Token() <= a.Token() {
		t.Fatalf("b's token %d not above a's %d", b.Token(), a.Token())
	}
	must(t, "a.Unlock after loss", a.Unlock(ctx))
	must(t, "b.Unlock", b.Unlock(ctx))
}

func testRWMutexSharing(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("rw")
	observer := env.Conn(t)
	r1 := lock.NewRWMutex(env.Conn(t), dir)
	r2 := lock.NewRWMutex(env.Conn(t), dir)
	w := lock.NewRWMutex(env.Conn(t), dir)
	must(t, "r1", r1.RLock(ctx))
	must(t, "r2 while r1 reads", r2.RLock(ctx))
	if err := w.TryLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("write TryLock while reading: %v, want ErrLocked", err)
	}
	if err := r1.Unlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Unlock of a read hold: %v, want ErrNotHeld", err)
	}
	wDone := bt.GoErr(func() error { return w.Lock(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 3)
	must(t, "r1.RUnlock", r1.RUnlock(ctx))
	env.Settle()
	bt.Pending(t, wDone, "write Lock while r2 reads")
	must(t, "r2.RUnlock", r2.RUnlock(ctx))
	must(t, "w", bt.Recv(t, ctx, wDone).Err)
	if w.Writer().State() != recipes.Held || w.Reader().State() != recipes.NotHeld {
		t.Fatalf("writer: write half %v, read half %v; want Held, NotHeld", w.Writer().State(), w.Reader().State())
	}
	if err := r1.TryRLock(ctx); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("read TryRLock while writing: %v, want ErrLocked", err)
	}
	if err := w.RUnlock(ctx); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("RUnlock of a write hold: %v, want ErrNotHeld", err)
	}
	must(t, "w.Unlock", w.Unlock(ctx))
	must(t, "r1 after the writer", r1.TryRLock(ctx))
	must(t, "r1.RUnlock", r1.RUnlock(ctx))
}

// testRWMutexNoWriterStarvation: a reader that comes after a waiting
// writer waits behind it.
func testRWMutexNoWriterStarvation(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("rw")
	observer := env.Conn(t)
	r1 := lock.NewRWMutex(env.Conn(t), dir)
	w := lock.NewRWMutex(env.Conn(t), dir)
	r2 := lock.NewRWMutex(env.Conn(t), dir)
	must(t, "r1", r1.RLock(ctx))
	wDone := bt.GoErr(func() error { return w.Lock(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	r2Done := bt.GoErr(func() error { return r2.RLock(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 3)
	env.Settle()
	bt.Pending(t, r2Done, "a reader behind a waiting writer")
	must(t, "r1.RUnlock", r1.RUnlock(ctx))
	must(t, "w", bt.Recv(t, ctx, wDone).Err)
	env.Settle()
	bt.Pending(t, r2Done, "a reader while the writer holds")
	must(t, "w.Unlock", w.Unlock(ctx))
	must(t, "r2", bt.Recv(t, ctx, r2Done).Err)
	must(t, "r2.RUnlock", r2.RUnlock(ctx))
}

func testSemaphore(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("sem")
	observer := env.Conn(t)
	sems := make([]*lock.Semaphore, 4)
	for i := range sems {
		sems[i] = newSemaphore(t, env.Conn(t), dir, 2)
	}
	l0, err := sems[0].Acquire(ctx)
	must(t, "lease 0", err)
	l1, err := sems[1].Acquire(ctx)
	must(t, "lease 1", err)
	if l0.State() != recipes.Held || l1.State() != recipes.Held {
		t.Fatalf("lease states %v %v, want Held", l0.State(), l1.State())
	}
	if _, err := sems[2].TryAcquire(ctx); !errors.Is(err, lock.ErrNoLease) {
		t.Fatalf("TryAcquire when full: %v, want ErrNoLease", err)
	}
	got := bt.Go(func() (*lock.Lease, error) { return sems[2].Acquire(ctx) })
	bt.WaitChildren(t, ctx, observer, dir+"/leases", 3)
	env.Settle()
	bt.Pending(t, got, "Acquire when full")
	must(t, "release 0", l0.Release(ctx))
	if l0.State() != recipes.Released {
		t.Fatalf("released lease state %v", l0.State())
	}
	r := bt.Recv(t, ctx, got)
	must(t, "lease 2", r.Err)
	if ok, st, err := observer.Exists(ctx, r.Val.Key()); err != nil || !ok || st.Czxid != r.Val.Token() {
		t.Fatalf("lease node %s: exists %v stat %v err %v", r.Val.Key(), ok, st, err)
	}
	must(t, "release 1", l1.Release(ctx))
	must(t, "release 2", r.Val.Release(ctx))
	if leases := bt.Children(t, ctx, observer, dir+"/leases"); len(leases) != 0 {
		t.Fatalf("leases left: %v", leases)
	}
	if locks := bt.Children(t, ctx, observer, dir+"/locks"); len(locks) != 0 {
		t.Fatalf("internal lock nodes left: %v", locks)
	}
}
