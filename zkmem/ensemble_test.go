package zkmem_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// newEnsemble returns an n-member ensemble closed at the end of the test.
func newEnsemble(t *testing.T, n int, opts zkmem.EnsembleOptions) *zkmem.Ensemble {
	t.Helper()
	e := zkmem.NewEnsemble(n, opts)
	t.Cleanup(e.Close)
	return e
}

// connectTo opens a Conn through e trying the members in order.
func connectTo(t *testing.T, e *zkmem.Ensemble, order []int, opts ...zkmem.ConnOption) *zkmem.Conn {
	t.Helper()
	c, err := e.Connect(append([]zkmem.ConnOption{zkmem.WithMembers(order...)}, opts...)...)
	require.NoError(t, err)
	return c
}

// memberOf returns the member c's session is connected to, -1 if none.
func memberOf(e *zkmem.Ensemble, c *zkmem.Conn) int {
	for i := range e.Size() {
		for _, id := range e.Sessions(i) {
			if id == c.SessionID() {
				return i
			}
		}
	}
	return -1
}

// async runs f in a goroutine and returns a channel that yields its error.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// blocked reports whether ch has nothing yet once every goroutine of the
// bubble is blocked.
func blocked(ch <-chan error) bool {
	synctest.Wait()
	select {
	case err := <-ch:
		panic(fmt.Sprintf("not blocked: returned %v", err))
	default:
		return true
	}
}

func TestEnsembleReadYourWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		require.Equal(t, 2, e.Leader())
		a := connectTo(t, e, []int{0, 1, 2})
		require.Equal(t, 0, memberOf(e, a))
		e.Lag(0)

		// The leader commits the write at once; its reply waits for
		// member 0 to apply it.
		done := async(func() error { _, err := a.Create(ctx, "/x", []byte("1"), 0, zksim.OpenACL()); return err })
		require.True(t, blocked(done))
		require.Equal(t, e.LastZxid(), e.Applied(2))
		require.Equal(t, 1, e.Pending(0))
		require.True(t, e.ApplyNext(0))
		require.NoError(t, <-done)
		require.False(t, e.ApplyNext(0))

		data, st, err := a.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("1"), data)
		require.Equal(t, e.Applied(0), st.Czxid)
	})
}

func TestEnsembleStaleReadThenSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		w := connectTo(t, e, []int{0})
		r := connectTo(t, e, []int{1})
		e.Lag(1)
		for i := range 3 {
			_, err := w.Create(ctx, fmt.Sprintf("/n%d", i), nil, 0, zksim.OpenACL())
			require.NoError(t, err)
		}
		// Member 1 lags: r reads the state before the creates.
		ok, _, err := r.Exists(ctx, "/n2")
		require.NoError(t, err)
		require.False(t, ok)
		names, _, err := r.Children(ctx, "/")
		require.NoError(t, err)
		require.Equal(t, []string{"zookeeper"}, names)

		// A sync returns once member 1 applied all the leader had
		// committed when it arrived, and not before.
		done := async(func() error { _, err := r.Sync(ctx, "/"); return err })
		require.True(t, blocked(done))
		require.True(t, e.ApplyNext(1))
		require.True(t, e.ApplyNext(1))
		require.True(t, blocked(done))
		require.True(t, e.ApplyNext(1))
		require.NoError(t, <-done)
		ok, _, err = r.Exists(ctx, "/n2")
		require.NoError(t, err)
		require.True(t, ok)
	})
}

func TestEnsembleWatchFiresWhenTheMemberApplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		w := connectTo(t, e, []int{0})
		_, err := w.Create(ctx, "/x", []byte("old"), 0, zksim.OpenACL())
		require.NoError(t, err)
		r := connectTo(t, e, []int{1})
		_, _, ch, err := r.GetW(ctx, "/x")
		require.NoError(t, err)
		e.Lag(1)
		_, err = w.Set(ctx, "/x", []byte("new"), -1)
		require.NoError(t, err)

		// Committed, not applied by member 1: no event, old data.
		select {
		case ev := <-ch:
			t.Fatalf("event before member 1 applied the change: %v", ev)
		default:
		}
		data, _, err := r.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("old"), data)

		// Applying it fires the watch before any read can show the data.
		require.True(t, e.ApplyNext(1))
		select {
		case ev := <-ch:
			require.Equal(t, zksim.EventNodeDataChanged, ev.Type)
		default:
			t.Fatal("member 1 applied the change but the watch did not fire")
		}
		data, _, err = r.Get(ctx, "/x")
		require.NoError(t, err)
		require.Equal(t, []byte("new"), data)
	})
}

