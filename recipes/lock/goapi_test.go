package lock_test

import (
	"errors"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	bt "github.com/zksim/zksim/zktest"
)

// newSemaphore is lock.NewSemaphore for arguments that are right.
func newSemaphore(t *testing.T, conn zksim.Conn, dir string, max int) *lock.Semaphore {
	t.Helper()
	s, err := lock.NewSemaphore(conn, dir, max)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSemaphoreBadArguments(t *testing.T) {
	for _, tc := range []struct {
		dir string
		max int
	}{{"/sem", 0}, {"/sem", -3}, {"sem", 1}, {"/sem/", 1}, {"", 2}} {
		s, err := lock.NewSemaphore(nil, tc.dir, tc.max)
		if !errors.Is(err, zksim.ErrBadArguments) || s != nil {
			t.Errorf("NewSemaphore(%q, %d) = %v, %v; want nil, ErrBadArguments", tc.dir, tc.max, s, err)
		}
	}
}

// testGuard: the guard lets a Multi through while the lock is held, and
// stops it once the hold has ended, whoever sends it.
func testGuard(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	conn, other := env.Conn(t), env.Conn(t)
	dir, data := env.Path("lock"), env.Path("data")
	m := lock.New(conn, dir)
	if _, err := m.Guard(); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Guard before Lock: %v, want ErrNotHeld", err)
	}
	must(t, "Lock", m.Lock(ctx))
	guard, err := m.Guard()
	must(t, "Guard", err)
	if c, ok := guard.(*zksim.CheckOp); !ok || c.Path != m.Key() || c.Version != -1 {
		t.Fatalf("Guard = %#v; want a CheckOp on %s, any version", guard, m.Key())
	}
	if _, err := conn.Multi(ctx, guard, &zksim.CreateOp{Path: data, Data: []byte("1"), Mode: zksim.ModePersistent, ACL: zksim.OpenACL()}); err != nil {
		t.Fatalf("guarded Multi while held: %v", err)
	}
	must(t, "Unlock", m.Unlock(ctx))
	if _, err := m.Guard(); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Guard after Unlock: %v, want ErrNotHeld", err)
	}
	_, err = other.Multi(ctx, guard, &zksim.SetOp{Path: data, Data: []byte("2"), Version: -1})
	if !errors.Is(err, zksim.ErrNoNode) {
		t.Fatalf("Multi with the guard of an ended hold: %v, want ErrNoNode", err)
	}
	if got, _, err := other.Get(ctx, data); err != nil || string(got) != "1" {
		t.Fatalf("data after the refused Multi: %q, %v; want 1", got, err)
	}
}

func testLeaseGuard(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	conn := env.Conn(t)
	l, err := newSemaphore(t, conn, env.Path("sem"), 1).Acquire(ctx)
	must(t, "Acquire", err)
	guard, err := l.Guard()
	must(t, "Guard", err)
	if _, err := conn.Multi(ctx, guard); err != nil {
		t.Fatalf("guarded Multi while leased: %v", err)
	}
	must(t, "Release", l.Release(ctx))
	if _, err := l.Guard(); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Guard after Release: %v, want ErrNotHeld", err)
	}
	if _, err := conn.Multi(ctx, guard); !errors.Is(err, zksim.ErrNoNode) {
		t.Fatalf("Multi with the guard of a released lease: %v, want ErrNoNode", err)
	}
}

// panicOf runs f and returns what it panicked with, nil if it did not.
func panicOf(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// testLocker: the sync.Locker excludes another Locker on the same lock;
// an Unlock of nothing and a Lock on a closed Conn panic with an error
// that says why.
func testLocker(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	observer := env.Conn(t)
	a := lock.New(env.Conn(t), dir)
	la, lb := lock.NewLocker(a), lock.NewLocker(lock.New(env.Conn(t), dir))
	la.Lock()
	if a.State() != recipes.Held {
		t.Fatalf("after Locker.Lock the Mutex is %v, want Held", a.State())
	}
	bDone := bt.GoErr(func() error { lb.Lock(); return nil })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	env.Settle()
	bt.Pending(t, bDone, "Locker.Lock while another holds")
	la.Unlock()
	must(t, "b", bt.Recv(t, ctx, bDone).Err)
	lb.Unlock()

	if p := panicOf(la.Unlock); !isErr(p, lock.ErrNotHeld) {
		t.Fatalf("Unlock of an unlocked Locker panicked with %v; want an error matching ErrNotHeld", p)
	}
	closed := env.Conn(t)
	_ = closed.Close()
	if p := panicOf(lock.NewLocker(lock.New(closed, dir)).Lock); !isErr(p, zksim.ErrClosing) {
		t.Fatalf("Lock on a closed Conn panicked with %v; want an error matching ErrClosing", p)
	}

	// RLocker: two readers at once.
	r1, r2 := lock.NewRWMutex(env.Conn(t), dir+"rw").RLocker(), lock.NewRWMutex(env.Conn(t), dir+"rw").RLocker()
	r1.Lock()
	r2.Lock()
	r1.Unlock()
	r2.Unlock()
}

func isErr(p any, target error) bool {
	err, ok := p.(error)
	return ok && errors.Is(err, target)
}
