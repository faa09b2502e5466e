package gozk_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkserver"
)

func TestReconnectKeepsSessionAndWatches(t *testing.T) {
	srv, c, root := setup(t)
	ctx := context.Background()
	proxy := zkserver.NewProxy(t, srv.Addr())
	client := proxy.Connect(t, gozk.WithSessionTimeout(2*time.Second))
	events := client.SessionEvents(t.Context())
	id := client.SessionID()
	eph := root + "/eph"
	_, err := client.Create(ctx, eph, nil, zksim.ModeEphemeral, zksim.OpenACL())
	must(t, "create ephemeral", err)
	_, _, watch, err := client.GetW(ctx, eph)
	must(t, "getW", err)

	proxy.Cut()
	waitState(t, events, zksim.StateDisconnected)
	// Changed while the client is away: the re-registered watch fires on
	// reconnect.
	_, err = c.Set(ctx, eph, []byte("changed"), -1)
	must(t, "set", err)
	proxy.Restore()
	seen := waitState(t, events, zksim.StateConnected)
	if slices.Contains(seen, zksim.StateExpired) {
		t.Fatalf("states %v", seen)
	}
	want := zksim.Event{Type: zksim.EventNodeDataChanged, State: zksim.StateConnected, Path: eph}
	if ev := recv(t, watch); ev != want {
		t.Fatalf("watch after reconnect: %v, want %v", ev, want)
	}
	if client.SessionID() != id {
		t.Fatalf("session %#x after reconnect, want %#x", client.SessionID(), id)
	}
	_, st, err := client.Get(ctx, eph)
	must(t, "get after reconnect", err)
	if st.EphemeralOwner != id {
		t.Fatalf("owner %#x, want %#x", st.EphemeralOwner, id)
	}
}

func TestCallDuringCutIsConnectionLoss(t *testing.T) {
	srv, _, root := setup(t)
	proxy := zkserver.NewProxy(t, srv.Addr())
	client := proxy.Connect(t)
	events := client.SessionEvents(t.Context())
	proxy.Cut()
	waitState(t, events, zksim.StateDisconnected)
	// Queued while no server can be reached: ErrConnectionLoss, or the
	// context's deadline while go-zookeeper waits for a connection.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err := client.Get(ctx, root)
	if !errors.Is(err, zksim.ErrConnectionLoss) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("get while cut: %v", err)
	}
	proxy.Restore()
	waitState(t, events, zksim.StateConnected)
	_, _, err = client.Get(context.Background(), root)
	must(t, "get after restore", err)
}

func TestExpiryFinishesTheConn(t *testing.T) {
	srv, c, root := setup(t)
	ctx := context.Background()
	proxy := zkserver.NewProxy(t, srv.Addr())
	client := proxy.Connect(t, gozk.WithSessionTimeout(500*time.Millisecond))
	events := client.SessionEvents(t.Context())
	id := client.SessionID()
	eph := root + "/eph"
	_, err := client.Create(ctx, eph, nil, zksim.ModeEphemeral, zksim.OpenACL())
	must(t, "create ephemeral", err)
	_, _, watch, err := client.ExistsW(ctx, root+"/other")
	must(t, "existsW", err)
	_, _, gone, err := c.ExistsW(ctx, eph)
	must(t, "existsW by another session", err)

	proxy.Cut()
	waitCtx, cancel := context.WithTimeout(ctx, waitLimit)
	defer cancel()
	must(t, "wait for the server to expire the session", srv.WaitSessionGone(waitCtx, id))
	if ev := recv(t, gone); ev.Type != zksim.EventNodeDeleted || ev.Path != eph {
		t.Fatalf("other session saw %v, want NodeDeleted %s", ev, eph)
	}
	proxy.Restore()

	waitState(t, events, zksim.StateExpired)
	want := zksim.Event{Type: zksim.EventNotWatching, State: zksim.StateExpired, Path: root + "/other", Err: zksim.ErrSessionExpired}
	if ev := recv(t, watch); ev != want {
		t.Fatalf("pending watch: %v, want %v", ev, want)
	}
	recvClosed(t, watch)
	if client.State() != zksim.StateExpired || client.SessionID() != id {
		t.Fatalf("state %v session %#x, want StateExpired %#x", client.State(), client.SessionID(), id)
	}
	_, _, err = client.Get(ctx, root)
	wantErr(t, "get after expiry", err, zksim.ErrSessionExpired)
	_, err = client.Create(ctx, root+"/x", nil, zksim.ModePersistent, zksim.OpenACL())
	wantErr(t, "create after expiry", err, zksim.ErrSessionExpired)
	must(t, "close", client.Close())
	if ev := recv(t, events); ev.State != zksim.StateClosed {
		t.Fatalf("session event after Close: %v, want StateClosed", ev)
	}
	recvClosed(t, events)
}

func TestSessionEventsEnd(t *testing.T) {
	srv, _, _ := setup(t)
	c := srv.Connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	byCtx := c.SessionEvents(ctx)
	byClose := c.SessionEvents(context.Background())
	cancel()
	recvClosed(t, byCtx)
	must(t, "close", c.Close())
	// A reader who has kept up gets StateClosed last.
	if ev := recv(t, byClose); ev.Type != zksim.EventSession || ev.State != zksim.StateClosed {
		t.Fatalf("last session event %v, want StateClosed", ev)
	}
	recvClosed(t, byClose)
	recvClosed(t, c.SessionEvents(context.Background()))
}

func TestContextEndsTheWait(t *testing.T) {
	srv, _, root := setup(t)
	proxy := zkserver.NewProxy(t, srv.Addr())
	client := proxy.Connect(t)

	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := client.Create(done, root+"/never", nil, zksim.ModePersistent, zksim.OpenACL())
	wantErr(t, "create with a done context", err, context.Canceled)

	events := client.SessionEvents(t.Context())
	proxy.Cut()
	waitState(t, events, zksim.StateDisconnected)
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		_, _, err := client.Get(ctx, root)
		result <- err
	}()
	cancel()
	select {
	case err := <-result:
		if !errors.Is(err, context.Canceled) && !errors.Is(err, zksim.ErrConnectionLoss) {
			t.Fatalf("get: %v, want context.Canceled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("get did not return after its context was cancelled")
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	res, err := client.Multi(short, &zksim.CheckOp{Path: root, Version: -1})
	if (!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, zksim.ErrConnectionLoss)) || res != nil {
		t.Fatalf("multi while cut = %v, %v; want no results and context.DeadlineExceeded", res, err)
	}
	proxy.Restore()
	later, cancelLater := context.WithTimeout(context.Background(), waitLimit)
	defer cancelLater()
	_, err = client.Create(later, root+"/after", nil, zksim.ModePersistent, zksim.OpenACL())
	must(t, "create after restore", err)
}

func TestConnectHonoursContext(t *testing.T) {
	srv := zkserver.Shared(t)
	proxy := zkserver.NewProxy(t, srv.Addr())
	proxy.Cut() // connections are held: no session can be granted
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	c, err := gozk.Connect(ctx, []string{proxy.Addr()})
	if !errors.Is(err, context.DeadlineExceeded) || c != nil {
		t.Fatalf("connect = %v, %v; want context.DeadlineExceeded", c, err)
	}
}
