package lock_test

import (
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