func TestEnsembleMemberBehindTheClientRefusesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		c := connectTo(t, e, []int{0, 1, 2})
		e.Lag(1)
		_, err := c.Create(ctx, "/x", nil, 0, zksim.OpenACL())
		require.NoError(t, err)

		// Member 0 goes: the next one, 1, has not applied the client's
		// last zxid and refuses it; the client lands on 2.
		e.Crash(0)
		require.Equal(t, zksim.StateConnected, c.State())
		require.Equal(t, 2, memberOf(e, c))
		ok, _, err := c.Exists(ctx, "/x")
		require.NoError(t, err)
		require.True(t, ok, "the client saw an older state than it had seen")
		e.CatchUp(1)
	})
}

func TestEnsembleSessionSurvivesAMemberCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		a := connectTo(t, e, []int{0, 1})
		b := connectTo(t, e, []int{2})
		for _, p := range []string{"/w", "/missed"} {
			_, err := b.Create(ctx, p, nil, 0, zksim.OpenACL())
			require.NoError(t, err)
		}
		_, err := a.Create(ctx, "/eph", nil, zksim.ModeEphemeral, zksim.OpenACL())
		require.NoError(t, err)
		_, _, wch, err := a.GetW(ctx, "/w")
		require.NoError(t, err)
		_, _, mch, err := a.GetW(ctx, "/missed")
		require.NoError(t, err)
		events := a.SessionEvents(ctx)

		// A change a's member never applies: a sees it through the
		// setWatches rule (its last zxid is older than the change).
		e.Lag(0)
		_, err = b.Set(ctx, "/missed", []byte("v"), -1)
		require.NoError(t, err)
		e.Crash(0)
		require.Equal(t, zksim.StateDisconnected, (<-events).State)
		require.Equal(t, zksim.StateConnected, (<-events).State)
		require.Equal(t, 1, memberOf(e, a))
		require.Equal(t, zksim.EventNodeDataChanged, (<-mch).Type)

		// Its ephemeral lives on; its watch is set on member 1.
		ok, st, err := b.Exists(ctx, "/eph")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, a.SessionID(), st.EphemeralOwner)
		_, err = b.Set(ctx, "/w", []byte("v"), -1)
		require.NoError(t, err)
		require.Equal(t, zksim.EventNodeDataChanged, (<-wch).Type)

		e.Restart(0)
		require.Equal(t, e.LastZxid(), e.Applied(0))
		require.Equal(t, zkmem.RoleFollower, e.Role(0))
	})
}

// The members list children in the order a single server does after the
// same history of creates and deletes: a member that falls behind copies
// the tree (member 2, after the creates) or starts from an empty one
// (member 1) and replays the leader's inserts and removes, multis
// included.
func TestEnsembleMembersListChildrenInTheServersOrder(t *testing.T) {
	ctx := context.Background()
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	single, err := srv.Connect()
	require.NoError(t, err)
	conns := []*zkmem.Conn{connectTo(t, e, []int{0}), connectTo(t, e, []int{1}), connectTo(t, e, []int{2})}
	e.Lag(1)
	for _, c := range []*zkmem.Conn{single, conns[0]} {
		_, err := c.Create(ctx, "/p", nil, 0, zksim.OpenACL())
		require.NoError(t, err)
		for i := range 40 {
			_, err := c.Create(ctx, fmt.Sprintf("/p/c%d", i), []byte{byte(i)}, 0, zksim.OpenACL())
			require.NoError(t, err)
		}
		for _, name := range []string{"AaAa", "BBBB", "AaBB", "BBAa"} { // one Java hash: one bucket
			_, err := c.Create(ctx, "/p/"+name, nil, 0, zksim.OpenACL())
			require.NoError(t, err)
		}
		if c != single {
			e.Lag(2)
		}
		for i := 0; i < 40; i += 3 {
			require.NoError(t, c.Delete(ctx, fmt.Sprintf("/p/c%d", i), -1))
		}
		_, err = c.Multi(ctx, &zksim.CreateOp{Path: "/p/m", ACL: zksim.OpenACL()}, &zksim.DeleteOp{Path: "/p/c1", Version: -1},
			&zksim.CreateOp{Path: "/p/c1", Data: []byte("again"), ACL: zksim.OpenACL()})
		require.NoError(t, err)
		_, err = c.Multi(ctx, &zksim.DeleteOp{Path: "/p/c2", Version: -1}, &zksim.CreateOp{Path: "/p/c1", ACL: zksim.OpenACL()})
		require.ErrorIs(t, err, zksim.ErrNodeExists)
	}
	require.Equal(t, 1+40+4+14+2, e.Pending(1)) // /p, its children, the deletes, two multis
	// Still lagging, so still on their own trees, they apply it all.
	for e.ApplyNext(1) {
	}
	for e.ApplyNext(2) {
	}
	want, wantStat, err := single.Children(ctx, "/p")
	require.NoError(t, err)
	wantData, _, err := single.Get(ctx, "/p/c1")
	require.NoError(t, err)
	for i, c := range conns {
		got, st, err := c.Children(ctx, "/p")
		require.NoError(t, err)
		require.Equal(t, want, got, "member %d", i)
		require.Equal(t, wantStat.Cversion, st.Cversion)
		require.Equal(t, wantStat.NumChildren, st.NumChildren)
		data, _, err := c.Get(ctx, "/p/c1")
		require.NoError(t, err)
		require.Equal(t, wantData, data)
	}
	e.CatchUp(1)
	e.CatchUp(2)
}

