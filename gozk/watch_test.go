package gozk_test

import (
	"context"
	"testing"

	"github.com/zksim/zksim"
)

func TestWatchesFireOnceThenClose(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	p := root + "/w"

	ok, st, created, err := c.ExistsW(ctx, p)
	must(t, "existsW on a missing node", err)
	if ok || st != nil {
		t.Fatalf("existsW = %v %v", ok, st)
	}
	_, _, childOfRoot, err := c.ChildrenW(ctx, root)
	must(t, "childrenW", err)
	_, err = c.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
	must(t, "create", err)
	want := zksim.Event{Type: zksim.EventNodeCreated, State: zksim.StateConnected, Path: p}
	if ev := recv(t, created); ev != want {
		t.Fatalf("exists watch: %v, want %v", ev, want)
	}
	recvClosed(t, created)
	want = zksim.Event{Type: zksim.EventNodeChildrenChanged, State: zksim.StateConnected, Path: root}
	if ev := recv(t, childOfRoot); ev != want {
		t.Fatalf("child watch: %v, want %v", ev, want)
	}
	recvClosed(t, childOfRoot)

	// Two data watches by one session: one server event, both channels fire.
	_, _, data1, err := c.GetW(ctx, p)
	must(t, "getW", err)
	_, _, data2, err := c.ExistsW(ctx, p)
	must(t, "existsW", err)
	_, err = c.Set(ctx, p, []byte("x"), -1)
	must(t, "set", err)
	want = zksim.Event{Type: zksim.EventNodeDataChanged, State: zksim.StateConnected, Path: p}
	for _, ch := range []<-chan zksim.Event{data1, data2} {
		if ev := recv(t, ch); ev != want {
			t.Fatalf("data watch: %v, want %v", ev, want)
		}
		recvClosed(t, ch)
	}

	_, _, deleted, err := c.GetW(ctx, p)
	must(t, "getW", err)
	_, _, children, err := c.ChildrenW(ctx, p)
	must(t, "childrenW", err)
	must(t, "delete", c.Delete(ctx, p, -1))
	want = zksim.Event{Type: zksim.EventNodeDeleted, State: zksim.StateConnected, Path: p}
	for _, ch := range []<-chan zksim.Event{deleted, children} {
		if ev := recv(t, ch); ev != want {
			t.Fatalf("watch on a deleted node: %v, want %v", ev, want)
		}
		recvClosed(t, ch)
	}
}

func TestNoWatchOnMissingNodeForGetAndChildren(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	_, _, ch, err := c.GetW(ctx, root+"/missing")
	wantErr(t, "getW", err, zksim.ErrNoNode)
	if ch != nil {
		t.Fatal("getW on a missing node returned a watch channel")
	}
	_, _, ch, err = c.ChildrenW(ctx, root+"/missing")
	wantErr(t, "childrenW", err, zksim.ErrNoNode)
	if ch != nil {
		t.Fatal("childrenW on a missing node returned a watch channel")
	}
}

func TestCloseEndsPendingWatches(t *testing.T) {
	srv, _, root := setup(t)
	c := srv.Connect(t)
	ctx := context.Background()
	_, _, w1, err := c.ExistsW(ctx, root+"/never")
	must(t, "existsW", err)
	_, _, w2, err := c.ChildrenW(ctx, root)
	must(t, "childrenW", err)
	must(t, "close", c.Close())
	for path, ch := range map[string]<-chan zksim.Event{root + "/never": w1, root: w2} {
		want := zksim.Event{Type: zksim.EventNotWatching, State: zksim.StateClosed, Path: path, Err: zksim.ErrClosing}
		if ev := recv(t, ch); ev != want {
			t.Fatalf("after Close: %v, want %v", ev, want)
		}
		recvClosed(t, ch)
	}
	if c.State() != zksim.StateClosed {
		t.Fatalf("state after Close = %v", c.State())
	}
	_, _, err = c.Get(ctx, root)
	wantErr(t, "get after Close", err, zksim.ErrClosing)
	must(t, "second Close", c.Close())
}

