package lock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/zkmem"
	bt "github.com/zksim/zksim/zktest"
)

// faultCases put the locks under zkmem's faults at the worst moments.
var faultCases = bt.Cases{
	"FaultLostCreateReply":         testLostCreateReply,
	"FaultLostCreateReplyWaiting":  testLostCreateReplyWhileWaiting,
	"FaultHolderExpires":           testHolderExpires,
	"FaultHolderPartitioned":       testHolderPartitioned,
	"FaultWaiterReconnects":        testWaiterReconnects,
	"FaultWaiterExpires":           testWaiterExpires,
	"FaultCancelWhileDisconnected": testCancelWhileDisconnected,
	"FaultCancelWhileFlapping":     testCancelWhileFlapping,
	"FaultLostUnlockReply":         testLostUnlockReply,
	"FaultChaos":                   testLockChaos,
	"FaultLeaseHolderExpires":      testLeaseHolderExpires,
	"FaultSemaphoreChaos":          testSemaphoreChaos,
}

// testLostCreateReply loses (or drops) each create of a first Lock in
// turn: the failed lock node create, the two missing directories, the lock
// node itself (the fifth). The lock is taken, exactly one lock node
// exists, and Unlock leaves none.
func testLostCreateReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	observer := env.Conn(t)
	if _, err := observer.Create(ctx, env.Root, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatal(err)
	}
	for _, fault := range []zkmem.ConnFault{zkmem.LoseReply, zkmem.DropRequest} {
		for n := 1; n <= 5; n++ {
			dir := env.Path(fmt.Sprintf("%v-%d/lock", fault, n))
			conn := env.MemConn(t)
			conn.Server().Control(conn.SessionID()).SetFaultHook(bt.NthRequest(zkmem.OpCreate, n, fault))
			m := lock.New(conn, dir)
			must(t, fmt.Sprintf("Lock with create %d %v", n, fault), m.Lock(ctx))
			if children := bt.Children(t, ctx, observer, dir); len(children) != 1 || dir+"/"+children[0] != m.Key() {
				t.Fatalf("create %d %v: children %v, want only %s", n, fault, children, m.Key())
			}
			must(t, "Unlock", m.Unlock(ctx))
			if children := bt.Children(t, ctx, observer, dir); len(children) != 0 {
				t.Fatalf("create %d %v: orphans %v", n, fault, children)
			}
		}
	}
}

// testLostCreateReplyWhileWaiting: the waiter's create reply is lost while
// another client holds the lock. Without protected names the waiter would
// create a second node and its first would block it (and everyone behind)
// forever.
func testLostCreateReplyWhileWaiting(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	observer := env.Conn(t)
	a := lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bConn := env.MemConn(t)
	b := lock.New(bConn, dir)
	c := lock.New(env.Conn(t), dir)
	bConn.Server().Control(bConn.SessionID()).LoseNextReply(zkmem.OpCreate)
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	env.Settle()
	cDone := bt.GoErr(func() error { return c.Lock(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 3)
	env.Settle()
	bt.Pending(t, bDone, "b.Lock while a holds")
	must(t, "a.Unlock", a.Unlock(ctx))
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	must(t, "b.Unlock", b.Unlock(ctx))
	must(t, "c.Lock", bt.Recv(t, ctx, cDone).Err)
	must(t, "c.Unlock", c.Unlock(ctx))
	if children := bt.Children(t, ctx, observer, dir); len(children) != 0 {
		t.Fatalf("orphans: %v", children)
	}
}

// testHolderExpires: the holder's session expires; the waiter gets the
// lock, the old holder is told Lost, and its token is older.
func testHolderExpires(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	aConn := env.MemConn(t)
	a, b := lock.New(aConn, dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	aConn.Server().Control(aConn.SessionID()).Expire()
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("a not told its hold ended")
	}
	if got := a.State(); got != recipes.Lost {
		t.Fatalf("a state %v, want Lost", got)
	}
	if b.Token() <= a.Token() {
		t.Fatalf("b's token %d not above the expired holder's %d", b.Token(), a.Token())
	}
	must(t, "a.Unlock after expiry", a.Unlock(ctx))
	if err := a.Lock(ctx); !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Lock on an expired session: %v, want ErrSessionExpired", err)
	}
	must(t, "b.Unlock", b.Unlock(ctx))
}

// testHolderPartitioned: the holder's connection drops. It is told
// Doubtful at once, Held again after a reconnect within the session
// timeout, and when the connection stays down the waiter gets the lock only
// after the session expired, while the old holder is no longer Held.
func testHolderPartitioned(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	aConn := env.MemConn(t)
	a, b := lock.New(aConn, dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)

	st, changed := a.Watch()
	if st != recipes.Held {
		t.Fatalf("a state %v, want Held", st)
	}
	aConn.Server().Control(aConn.SessionID()).Disconnect()
	<-changed
	if st, changed = a.Watch(); st != recipes.Doubtful {
		t.Fatalf("a state after disconnect %v, want Doubtful", st)
	}
	env.Settle()
	bt.Pending(t, bDone, "b.Lock while a's session lives")
	must(t, "reconnect", aConn.Server().Control(aConn.SessionID()).Reconnect())
	<-changed
	if st := a.State(); st != recipes.Held {
		t.Fatalf("a state after reconnect %v, want Held", st)
	}

	aConn.Server().Control(aConn.SessionID()).Disconnect()
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	if st := a.State(); st == recipes.Held {
		t.Fatal("b holds the lock while a still believes it holds")
	}
	<-a.Done()
	if st := a.State(); st != recipes.Lost {
		t.Fatalf("a state %v, want Lost", st)
	}
	if err := aConn.Server().Control(aConn.SessionID()).Reconnect(); !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("reconnect after the timeout: %v, want ErrSessionExpired", err)
	}
	must(t, "b.Unlock", b.Unlock(ctx))
}

