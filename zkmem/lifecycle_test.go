package zkmem_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

func connect(t *testing.T, srv *zkmem.Server, opts ...zkmem.ConnOption) *zkmem.Conn {
	t.Helper()
	c, err := srv.Connect(opts...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func create(t *testing.T, c zksim.Conn, path string, mode zksim.CreateMode) string {
	t.Helper()
	p, err := c.Create(context.Background(), path, nil, mode, zksim.OpenACL())
	require.NoError(t, err)
	return p
}

// nextState returns the next session event, failing if none is queued.
func nextState(t *testing.T, ch <-chan zksim.Event) zksim.State {
	t.Helper()
	synctest.Wait()
	select {
	case ev := <-ch:
		require.Equal(t, zksim.EventSession, ev.Type)
		return ev.State
	default:
		t.Fatal("no session event")
		return 0
	}
}

func TestSessionExpiresAfterTimeoutWithoutConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
		defer srv.Close()
		ctx := context.Background()
		c := connect(t, srv, zkmem.WithSessionTimeout(6*time.Second))
		other := connect(t, srv)
		require.Equal(t, 6*time.Second, c.SessionTimeout())
		create(t, c, "/eph", zksim.ModeEphemeral)
		_, _, gone, err := other.ExistsW(ctx, "/eph")
		require.NoError(t, err)
		states := c.SessionEvents(ctx)

		control(c).Disconnect()
		require.Equal(t, zksim.StateDisconnected, nextState(t, states))
		_, _, err = c.Get(ctx, "/eph")
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)

		time.Sleep(6*time.Second - time.Millisecond)
		synctest.Wait()
		ok, _, err := other.Exists(ctx, "/eph")
		require.NoError(t, err)
		require.True(t, ok, "the session lives until its timeout")

		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		ev := <-gone
		require.Equal(t, zksim.EventNodeDeleted, ev.Type)
		require.Equal(t, zksim.StateDisconnected, c.State(), "the client learns only when it reconnects")

		require.ErrorIs(t, control(c).Reconnect(), zksim.ErrSessionExpired)
		require.Equal(t, zksim.StateExpired, nextState(t, states))
		_, _, err = c.Get(ctx, "/")
		require.ErrorIs(t, err, zksim.ErrSessionExpired)
	})
}

func TestReconnectWithinTimeoutKeepsSessionAndRestoresWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
		defer srv.Close()
		ctx := context.Background()
		c := connect(t, srv, zkmem.WithSessionTimeout(10*time.Second))
		w := connect(t, srv)
		create(t, c, "/eph", zksim.ModeEphemeral)
		create(t, w, "/data", zksim.ModePersistent)
		create(t, w, "/quiet", zksim.ModePersistent)
		create(t, w, "/kids", zksim.ModePersistent)

		_, _, dataW, err := c.GetW(ctx, "/data")
		require.NoError(t, err)
		_, _, quietW, err := c.GetW(ctx, "/quiet")
		require.NoError(t, err)
		_, _, kidsW, err := c.ChildrenW(ctx, "/kids")
		require.NoError(t, err)
		_, _, existW, err := c.ExistsW(ctx, "/later")
		require.NoError(t, err)

		control(c).Disconnect()
		// Changes while disconnected are not delivered...
		_, err = w.Set(ctx, "/data", []byte("v2"), -1)
		require.NoError(t, err)
		create(t, w, "/kids/a", zksim.ModePersistent)
		create(t, w, "/later", zksim.ModePersistent)
		time.Sleep(9 * time.Second)
		synctest.Wait()
		require.Empty(t, dataW)

		// ...but the reconnect re-registers the watches against the last zxid.
		require.NoError(t, control(c).Reconnect())
		require.Equal(t, zksim.EventNodeDataChanged, (<-dataW).Type)
		require.Equal(t, zksim.EventNodeChildrenChanged, (<-kidsW).Type)
		require.Equal(t, zksim.EventNodeCreated, (<-existW).Type)
		require.Empty(t, quietW, "an unchanged node's watch is re-armed, not fired")
		ok, _, err := w.Exists(ctx, "/eph")
		require.NoError(t, err)
		require.True(t, ok, "the session survived")

		_, err = w.Set(ctx, "/quiet", nil, -1)
		require.NoError(t, err)
		require.Equal(t, zksim.EventNodeDataChanged, (<-quietW).Type)
	})
}

