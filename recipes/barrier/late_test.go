package barrier_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes/barrier"
	"github.com/zksim/zksim/zkmem"
)

// A member that arrives at a double barrier while its group is open and
// leaving: what it saw of the ready node is stale by the time its member
// node exists. These tests hold its create (and the last leaver's multi)
// to put the other members' steps in between, on zkmem in a bubble.

// hold stops the first call that reaches it until released.
type hold struct {
	once    sync.Once
	reached chan struct{} // closed when a call reaches the hold
	release chan struct{} // closed by the test to let it go on
}

func newHold() *hold { return &hold{reached: make(chan struct{}), release: make(chan struct{})} }

func (h *hold) stop() {
	first := false
	h.once.Do(func() { first = true; close(h.reached) })
	if first {
		<-h.release
	}
}

// heldConn holds its first ephemeral create (a member node) on create, and
// its first multi (the last leaver's) on multi; either may be nil.
type heldConn struct {
	zksim.Conn
	create, multi *hold
}

func (c *heldConn) Create(ctx context.Context, p string, data []byte, mode zksim.CreateMode, acl []zksim.ACL) (string, error) {
	if c.create != nil && mode == zksim.ModeEphemeral {
		c.create.stop()
	}
	return c.Conn.Create(ctx, p, data, mode, acl)
}

func (c *heldConn) Multi(ctx context.Context, ops ...zksim.Op) ([]zksim.OpResult, error) {
	if c.multi != nil {
		c.multi.stop()
	}
	return c.Conn.Multi(ctx, ops...)
}

func goErr(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

func pending(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-ch:
		t.Fatalf("%s returned %v; want it still blocked", what, err)
	default:
	}
}

// lateSetup starts a zkmem server in the bubble and returns a function
// that opens a session wrapped in a heldConn.
func lateSetup(t *testing.T) func(create, multi *hold) *heldConn {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	return func(create, multi *hold) *heldConn {
		c, err := srv.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return &heldConn{Conn: c, create: create, multi: multi}
	}
}

// enterBoth has a and b enter together (a group of two).
func enterBoth(t *testing.T, a, b *barrier.DoubleBarrier) {
	t.Helper()
	ctx := t.Context()
	ea := goErr(func() error { return a.Enter(ctx) })
	must(t, "b.Enter", b.Enter(ctx))
	must(t, "a.Enter", <-ea)
}

// passNextRound: a new member on conn completes the next round of dir
// with c, whose Enter (ec) waits for it, and both leave.
func passNextRound(t *testing.T, conn zksim.Conn, dir string, c *barrier.DoubleBarrier, ec <-chan error) {
	t.Helper()
	ctx := t.Context()
	d := newDouble(t, conn, dir, 2)
	must(t, "d.Enter", d.Enter(ctx))
	must(t, "c.Enter", <-ec)
	lc := goErr(func() error { return c.Leave(ctx) })
	must(t, "d.Leave", d.Leave(ctx))
	must(t, "c.Leave", <-lc)
}

// TestDoubleLateAfterRound: the late member saw the ready node, then the
// whole group left before its node was created. It must not pass alone: it
// waits for the next round.
func TestDoubleLateAfterRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		a, b := newDouble(t, connect(nil, nil), dir, 2), newDouble(t, connect(nil, nil), dir, 2)
		enterBoth(t, a, b)

		h := newHold()
		c := newDouble(t, connect(h, nil), dir, 2)
		ec := goErr(func() error { return c.Enter(ctx) })
		<-h.reached // c saw the ready node; its member node is not there yet
		la := goErr(func() error { return a.Leave(ctx) })
		must(t, "b.Leave", b.Leave(ctx))
		must(t, "a.Leave", <-la)
		close(h.release)
		pending(t, ec, "Enter of a member that arrived after its round left")

		passNextRound(t, connect(nil, nil), dir, c, ec)
	})
}