// testWaiterReconnects: the holder releases while the waiter is
// disconnected; the waiter's predecessor watch fires on reconnection.
func testWaiterReconnects(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	bConn := env.MemConn(t)
	a, b := lock.New(env.Conn(t), dir), lock.New(bConn, dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	env.Settle()
	bConn.Server().Control(bConn.SessionID()).Disconnect()
	must(t, "a.Unlock", a.Unlock(ctx))
	env.Settle()
	bt.Pending(t, bDone, "b.Lock while disconnected")
	must(t, "reconnect", bConn.Server().Control(bConn.SessionID()).Reconnect())
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	must(t, "b.Unlock", b.Unlock(ctx))
}

// testWaiterExpires: a waiter's session expires; its Lock fails with
// ErrSessionExpired and the others are not disturbed.
func testWaiterExpires(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	bConn := env.MemConn(t)
	a, b, c := lock.New(env.Conn(t), dir), lock.New(bConn, dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	cDone := bt.GoErr(func() error { return c.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 3)
	bConn.Server().Control(bConn.SessionID()).Expire()
	if err := bt.Recv(t, ctx, bDone).Err; !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("b.Lock after expiry: %v, want ErrSessionExpired", err)
	}
	must(t, "a.Unlock", a.Unlock(ctx))
	must(t, "c.Lock", bt.Recv(t, ctx, cDone).Err)
	must(t, "c.Unlock", c.Unlock(ctx))
}

// testCancelWhileDisconnected: a waiter gives up while its connection is
// down, and stays down past its session timeout: the server expires the
// session and its node, but the client does not know it, so the cleanup
// goes on (it never presumes an expiry, see package recipes). Lock
// returns once the client reconnects and hears of the expiry, and leaves
// no node behind.
func testCancelWhileDisconnected(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	observer := env.Conn(t)
	bConn := env.MemConn(t)
	a, b := lock.New(env.Conn(t), dir), lock.New(bConn, dir)
	must(t, "a.Lock", a.Lock(ctx))
	bctx, cancel := context.WithCancel(ctx)
	bDone := bt.GoErr(func() error { return b.Lock(bctx) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	bConn.Server().Control(bConn.SessionID()).Disconnect()
	cancel()
	time.Sleep(2 * bConn.SessionTimeout())
	env.Settle()
	bt.Pending(t, bDone, "cancelled Lock with its connection down")
	if err := bConn.Server().Control(bConn.SessionID()).Reconnect(); !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("reconnect: %v, want ErrSessionExpired", err)
	}
	if err := bt.Recv(t, ctx, bDone).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock: %v, want context.Canceled", err)
	}
	if children := bt.Children(t, ctx, observer, dir); len(children) != 1 {
		t.Fatalf("children %v, want only a's", children)
	}
	must(t, "a.Unlock", a.Unlock(ctx))
}

// testCancelWhileFlapping: a waiter gives up while its connection flaps:
// down for most of the session timeout, up for an instant, down again, for
// several session timeouts in total. Its session lives
// all along, so its node must not be given up: Lock returns only once the
// connection is back and the node deleted.
func testCancelWhileFlapping(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	observer := env.Conn(t)
	bConn := env.MemConn(t)
	a, b := lock.New(env.Conn(t), dir), lock.New(bConn, dir)
	must(t, "a.Lock", a.Lock(ctx))
	bctx, cancel := context.WithCancel(ctx)
	bDone := bt.GoErr(func() error { return b.Lock(bctx) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	bConn.Server().Control(bConn.SessionID()).Disconnect()
	cancel()
	// Every request b sends while the connection flaps is lost, so that
	// the cleanup cannot slip its delete into one of the instants the
	// connection is up: this test is about giving up, not about luck.
	bConn.Server().Control(bConn.SessionID()).SetFaultHook(func(zkmem.Request, zkmem.ConnFault) zkmem.ConnFault { return zkmem.DropRequest })
	down := bConn.SessionTimeout() * 9 / 10
	for range 4 {
		time.Sleep(down)
		if err := bConn.Server().Control(bConn.SessionID()).Reconnect(); err != nil {
			t.Fatalf("reconnect: %v", err)
		}
		bConn.Server().Control(bConn.SessionID()).Disconnect()
	}
	env.Settle()
	bt.Pending(t, bDone, "cancelled Lock with its connection down")
	if children := bt.Children(t, ctx, observer, dir); len(children) != 2 {
		t.Fatalf("children %v, want a's and b's", children)
	}
	bConn.Server().Control(bConn.SessionID()).SetFaultHook(nil)
	must(t, "b reconnects", bConn.Server().Control(bConn.SessionID()).Reconnect())
	if err := bt.Recv(t, ctx, bDone).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock: %v, want context.Canceled", err)
	}
	if children := bt.Children(t, ctx, observer, dir); len(children) != 1 {
		t.Fatalf("children %v, want only a's", children)
	}
	must(t, "a.Unlock", a.Unlock(ctx))
}

// testLostUnlockReply: the reply to Unlock's delete is lost; Unlock still
// succeeds and the next waiter gets the lock.
func testLostUnlockReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	aConn := env.MemConn(t)
	a, b := lock.New(aConn, dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	aConn.Server().Control(aConn.SessionID()).LoseNextReply(zkmem.OpDelete)
	must(t, "a.Unlock with a lost reply", a.Unlock(ctx))
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	must(t, "b.Unlock", b.Unlock(ctx))
}

// testLockChaos: clients lock and unlock in a loop while a share of their
// requests lose their replies or never arrive. Never two holders, every
// round completes (no deadlock), no node is left.
func testLockChaos(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	const clients, rounds = 3, 5
	var (
		holders atomic.Int32
		wg      sync.WaitGroup
	)
	for i := 0; i < clients; i++ {
		conn := env.MemConn(t)
		conn.Server().Control(conn.SessionID()).SetFaultHook(bt.Flaky(3 + i)) // every 3rd, 4th, 5th request is faulty
		m := lock.New(conn, dir)
		wg.Go(func() {
			for r := 0; r < rounds; r++ {
				if err := m.Lock(ctx); err != nil {
					t.Errorf("Lock: %v", err)
					return
				}
				if holders.Add(1) != 1 {
					t.Error("two holders at once")
				}
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

// testLeaseHolderExpires: a semaphore lease whose session expires is freed
// for the next acquirer, and its holder is told Lost.
func testLeaseHolderExpires(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("sem")
	aConn := env.MemConn(t)
	l, err := newSemaphore(t, aConn, dir, 1).Acquire(ctx)
	must(t, "a.Acquire", err)
	bSem := newSemaphore(t, env.Conn(t), dir, 1)
	got := bt.Go(func() (*lock.Lease, error) { return bSem.Acquire(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir+"/leases", 2)
	env.Settle()
	bt.Pending(t, got, "Acquire while the only lease is held")
	aConn.Server().Control(aConn.SessionID()).Expire()
	r := bt.Recv(t, ctx, got)
	must(t, "b.Acquire", r.Err)
	<-l.Done()
	if l.State() != recipes.Lost {
		t.Fatalf("expired lease state %v, want Lost", l.State())
	}
	must(t, "release", r.Val.Release(ctx))
}

// testSemaphoreChaos: clients take and give back leases in a loop while a
// share of their requests fail; never more than max leases at once, no
// node left.
func testSemaphoreChaos(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("sem")
	const clients, rounds, max = 4, 4, 2
	var (
		holders atomic.Int32
		wg      sync.WaitGroup
	)
	for i := 0; i < clients; i++ {
		conn := env.MemConn(t)
		var n atomic.Int32
		every := int32(4 + i)
		conn.Server().Control(conn.SessionID()).SetFaultHook(func(zkmem.Request, zkmem.ConnFault) zkmem.ConnFault {
			if n.Add(1)%every == 0 {
				return zkmem.LoseReply
			}
			return zkmem.NoFault
		})
		sem := newSemaphore(t, conn, dir, max)
		wg.Go(func() {
			for r := 0; r < rounds; r++ {
				l, err := sem.Acquire(ctx)
				if err != nil {
					t.Errorf("Acquire: %v", err)
					return
				}
				if holders.Add(1) > max {
					t.Error("more leases than the maximum")
				}
				holders.Add(-1)
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	observer := env.Conn(t)
	for _, sub := range []string{"/leases", "/locks"} {
		if children := bt.Children(t, ctx, observer, dir+sub); len(children) != 0 {
			t.Fatalf("left in %s: %v", sub, children)
		}
	}
}
