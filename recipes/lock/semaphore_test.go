package lock_test

import (
	"context"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	bt "github.com/zksim/zksim/zktest"
)

// testSemaphoreLeasesDeleted: while an acquirer waits for a lease, a third
// party (an operator, a cleanup job) deletes every lease node and then the
// leases directory itself. The waiter's node is gone with it, so it must
// start over (create the directory and a new lease node) and take the
// now free lease: Acquire's documented errors are ctx.Err(), an expired
// session and a closed Conn, never the ErrNoNode of listing a directory
// that is gone.
func testSemaphoreLeasesDeleted(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("sem")
	observer := env.Conn(t)
	s0 := newSemaphore(t, env.Conn(t), dir, 1)
	s1 := newSemaphore(t, env.Conn(t), dir, 1)
	l0, err := s0.Acquire(ctx)
	must(t, "lease 0", err)
	got := bt.Go(func() (*lock.Lease, error) { return s1.Acquire(ctx) })
	leases := dir + "/leases"
	names := bt.WaitChildren(t, ctx, observer, leases, 2)
	env.Settle()
	bt.Pending(t, got, "Acquire when full")
	ops := make([]zksim.Op, 0, len(names)+1)
	for _, n := range names {
		ops = append(ops, &zksim.DeleteOp{Path: leases + "/" + n, Version: -1})
	}
	ops = append(ops, &zksim.DeleteOp{Path: leases, Version: -1})
	_, err = observer.Multi(ctx, ops...)
	must(t, "third-party delete", err)
	r := bt.Recv(t, ctx, got)
	must(t, "Acquire after the leases directory was deleted", r.Err)
	l1 := r.Val
	if ok, st, err := observer.Exists(ctx, l1.Key()); err != nil || !ok || st.Czxid != l1.Token() {
		t.Fatalf("lease node %s: exists %v stat %v err %v", l1.Key(), ok, st, err)
	}
	if l1.State() != recipes.Held {
		t.Fatalf("new lease state %v, want Held", l1.State())
	}
	must(t, "release 1", l1.Release(ctx))
	must(t, "release 0", l0.Release(ctx)) // its node is gone: released all the same
}

// testSemaphoreInternalLockDeleted: while an acquirer waits for a lease
// holding the internal lock, a third party deletes its internal lock node.
// The next acquirer takes the internal lock and waits for a lease too: two
// lease nodes wait beside each other. With one lease, once the holder
// releases, both must still get it in turn (the one that lost the
// internal lock gives its place back and queues again, as Curator's
// InterProcessSemaphoreV2 does when its lease node vanishes), not wait
// for each other for ever.
func testSemaphoreInternalLockDeleted(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("sem")
	observer := env.Conn(t)
	s0 := newSemaphore(t, env.Conn(t), dir, 1)
	s1 := newSemaphore(t, env.Conn(t), dir, 1)
	s2 := newSemaphore(t, env.Conn(t), dir, 1)
	l0, err := s0.Acquire(ctx)
	must(t, "lease 0", err)
	got1 := bt.Go(func() (*lock.Lease, error) { return s1.Acquire(ctx) })
	bt.WaitChildren(t, ctx, observer, dir+"/leases", 2)
	locks := bt.WaitChildren(t, ctx, observer, dir+"/locks", 1)
	must(t, "third-party delete", observer.Delete(ctx, dir+"/locks/"+locks[0], -1))
	got2 := bt.Go(func() (*lock.Lease, error) { return s2.Acquire(ctx) })
	env.Settle() // on zkmem: s2 holds the internal lock and waits with its lease
	must(t, "release 0", l0.Release(ctx))
	for range 2 {
		var r bt.Result[*lock.Lease]
		select {
		case r = <-got1:
			got1 = nil
		case r = <-got2:
			got2 = nil
		case <-ctx.Done():
			t.Fatalf("no lease granted once the holder released: %v (leases %q)", ctx.Err(), bt.Children(t, context.Background(), observer, dir+"/leases"))
		}
		must(t, "Acquire", r.Err)
		must(t, "release", r.Val.Release(ctx))
	}
}