// TestDoubleLateWhileLeaving: the late member's node is created after the
// last leaver listed the members and before it deletes the ready node. The
// late member passes (it joined an open group), so the others' Leave must
// wait for it.
func TestDoubleLateWhileLeaving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		last := newHold() // the multi of whichever of a and b leaves last
		a, b := newDouble(t, connect(nil, last), dir, 2), newDouble(t, connect(nil, last), dir, 2)
		enterBoth(t, a, b)

		h := newHold()
		c := newDouble(t, connect(h, nil), dir, 2)
		ec := goErr(func() error { return c.Enter(ctx) })
		<-h.reached
		la := goErr(func() error { return a.Leave(ctx) })
		lb := goErr(func() error { return b.Leave(ctx) })
		<-last.reached // the last leaver listed only itself
		close(h.release)
		must(t, "c.Enter", <-ec)
		close(last.release)
		pending(t, la, "a.Leave while c is in")
		pending(t, lb, "b.Leave while c is in")

		must(t, "c.Leave", c.Leave(ctx))
		must(t, "a.Leave", <-la)
		must(t, "b.Leave", <-lb)
	})
}

// TestDoubleNextRoundWhileLeaving: a member of the next round arrives
// (the ready node is gone) while a member of the last round, disconnected,
// has not seen the round end. Once back, that member must leave, not wait
// for the newcomer, which waits for its own round.
func TestDoubleNextRoundWhileLeaving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		conns, left, last := lastLeaverHeld(t, connect, dir)
		// The other one deleted its node and waits for the last one's.
		children, _, err := conns[0].Children(ctx, dir)
		must(t, "children", err)
		if len(children) != 2 { // the last leaver's node and ready
			t.Fatalf("children %v", children)
		}
		lastOne := 0
		for _, ch := range children {
			if ch == "ready" {
				continue
			}
			_, st, err := conns[0].Exists(ctx, dir+"/"+ch)
			must(t, "exists", err)
			if st.EphemeralOwner != conns[0].SessionID() {
				lastOne = 1
			}
		}
		other := 1 - lastOne
		mem := conns[other].Conn.(*zkmem.Conn)
		mem.Server().Control(mem.SessionID()).Disconnect()
		close(last.release)
		must(t, "Leave of the last member", <-left[lastOne])

		c := newDouble(t, connect(nil, nil), dir, 2)
		ec := goErr(func() error { return c.Enter(ctx) })
		pending(t, ec, "Enter of the next round's first member")
		must(t, "reconnect", mem.Server().Control(mem.SessionID()).Reconnect())
		must(t, "Leave of the member that was away", <-left[other])
		pending(t, ec, "Enter of the next round's first member")

		d := newDouble(t, connect(nil, nil), dir, 2)
		must(t, "d.Enter", d.Enter(ctx))
		must(t, "c.Enter", <-ec)
	})
}

// TestDoubleLastNodeDeleted: a third party deletes the last leaver's node
// after it listed only itself and before its multi deletes that node with
// the ready node, while the other member is away. The multi fails on our
// node; the last leaver's Leave must still delete the ready node before it
// returns nil (Leave returns nil only once its round's ready node is
// deleted), else the next round's members would find it there and pass.
// With lost, the multi is lost on its way (not applied): finding our node
// gone afterwards does not tell that the multi took effect.
func TestDoubleLastNodeDeleted(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("lost=%v", lost), func(t *testing.T) { testDoubleLastNodeDeleted(t, lost) })
	}
}

func testDoubleLastNodeDeleted(t *testing.T, lost bool) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		conns, left, last := lastLeaverHeld(t, connect, dir)
		op := connect(nil, nil)
		children, _, err := op.Children(ctx, dir)
		must(t, "children", err)
		lastOne, node := 0, ""
		for _, ch := range children {
			if ch == "ready" {
				continue
			}
			_, st, err := op.Exists(ctx, dir+"/"+ch)
			must(t, "exists", err)
			node = ch
			if st.EphemeralOwner != conns[0].SessionID() {
				lastOne = 1
			}
		}
		other := conns[1-lastOne].Conn.(*zkmem.Conn)
		other.Server().Control(other.SessionID()).Disconnect()
		must(t, "third-party delete", op.Delete(ctx, dir+"/"+node, -1))
		if lost {
			mem := conns[lastOne].Conn.(*zkmem.Conn)
			var once sync.Once
			mem.Server().Control(mem.SessionID()).SetFaultHook(func(r zkmem.Request, f zkmem.ConnFault) zkmem.ConnFault {
				drop := false
				if r.Op == zkmem.OpMulti {
					once.Do(func() { drop = true })
				}
				if drop {
					return zkmem.DropRequest
				}
				return f
			})
		}
		close(last.release)
		must(t, "Leave of the last member", <-left[lastOne])
		ok, _, err := op.Exists(ctx, dir+"/ready")
		must(t, "exists", err)
		if ok {
			t.Fatal("the last member's Leave returned nil, but the ready node of its round is still there")
		}
		must(t, "reconnect", other.Server().Control(other.SessionID()).Reconnect())
		must(t, "Leave of the member that was away", <-left[1-lastOne])
	})
}