// A closing session's own watches see its ephemerals go: the server deletes
// them in the closeSession transaction and notifies the session before it
// answers the close. Only the watches left then end with EventNotWatching.
func TestCloseFiresOwnEphemeralWatchesFirst(t *testing.T) {
	srv, _, root := setup(t)
	c := srv.Connect(t)
	ctx := context.Background()
	dir := root + "/dir"
	_, err := c.Create(ctx, dir, nil, zksim.ModePersistent, zksim.OpenACL())
	must(t, "create dir", err)
	eph := dir + "/eph"
	_, err = c.Create(ctx, eph, nil, zksim.ModeEphemeral, zksim.OpenACL())
	must(t, "create ephemeral", err)
	_, _, data, err := c.GetW(ctx, eph)
	must(t, "getW", err)
	_, _, children, err := c.ChildrenW(ctx, dir)
	must(t, "childrenW", err)
	_, _, other, err := c.ExistsW(ctx, root+"/never")
	must(t, "existsW", err)
	must(t, "close", c.Close())
	for _, tc := range []struct {
		ch   <-chan zksim.Event
		want zksim.Event
	}{
		{data, zksim.Event{Type: zksim.EventNodeDeleted, State: zksim.StateConnected, Path: eph}},
		{children, zksim.Event{Type: zksim.EventNodeChildrenChanged, State: zksim.StateConnected, Path: dir}},
		{other, zksim.Event{Type: zksim.EventNotWatching, State: zksim.StateClosed, Path: root + "/never", Err: zksim.ErrClosing}},
	} {
		if ev := recv(t, tc.ch); ev != tc.want {
			t.Errorf("got %v, want %v", ev, tc.want)
		}
		recvClosed(t, tc.ch)
	}
}

// A data watch the server dropped silently (its session lacked READ on the
// deleted node, so the NodeDeleted never came) is still pending on the
// client when the node is created again. As in the Java client, NodeCreated
// fires it along with the exist watches; go-zookeeper alone would fire only
// the exist watches.
func TestNodeCreatedFiresPendingDataWatches(t *testing.T) {
	srv, _, root := setup(t)
	ctx := context.Background()
	watcher := srv.Connect(t)
	alice := srv.Connect(t)
	must(t, "auth", alice.AddAuth(ctx, "digest", []byte("alice:pw")))
	p := root + "/x"
	_, err := alice.Create(ctx, p, nil, zksim.ModePersistent, zksim.DigestACL(zksim.PermAll, "alice", "pw"))
	must(t, "create", err)
	found, _, stale, err := watcher.ExistsW(ctx, p)
	must(t, "existsW on the present node", err)
	if !found {
		t.Fatal("node missing")
	}
	must(t, "delete", alice.Delete(ctx, p, -1)) // the watcher may not read it: no event
	found, _, fresh, err := watcher.ExistsW(ctx, p)
	must(t, "existsW on the missing node", err)
	if found {
		t.Fatal("node still there")
	}
	_, err = alice.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
	must(t, "create again", err)
	want := zksim.Event{Type: zksim.EventNodeCreated, State: zksim.StateConnected, Path: p}
	for _, ch := range []<-chan zksim.Event{stale, fresh} {
		if ev := recv(t, ch); ev != want {
			t.Fatalf("got %v, want %v", ev, want)
		}
		recvClosed(t, ch)
	}
}

// A watch event is on its channel before the reply to any later request
// returns: after a write by another session, a sync by the watcher is
// enough to see it without waiting.
func TestWatchEventBeforeLaterReply(t *testing.T) {
	srv, _, root := setup(t)
	ctx := context.Background()
	watcher := srv.Connect(t)
	writer := srv.Connect(t)
	p := root + "/n"
	for i := range 50 {
		_, _, ch, err := watcher.ExistsW(ctx, p)
		must(t, "existsW", err)
		if i%2 == 0 {
			_, err = writer.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
		} else {
			err = writer.Delete(ctx, p, -1)
		}
		must(t, "write", err)
		_, err = watcher.Sync(ctx, p)
		must(t, "sync", err)
		select {
		case ev := <-ch:
			if ev.Path != p {
				t.Fatalf("event %v", ev)
			}
		default:
			t.Fatalf("round %d: the event was not on its channel when the later sync returned", i)
		}
	}
}