func TestLostReplyIsAppliedAndReconnects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{})
		defer srv.Close()
		ctx := context.Background()
		c := connect(t, srv, zkmem.WithReconnectDelay(time.Second))
		states := c.SessionEvents(ctx)

		control(c).LoseNextReply(zkmem.OpCreate)
		_, err := c.Create(ctx, "/lost", nil, zksim.ModeEphemeral, zksim.OpenACL())
		require.ErrorIs(t, err, zksim.ErrConnectionLoss)
		require.Equal(t, zksim.StateDisconnected, nextState(t, states))
		_, _, err = c.Get(ctx, "/lost")
		require.ErrorIs(t, err, zksim.ErrConnectionLoss, "still down during the reconnect delay")

		time.Sleep(time.Second)
		require.Equal(t, zksim.StateConnected, nextState(t, states))
		_, st, err := c.Get(ctx, "/lost")
		require.NoError(t, err, "the create was applied although its reply was lost")
		require.Equal(t, c.SessionID(), st.EphemeralOwner)
	})
}

func TestDroppedRequestIsNotApplied(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c := connect(t, srv)
	before := srv.LastZxid()
	control(c).DropNextRequest(zkmem.OpAny)
	_, err := c.Create(ctx, "/never", nil, zksim.ModePersistent, zksim.OpenACL())
	require.ErrorIs(t, err, zksim.ErrConnectionLoss)
	require.Equal(t, before, srv.LastZxid(), "no transaction reached the server")
	ok, _, err := c.Exists(ctx, "/never")
	require.NoError(t, err, "reconnected at once by default")
	require.False(t, ok)
}

func TestFaultHookSeesEveryRequest(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c := connect(t, srv)
	var seen []string
	control(c).SetFaultHook(func(r zkmem.Request, armed zkmem.ConnFault) zkmem.ConnFault {
		seen = append(seen, r.String())
		if r.Op == zkmem.OpSetData {
			return zkmem.LoseReply
		}
		return zkmem.NoFault
	})
	create(t, c, "/h", zksim.ModePersistent)
	_, err := c.Set(ctx, "/h", []byte("x"), 0)
	require.ErrorIs(t, err, zksim.ErrConnectionLoss)
	control(c).SetFaultHook(nil)
	data, st, err := c.Get(ctx, "/h")
	require.NoError(t, err)
	require.Equal(t, "x", string(data))
	require.Equal(t, int32(1), st.Version)
	require.Equal(t, []string{"create /h", "setData /h"}, seen)
}

func TestExpireConnectedSessionTellsClientAndOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{})
		defer srv.Close()
		ctx := context.Background()
		c := connect(t, srv)
		other := connect(t, srv)
		create(t, c, "/lock", zksim.ModeEphemeral)
		_, _, mine, err := c.GetW(ctx, "/lock")
		require.NoError(t, err)
		_, _, theirs, err := other.ExistsW(ctx, "/lock")
		require.NoError(t, err)
		states := c.SessionEvents(ctx)

		control(c).Expire()
		require.Equal(t, zksim.StateDisconnected, nextState(t, states))
		require.Equal(t, zksim.StateExpired, nextState(t, states))
		ev := <-mine
		require.Equal(t, zksim.EventNotWatching, ev.Type)
		require.ErrorIs(t, ev.Err, zksim.ErrSessionExpired)
		require.Equal(t, zksim.EventNodeDeleted, (<-theirs).Type)
		_, err = c.Create(ctx, "/x", nil, zksim.ModePersistent, zksim.OpenACL())
		require.ErrorIs(t, err, zksim.ErrSessionExpired)
	})
}

