package barrier_test

import (
	"errors"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
	bt "github.com/zksim/zksim/recipes/internal/backendtest"
	"github.com/zksim/zksim/zkmem"
)

// faultCases put the barriers under zkmem's faults.
var faultCases = bt.Cases{
	"FaultMemberDiesBeforeStart":   testMemberDiesBeforeStart,
	"FaultLostMemberCreateReply":   testLostMemberCreateReply,
	"FaultMemberReconnects":        testMemberReconnects,
	"FaultMemberDiesWhileLeaving":  testMemberDiesWhileLeaving,
	"FaultBarrierWaiterReconnects": testBarrierWaiterReconnects,
}

// testMemberDiesBeforeStart: a member whose session expires before the
// group is complete no longer counts.
func testMemberDiesBeforeStart(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("start")
	aConn := env.MemConn(t)
	a := bt.GoErr(func() error { return barrier.NewStart(aConn, dir, 2).Wait(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 1)
	aConn.Server().Control(aConn.SessionID()).Expire()
	if err := bt.Recv(t, ctx, a).Err; !errors.Is(err, zksim.ErrSessionExpired) {
		t.Fatalf("Wait of the expired member: %v", err)
	}
	b := bt.GoErr(func() error { return barrier.NewStart(env.Conn(t), dir, 2).Wait(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 1)
	env.Settle()
	bt.Pending(t, b, "Wait with the only other member dead")
	must(t, "c", barrier.NewStart(env.Conn(t), dir, 2).Wait(ctx))
	must(t, "b", bt.Recv(t, ctx, b).Err)
}

// testLostMemberCreateReply: a member's create reply is lost; it finds its
// node by name and owner and counts once.
func testLostMemberCreateReply(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("double")
	observer := env.Conn(t)
	must(t, "mkdir", barrier.New(observer, dir).Set(ctx))
	aConn := env.MemConn(t)
	aConn.Server().Control(aConn.SessionID()).LoseNextReply(zkmem.OpCreate)
	a := bt.GoErr(func() error { return barrier.NewDouble(aConn, dir, 3).Enter(ctx) })
	b := bt.GoErr(func() error { return barrier.NewDouble(env.Conn(t), dir, 3).Enter(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 2)
	env.Settle()
	bt.Pending(t, a, "Enter with 2 of 3 (one create reply lost)")
	bt.Pending(t, b, "Enter with 2 of 3 (one create reply lost)")
	must(t, "c", barrier.NewDouble(env.Conn(t), dir, 3).Enter(ctx))
	must(t, "a", bt.Recv(t, ctx, a).Err)
	must(t, "b", bt.Recv(t, ctx, b).Err)
}

// testMemberReconnects: the group completes while a member is
// disconnected; its watch fires when it reconnects.
func testMemberReconnects(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("double")
	aConn := env.MemConn(t)
	a := bt.GoErr(func() error { return barrier.NewDouble(aConn, dir, 2).Enter(ctx) })
	bt.WaitChildren(t, ctx, env.Conn(t), dir, 1)
	env.Settle()
	aConn.Server().Control(aConn.SessionID()).Disconnect()
	must(t, "b", barrier.NewDouble(env.Conn(t), dir, 2).Enter(ctx))
	env.Settle()
	bt.Pending(t, a, "Enter while disconnected")
	must(t, "reconnect", aConn.Server().Control(aConn.SessionID()).Reconnect())
	must(t, "a", bt.Recv(t, ctx, a).Err)
}

// testMemberDiesWhileLeaving: a member dies instead of leaving; the others
// still get out.
func testMemberDiesWhileLeaving(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("double")
	conns := []*zkmem.Conn{env.MemConn(t), env.MemConn(t), env.MemConn(t)}
	var ms []*barrier.DoubleBarrier
	var entered []result
	for _, c := range conns {
		m := barrier.NewDouble(c, dir, 3)
		ms = append(ms, m)
		entered = append(entered, bt.GoErr(func() error { return m.Enter(ctx) }))
	}
	for i := range entered {
		must(t, "Enter", bt.Recv(t, ctx, entered[i]).Err)
	}
	left := []result{
		bt.GoErr(func() error { return ms[0].Leave(ctx) }),
		bt.GoErr(func() error { return ms[1].Leave(ctx) }),
	}
	env.Settle()
	bt.Pending(t, left[0], "Leave while a member is in")
	conns[2].Server().Control(conns[2].SessionID()).Expire()
	must(t, "Leave", bt.Recv(t, ctx, left[0]).Err)
	must(t, "Leave", bt.Recv(t, ctx, left[1]).Err)
	if children := bt.Children(t, ctx, env.Conn(t), dir); len(children) != 0 {
		t.Fatalf("left behind: %v", children)
	}
}

// testBarrierWaiterReconnects: the barrier is removed while a waiter is
// disconnected; it goes on when it reconnects.
func testBarrierWaiterReconnects(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	p := env.Path("barrier")
	b := barrier.New(env.Conn(t), p)
	must(t, "Set", b.Set(ctx))
	wConn := env.MemConn(t)
	w := bt.GoErr(func() error { return barrier.New(wConn, p).Wait(ctx) })
	env.Settle()
	wConn.Server().Control(wConn.SessionID()).Disconnect()
	must(t, "Remove", b.Remove(ctx))
	env.Settle()
	bt.Pending(t, w, "Wait while disconnected")
	must(t, "reconnect", wConn.Server().Control(wConn.SessionID()).Reconnect())
	must(t, "Wait", bt.Recv(t, ctx, w).Err)
}