// lastLeaverHeld has two members of a double barrier of size 2 in dir
// enter and leave, and returns once the last leaver has listed only itself
// and is held before its multi, with everything else still: the members'
// Conns, the channels their Leaves end on, and the hold to release.
func lastLeaverHeld(t *testing.T, connect func(create, multi *hold) *heldConn, dir string) ([]*heldConn, []<-chan error, *hold) {
	t.Helper()
	ctx := t.Context()
	last := newHold()
	conns := []*heldConn{connect(nil, last), connect(nil, last)}
	a, b := newDouble(t, conns[0], dir, 2), newDouble(t, conns[1], dir, 2)
	enterBoth(t, a, b)
	left := []<-chan error{goErr(func() error { return a.Leave(ctx) }), goErr(func() error { return b.Leave(ctx) })}
	<-last.reached // the last leaver listed only itself
	synctest.Wait()
	return conns, left, last
}

// listedConn is a heldConn whose first listing, once done, waits for its
// hold to be released before it returns.
type listedConn struct {
	*heldConn
	list *hold
}

func (c *listedConn) Children(ctx context.Context, p string) ([]string, *zksim.Stat, error) {
	children, st, err := c.heldConn.Children(ctx, p)
	c.list.stop()
	return children, st, err
}

// TestDoubleLateListsLeavingRound: the late member looked before the group
// opened (no ready node), and its listing shows the ready node and the
// last leaver's member node. The last leaver then deletes both. The late
// member must not count that node to open a round of its own and pass
// alone: it waits for the next round. (Random exploration of the
// double-barrier machine found it passing alone.)
func TestDoubleLateListsLeavingRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		created, listed := newHold(), newHold()
		c := newDouble(t, &listedConn{heldConn: connect(created, nil), list: listed}, dir, 2)
		ec := goErr(func() error { return c.Enter(ctx) })
		<-created.reached // c saw no ready node; its member node is not there yet

		last := newHold() // the multi of whichever of a and b leaves last
		a, b := newDouble(t, connect(nil, last), dir, 2), newDouble(t, connect(nil, last), dir, 2)
		enterBoth(t, a, b)
		la := goErr(func() error { return a.Leave(ctx) })
		lb := goErr(func() error { return b.Leave(ctx) })
		<-last.reached // the last leaver listed only itself
		close(created.release)
		<-listed.reached // c listed its own node, the last leaver's and ready
		close(last.release)
		must(t, "a.Leave", <-la)
		must(t, "b.Leave", <-lb)
		close(listed.release)
		pending(t, ec, "Enter of a member that listed a leaving round")

		passNextRound(t, connect(nil, nil), dir, c, ec)
	})
}

// setHeldConn is a heldConn whose first write (a late member's join)
// waits at set.
type setHeldConn struct {
	*heldConn
	set *hold
}

func (c *setHeldConn) Set(ctx context.Context, p string, data []byte, version int32) (*zksim.Stat, error) {
	c.set.stop()
	return c.heldConn.Set(ctx, p, data, version)
}