func TestEnsembleClientCutOffFromItsMemberMovesOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		c := connectTo(t, e, []int{1, 2, 0})
		ctl := e.Server().Control(c.SessionID())
		ctl.Disconnect()
		require.Equal(t, zksim.StateDisconnected, c.State())
		require.Empty(t, e.Sessions(1))
		require.NoError(t, ctl.Reconnect())
		require.Equal(t, 2, memberOf(e, c))

		// A lost reply: the write is applied, the client moves on.
		ctl.LoseNextReply(zkmem.OpCreate)
		_, err := c.Create(ctx, "/x", nil, 0, zksim.OpenACL())
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)
		require.Equal(t, 0, memberOf(e, c))
		ok, _, err := c.Exists(ctx, "/x")
		require.NoError(t, err)
		require.True(t, ok)
	})
}

func TestEnsembleResetServesAFreshTree(t *testing.T) {
	ctx := context.Background()
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	c := connectTo(t, e, []int{0})
	_, err := c.Create(ctx, "/x", nil, 0, zksim.OpenACL())
	require.NoError(t, err)
	e.Lag(1)
	_, err = c.Create(ctx, "/y", nil, 0, zksim.OpenACL())
	require.NoError(t, err)
	e.Server().Reset()
	require.Equal(t, zksim.StateExpired, c.State())
	for i := range 3 {
		c := connectTo(t, e, []int{i})
		names, _, err := c.Children(ctx, "/")
		require.NoError(t, err)
		require.Equal(t, []string{"zookeeper"}, names, "member %d", i)
		require.Equal(t, 0, e.Pending(i))
	}
}

