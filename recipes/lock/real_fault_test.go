package lock_test

import (
	"testing"
	"time"

	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/recipes/lock"
	"github.com/zksim/zksim/zkserver"
	bt "github.com/zksim/zksim/zktest"
)

// realFaultCases need a real server and its connection-cutting proxy.
var realFaultCases = bt.Cases{
	"RealHolderCutOff": testRealHolderCutOff,
}

// testRealHolderCutOff cuts the holder off a real ZooKeeper: the holder
// is told Doubtful, the waiter gets the lock once the server has expired
// the holder's session, the holder no longer believes it holds by then,
// and it ends Lost.
func testRealHolderCutOff(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("lock")
	proxy := zkserver.NewProxy(t, env.Real.Addr())
	aConn := proxy.Connect(t, gozk.WithSessionTimeout(time.Second))
	a, b := lock.New(aConn, dir), lock.New(env.Conn(t), dir)
	must(t, "a.Lock", a.Lock(ctx))
	bDone := bt.GoErr(func() error { return b.Lock(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 2)
	_, changed := a.Watch()
	proxy.Cut()
	defer proxy.Restore()
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("a not told of the cut")
	}
	if st := a.State(); st != recipes.Doubtful && st != recipes.Lost {
		t.Fatalf("a state after the cut %v, want Doubtful", st)
	}
	must(t, "b.Lock", bt.Recv(t, ctx, bDone).Err)
	if st := a.State(); st == recipes.Held {
		t.Fatal("b holds while a believes it holds")
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("a's hold never ended")
	}
	if st := a.State(); st != recipes.Lost {
		t.Fatalf("a state %v, want Lost", st)
	}
	must(t, "b.Unlock", b.Unlock(ctx))
}