// TestDoubleLateJoinsNextRound: the late member saw its round's ready
// node (written by another late member), then that round ended and the
// next one opened with the late member's node among its members, before
// the late member wrote to the ready node. It is a member of the next
// round from the start, so it passes without writing to that round's
// ready node (random exploration of the double-barrier machine found it
// writing there).
func TestDoubleLateJoinsNextRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		a, b := newDouble(t, connect(nil, nil), dir, 2), newDouble(t, connect(nil, nil), dir, 2)
		enterBoth(t, a, b)
		e := newDouble(t, connect(nil, nil), dir, 2)
		must(t, "e.Enter (late)", e.Enter(ctx)) // writes the ready node: version 1

		created, set := newHold(), newHold()
		c := newDouble(t, &setHeldConn{heldConn: connect(created, nil), set: set}, dir, 2)
		ec := goErr(func() error { return c.Enter(ctx) })
		<-created.reached // c saw the ready node at version 1
		la := goErr(func() error { return a.Leave(ctx) })
		lb := goErr(func() error { return b.Leave(ctx) })
		must(t, "e.Leave", e.Leave(ctx))
		must(t, "a.Leave", <-la)
		must(t, "b.Leave", <-lb)
		close(created.release)
		<-set.reached // c's node exists; it is about to join the round it saw

		dc := connect(nil, nil)
		d := newDouble(t, dc, dir, 2)
		must(t, "d.Enter", d.Enter(ctx)) // opens the next round: c and d
		close(set.release)
		must(t, "c.Enter", <-ec)
		_, st, err := dc.Exists(ctx, dir+"/ready")
		must(t, "exists ready", err)
		if st.Version != 0 {
			t.Errorf("the next round's ready node was written (version %d): c wrote to a round it belonged to from the start", st.Version)
		}
		lc := goErr(func() error { return c.Leave(ctx) })
		must(t, "d.Leave", d.Leave(ctx))
		must(t, "c.Leave", <-lc)
	})
}

// listHeldConn is a heldConn whose first listing once list is set waits
// for that hold to be released before it is sent.
type listHeldConn struct {
	*heldConn
	list atomic.Pointer[hold]
}

func (c *listHeldConn) Children(ctx context.Context, p string) ([]string, *zksim.Stat, error) {
	if h := c.list.Load(); h != nil {
		h.stop()
	}
	return c.heldConn.Children(ctx, p)
}

// TestDoubleLeaveListsNextRound: a leaving member saw its round's ready
// node, and lists the members only after that round ended and the next
// one began (here a third party deleted its node, so the round could end
// without it; the lowest member's session expiring while two others wait
// for it gets there too). The node listed is the next round's, whose
// member waits in Enter for its group: the leaving member must see that
// its round is over and return, not wait for that node. (Random
// exploration of the double-barrier machine found it waiting for ever.)
func TestDoubleLeaveListsNextRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		connect := lateSetup(t)
		const dir = "/late"
		bc := &listHeldConn{heldConn: connect(nil, nil)}
		a, b := newDouble(t, connect(nil, nil), dir, 2), newDouble(t, bc, dir, 2)
		enterBoth(t, a, b)
		listed := newHold()
		bc.list.Store(listed)
		lb := goErr(func() error { return b.Leave(ctx) })
		<-listed.reached // b saw the ready node; its listing is not sent yet

		op := connect(nil, nil)
		children, _, err := op.Children(ctx, dir)
		must(t, "children", err)
		for _, ch := range children {
			_, st, err := op.Exists(ctx, dir+"/"+ch)
			must(t, "exists", err)
			if st.EphemeralOwner == bc.SessionID() {
				must(t, "third-party delete of b's node", op.Delete(ctx, dir+"/"+ch, -1))
			}
		}
		must(t, "a.Leave", a.Leave(ctx)) // alone in its round: deletes ready
		c := newDouble(t, connect(nil, nil), dir, 2)
		ec := goErr(func() error { return c.Enter(ctx) })
		pending(t, ec, "Enter of the next round's first member")

		close(listed.release) // b lists c's node only
		synctest.Wait()
		select {
		case err := <-lb:
			must(t, "b.Leave", err)
		default:
			t.Fatal("b's Leave waits for the next round's member: its own round is over")
		}
		passNextRound(t, connect(nil, nil), dir, c, ec)
	})
}
