package barrier_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zksim/zksim/recipes/barrier"
	bt "github.com/zksim/zksim/zktest"
)

var cases = bt.Cases{
	"Barrier":            testBarrier,
	"DoubleBarrier":      testDoubleBarrier,
	"DoubleBarrierReuse": testDoubleBarrierReuse,
	"StartBarrier":       testStartBarrier,
	"EnterCancelled":     testEnterCancelled,
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

type result = <-chan bt.Result[struct{}]

func testBarrier(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	p := env.Path("app/barrier")
	b := barrier.New(env.Conn(t), p)
	must(t, "Wait on a barrier not set", b.Wait(ctx))
	must(t, "Set", b.Set(ctx))
	must(t, "Set again", b.Set(ctx))
	w1 := bt.GoErr(func() error { return barrier.New(env.Conn(t), p).Wait(ctx) })
	w2 := bt.GoErr(func() error { return barrier.New(env.Conn(t), p).Wait(ctx) })
	env.Settle()
	bt.Pending(t, w1, "Wait while set")
	bt.Pending(t, w2, "Wait while set")
	must(t, "Remove", b.Remove(ctx))
	must(t, "waiter 1", bt.Recv(t, ctx, w1).Err)
	must(t, "waiter 2", bt.Recv(t, ctx, w2).Err)
	must(t, "Remove again", b.Remove(ctx))
	cctx, cancel := context.WithCancel(ctx)
	must(t, "Set", b.Set(ctx))
	w3 := bt.GoErr(func() error { return b.Wait(cctx) })
	cancel()
	if err := bt.Recv(t, ctx, w3).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Wait: %v", err)
	}
}

// enterAll starts Enter for each member and returns the results.
func enter(members []*barrier.DoubleBarrier, ctx context.Context) []result {
	rs := make([]result, len(members))
	for i, m := range members {
		rs[i] = bt.GoErr(func() error { return m.Enter(ctx) })
	}
	return rs
}

func testDoubleBarrier(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("double")
	observer := env.Conn(t)
	ms := []*barrier.DoubleBarrier{
		newDouble(t, env.Conn(t), dir, 3), newDouble(t, env.Conn(t), dir, 3), newDouble(t, env.Conn(t), dir, 3),
	}
	entered := enter(ms[:2], ctx)
	bt.WaitChildren(t, ctx, observer, dir, 2)
	env.Settle()
	bt.Pending(t, entered[0], "Enter with 2 of 3 members")
	bt.Pending(t, entered[1], "Enter with 2 of 3 members")
	must(t, "third Enter", ms[2].Enter(ctx))
	must(t, "first Enter", bt.Recv(t, ctx, entered[0]).Err)
	must(t, "second Enter", bt.Recv(t, ctx, entered[1]).Err)

	left := []result{
		bt.GoErr(func() error { return ms[0].Leave(ctx) }),
		bt.GoErr(func() error { return ms[1].Leave(ctx) }),
	}
	env.Settle()
	bt.Pending(t, left[0], "Leave while a member is still in")
	bt.Pending(t, left[1], "Leave while a member is still in")
	must(t, "third Leave", ms[2].Leave(ctx))
	must(t, "first Leave", bt.Recv(t, ctx, left[0]).Err)
	must(t, "second Leave", bt.Recv(t, ctx, left[1]).Err)
	if children := bt.Children(t, ctx, observer, dir); len(children) != 0 {
		t.Fatalf("left behind: %v", children)
	}
}

func testDoubleBarrierReuse(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("double")
	for round := 0; round < 2; round++ {
		ms := []*barrier.DoubleBarrier{newDouble(t, env.Conn(t), dir, 2), newDouble(t, env.Conn(t), dir, 2)}
		first := bt.GoErr(func() error { return ms[0].Enter(ctx) })
		bt.WaitChildren(t, ctx, env.Conn(t), dir, 1)
		env.Settle()
		bt.Pending(t, first, "Enter alone")
		must(t, "Enter", ms[1].Enter(ctx))
		must(t, "Enter", bt.Recv(t, ctx, first).Err)
		left := bt.GoErr(func() error { return ms[0].Leave(ctx) })
		must(t, "Leave", ms[1].Leave(ctx))
		must(t, "Leave", bt.Recv(t, ctx, left).Err)
	}
}

func testStartBarrier(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("start")
	observer := env.Conn(t)
	var waits []result
	for i := 0; i < 2; i++ {
		b := newStart(t, env.Conn(t), dir, 3)
		waits = append(waits, bt.GoErr(func() error { return b.Wait(ctx) }))
	}
	bt.WaitChildren(t, ctx, observer, dir, 2)
	env.Settle()
	bt.Pending(t, waits[0], "Wait with 2 of 3")
	bt.Pending(t, waits[1], "Wait with 2 of 3")
	must(t, "third Wait", newStart(t, env.Conn(t), dir, 3).Wait(ctx))
	must(t, "first Wait", bt.Recv(t, ctx, waits[0]).Err)
	must(t, "second Wait", bt.Recv(t, ctx, waits[1]).Err)
	must(t, "late arrival", newStart(t, env.Conn(t), dir, 3).Wait(ctx))
}

// testEnterCancelled: a member that gives up waiting leaves no node, so it
// does not count towards the group.
func testEnterCancelled(t *testing.T, env *bt.Env) {
	ctx := env.Ctx(t)
	dir := env.Path("double")
	observer := env.Conn(t)
	cctx, cancel := context.WithCancel(ctx)
	goneM := newDouble(t, env.Conn(t), dir, 2)
	gone := bt.GoErr(func() error { return goneM.Enter(cctx) })
	bt.WaitChildren(t, ctx, observer, dir, 1)
	cancel()
	if err := bt.Recv(t, ctx, gone).Err; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Enter: %v", err)
	}
	bt.WaitChildren(t, ctx, observer, dir, 0)
	aM := newDouble(t, env.Conn(t), dir, 2)
	a := bt.GoErr(func() error { return aM.Enter(ctx) })
	bt.WaitChildren(t, ctx, observer, dir, 1)
	env.Settle()
	bt.Pending(t, a, "Enter alone after the other member gave up")
	must(t, "Enter", newDouble(t, env.Conn(t), dir, 2).Enter(ctx))
	must(t, "Enter", bt.Recv(t, ctx, a).Err)
}