func TestEnsembleWireSessionTalksToTheLeader(t *testing.T) {
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	rec := &recorder{}
	sess, err := e.Server().OpenSession(10*time.Second, zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	require.Equal(t, []int64{sess.ID()}, e.Sessions(2))
	require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/x", ACL: zksim.OpenACL(), TTL: -1}).Err)
	e.Crash(2)
	require.Equal(t, []string{
		fmt.Sprintf("reply create /x err=<nil> zxid=%d", e.LastZxid()),
		"closed " + zksim.ErrConnectionLoss.Error(),
	}, rec.take())
	_, err = e.Server().ResumeSession(sess.ID(), sess.Password(), e.LastZxid(), zkmem.DefaultClientAddr, rec)
	require.ErrorIs(t, err, zkmem.ErrNoMember)
	leader, err := e.Elect()
	require.NoError(t, err)
	_, err = e.Server().ResumeSession(sess.ID(), sess.Password(), e.LastZxid(), zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	require.Equal(t, []int64{sess.ID()}, e.Sessions(leader))
}

// Clients write and read concurrently through members that lag while
// another goroutine makes them apply, one commit at a time: every call
// returns, every client reads its own writes, and the members end equal.
func TestEnsembleConcurrentClientsOnLaggingMembers(t *testing.T) {
	ctx := context.Background()
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	e.Lag(0)
	e.Lag(1)
	stop := make(chan struct{})
	stepped := make(chan struct{})
	go func() {
		defer close(stepped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if !e.ApplyNext(0) && !e.ApplyNext(1) {
				time.Sleep(10 * time.Microsecond)
			}
			e.ApplyNext(1)
		}
	}()
	errs := make(chan error, 3)
	for i := range 3 {
		c := connectTo(t, e, []int{i})
		go func() {
			errs <- func() error {
				for j := range 50 {
					p := fmt.Sprintf("/c%d-%d", i, j)
					if _, err := c.Create(ctx, p, nil, 0, zksim.OpenACL()); err != nil {
						return err
					}
					if ok, _, err := c.Exists(ctx, p); err != nil || !ok {
						return fmt.Errorf("%s after its create: %v %v", p, ok, err)
					}
				}
				return nil
			}()
		}()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
	close(stop)
	<-stepped
	for e.ApplyNext(0) {
	}
	for e.ApplyNext(1) {
	}
	var lists [][]string
	for i := range 3 {
		names, _, err := connectTo(t, e, []int{i}).Children(ctx, "/")
		require.NoError(t, err)
		require.Len(t, names, 151)
		lists = append(lists, names)
	}
	require.Equal(t, lists[0], lists[1])
	require.Equal(t, lists[0], lists[2])
}

// A write waiting for its lagging member when the connection closes fails
// at once with connection loss: committed, but unanswered.
func TestEnsembleWaitingWriteFailsWhenTheConnectionCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		c := connectTo(t, e, []int{0, 1})
		e.Lag(0)
		done := async(func() error { _, err := c.Create(ctx, "/x", nil, 0, zksim.OpenACL()); return err })
		require.True(t, blocked(done))
		e.Server().Control(c.SessionID()).Disconnect()
		require.ErrorIs(t, <-done, zksim.ErrConnectionLoss)
		require.NoError(t, e.Server().Control(c.SessionID()).Reconnect())
		require.Equal(t, 1, memberOf(e, c))
		ok, _, err := c.Exists(ctx, "/x")
		require.NoError(t, err)
		require.True(t, ok)
		e.CatchUp(0)
	})
}

func TestEnsembleConnectRejectsBadMembers(t *testing.T) {
	e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
	_, err := e.Connect(zkmem.WithMembers(0, 3))
	require.EqualError(t, err, "zkmem: WithMembers: no member 3 in an ensemble of 3")
	c, err := e.Connect(zkmem.WithMembers())
	require.NoError(t, err)
	require.Equal(t, 0, memberOf(e, c))
	require.Equal(t, "observer", zkmem.RoleObserver.String())
	require.Equal(t, "Role(9)", zkmem.Role(9).String())
}

// A client that heard of a delete on one member and then moved to a member
// behind that delete (an event carries no zxid, so the member admits it)
// reads the node again there with a watch: the watch fires when that
// member applies the delete, although the session heard the same event
// from its first member (each member counts its events from the start).
func TestEnsembleWatchOnALaggingMemberFiresAfterTheSameEventElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnsemble(t, 3, zkmem.EnsembleOptions{})
		w := connectTo(t, e, []int{2})
		_, err := w.Create(ctx, "/n", []byte("old"), 0, zksim.OpenACL())
		require.NoError(t, err)
		r := connectTo(t, e, []int{1, 0})
		_, _, ch, err := r.GetW(ctx, "/n")
		require.NoError(t, err)
		e.Lag(0)
		require.NoError(t, w.Delete(ctx, "/n", -1))
		require.Equal(t, zksim.EventNodeDeleted, (<-ch).Type)

		// Member 1 goes: member 0 has applied every zxid r was answered
		// with, so it takes r, and serves the node it has not deleted yet.
		e.Crash(1)
		require.Equal(t, 0, memberOf(e, r))
		data, _, ch, err := r.GetW(ctx, "/n")
		require.NoError(t, err)
		require.Equal(t, []byte("old"), data)
		select {
		case ev := <-ch:
			t.Fatalf("event before member 0 applied the delete: %v", ev)
		default:
		}
		require.True(t, e.ApplyNext(0))
		select {
		case ev := <-ch:
			require.Equal(t, zksim.EventNodeDeleted, ev.Type)
			require.Equal(t, "/n", ev.Path)
		default:
			t.Fatal("member 0 applied the delete but the watch set there did not fire")
		}
		ok, _, err := r.Exists(ctx, "/n")
		require.NoError(t, err)
		require.False(t, ok)
	})
}