func TestContainerAndTTLReaping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{ExtendedTypes: true, ContainerCheckInterval: time.Second})
		defer srv.Close()
		ctx := context.Background()
		c := connect(t, srv)
		create(t, c, "/box", zksim.ModeContainer)
		_, err := c.CreateTTL(ctx, "/ttl", nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), 5*time.Second)
		require.NoError(t, err)
		_, _, boxW, err := c.ExistsW(ctx, "/box")
		require.NoError(t, err)

		time.Sleep(3 * time.Second)
		synctest.Wait()
		ok, _, err := c.Exists(ctx, "/box")
		require.NoError(t, err)
		require.True(t, ok, "a container that never had a child stays")

		create(t, c, "/box/a", zksim.ModePersistent)
		require.NoError(t, c.Delete(ctx, "/box/a", -1))
		time.Sleep(time.Second)
		synctest.Wait()
		ev := <-boxW
		require.Equal(t, zksim.EventNodeDeleted, ev.Type, "an emptied container is reaped")

		time.Sleep(3 * time.Second)
		synctest.Wait()
		ok, _, err = c.Exists(ctx, "/ttl")
		require.NoError(t, err)
		require.False(t, ok, "a childless TTL node goes once its ttl has passed since mtime")
	})
}

func TestCloseEndsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{})
		defer srv.Close()
		ctx := context.Background()
		c, err := srv.Connect()
		require.NoError(t, err)
		_, _, w, err := c.ExistsW(ctx, "/x")
		require.NoError(t, err)
		pw, err := c.AddWatch(ctx, "/", zksim.WatchPersistentRecursive)
		require.NoError(t, err)
		states := c.SessionEvents(ctx)
		require.NoError(t, c.Close())
		ev := <-w
		require.Equal(t, zksim.EventNotWatching, ev.Type)
		require.True(t, errors.Is(ev.Err, zksim.ErrClosing))
		for range pw {
		}
		for range states {
		}
		_, _, err = c.Get(ctx, "/")
		require.ErrorIs(t, err, zksim.ErrClosing)
		require.NoError(t, c.Close(), "Close is idempotent")
	})
}

func TestPausedHolderLosesSessionWithoutKnowing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
		defer srv.Close()
		ctx := context.Background()
		holder := connect(t, srv, zkmem.WithSessionTimeout(4*time.Second))
		other := connect(t, srv)
		create(t, holder, "/lock", zksim.ModeEphemeral)
		control(holder).Pause()
		time.Sleep(3 * time.Second)
		require.NoError(t, control(holder).Resume(), "resumed within the timeout: nothing lost")
		control(holder).Pause()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		ok, _, err := other.Exists(ctx, "/lock")
		require.NoError(t, err)
		require.False(t, ok, "the paused holder's session expired")
		require.Equal(t, zksim.StateConnected, holder.State(), "and it does not know yet")
		require.ErrorIs(t, control(holder).Resume(), zksim.ErrSessionExpired)
		require.Equal(t, zksim.StateExpired, holder.State())
	})
}

func TestEventTransportHoldsEventsUntilDelivered(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	ctx := context.Background()
	var held []zksim.Event
	var deliver func(zksim.Event)
	c := connect(t, srv, zkmem.WithEventTransport(func(ev zksim.Event, d func(zksim.Event)) {
		held, deliver = append(held, ev), d
	}))
	create(t, c, "/x", zksim.ModePersistent)
	_, _, w, err := c.GetW(ctx, "/x")
	require.NoError(t, err)
	_, err = c.Set(ctx, "/x", nil, -1)
	require.NoError(t, err)
	require.Empty(t, w)
	require.Len(t, held, 1)
	deliver(held[0])
	require.Equal(t, zksim.EventNodeDataChanged, (<-w).Type)
}

// control returns the control handle of c's session.
func control(c *zkmem.Conn) *zkmem.Control { return c.Server().Control(c.SessionID()) }
