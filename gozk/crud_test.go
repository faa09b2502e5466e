package gozk_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
)

func TestCreateGetSetDelete(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	p := root + "/n"

	created, err := c.Create(ctx, p, []byte("v0"), zksim.ModePersistent, zksim.OpenACL())
	must(t, "create", err)
	if created != p {
		t.Fatalf("created %q, want %q", created, p)
	}
	_, err = c.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
	wantErr(t, "create again", err, zksim.ErrNodeExists)

	data, st, err := c.Get(ctx, p)
	must(t, "get", err)
	if !bytes.Equal(data, []byte("v0")) || st.Version != 0 || st.DataLength != 2 || st.Czxid == 0 || st.Czxid != st.Mzxid {
		t.Fatalf("get = %q %v", data, st)
	}

	_, err = c.Set(ctx, p, []byte("v1"), 7)
	wantErr(t, "set with a wrong version", err, zksim.ErrBadVersion)
	st2, err := c.Set(ctx, p, []byte("v11"), 0)
	must(t, "set", err)
	if st2.Version != 1 || st2.DataLength != 3 || st2.Mzxid <= st.Mzxid || st2.Czxid != st.Czxid {
		t.Fatalf("set stat = %v after %v", st2, st)
	}

	ok, st3, err := c.Exists(ctx, p)
	must(t, "exists", err)
	if !ok || *st3 != *st2 {
		t.Fatalf("exists = %v %v, want true %v", ok, st3, st2)
	}

	wantErr(t, "delete with a wrong version", c.Delete(ctx, p, 0), zksim.ErrBadVersion)
	must(t, "delete", c.Delete(ctx, p, 1))
	ok, st4, err := c.Exists(ctx, p)
	must(t, "exists after delete", err)
	if ok || st4 != nil {
		t.Fatalf("exists after delete = %v %v, want false nil", ok, st4)
	}
	_, _, err = c.Get(ctx, p)
	wantErr(t, "get after delete", err, zksim.ErrNoNode)
	wantErr(t, "delete again", c.Delete(ctx, p, -1), zksim.ErrNoNode)
	_, err = c.Set(ctx, p, nil, -1)
	wantErr(t, "set after delete", err, zksim.ErrNoNode)
}

func TestChildrenAndParentStat(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	for _, name := range []string{"b", "a", "c"} {
		_, err := c.Create(ctx, root+"/"+name, nil, zksim.ModePersistent, zksim.OpenACL())
		must(t, "create "+name, err)
	}
	must(t, "delete b", c.Delete(ctx, root+"/b", -1))
	names, st, err := c.Children(ctx, root)
	must(t, "children", err)
	slices.Sort(names)
	if !slices.Equal(names, []string{"a", "c"}) {
		t.Fatalf("children = %v", names)
	}
	// cversion counts child creates and deletes.
	if st.NumChildren != 2 || st.Cversion != 4 {
		t.Fatalf("parent stat = %v, want numChildren 2 cversion 4", st)
	}
	_, _, err = c.Children(ctx, root+"/missing")
	wantErr(t, "children of a missing node", err, zksim.ErrNoNode)
	wantErr(t, "delete a parent", c.Delete(ctx, root, -1), zksim.ErrNotEmpty)
	_, err = c.Create(ctx, root+"/x/y", nil, zksim.ModePersistent, zksim.OpenACL())
	wantErr(t, "create without a parent", err, zksim.ErrNoNode)
}

func TestSequentialNames(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	first, err := c.Create(ctx, root+"/q-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
	must(t, "create", err)
	if first != root+"/q-0000000000" {
		t.Fatalf("first sequential = %q", first)
	}
	must(t, "delete", c.Delete(ctx, first, -1))
	// Deletes do not give numbers back; a trailing "/" is legal here.
	second, err := c.Create(ctx, root+"/", nil, zksim.ModeEphemeralSequential, zksim.OpenACL())
	must(t, "create", err)
	if second != root+"/0000000001" {
		t.Fatalf("second sequential = %q", second)
	}
}

func TestEphemeralOwnerAndLifetime(t *testing.T) {
	srv, c, root := setup(t)
	ctx := context.Background()
	other := srv.Connect(t)
	p := root + "/e"
	_, err := other.Create(ctx, p, nil, zksim.ModeEphemeral, zksim.OpenACL())
	must(t, "create ephemeral", err)
	_, st, err := c.Get(ctx, p)
	must(t, "get", err)
	if st.EphemeralOwner != other.SessionID() || other.SessionID() == c.SessionID() {
		t.Fatalf("owner %#x, want %#x (and not %#x)", st.EphemeralOwner, other.SessionID(), c.SessionID())
	}
	_, err = c.Create(ctx, p+"/child", nil, zksim.ModePersistent, zksim.OpenACL())
	wantErr(t, "child of an ephemeral", err, zksim.ErrNoChildrenForEphemerals)
	_, err = c.Create(ctx, p, nil, zksim.ModePersistent, zksim.OpenACL())
	wantErr(t, "NodeExists is checked first", err, zksim.ErrNodeExists)

	must(t, "close owner", other.Close())
	ok, _, err := c.Exists(ctx, p)
	must(t, "exists", err)
	if ok {
		t.Fatal("the ephemeral outlived its closed session")
	}
}

func TestPathErrorsAreBadArguments(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	for _, path := range []string{
		"",
		"relative",
		root + "/",
		root + "//a",
		root + "/./a",
		root + "/a\u0001",
		root + "/\U0001F600", // go-zookeeper would send it: a server accepts it for reads
		root + "/\uFFFF",
	} {
		_, err := c.Create(ctx, path, nil, zksim.ModePersistent, zksim.OpenACL())
		wantErr(t, "create "+path, err, zksim.ErrBadArguments)
		_, _, err = c.Exists(ctx, path)
		wantErr(t, "exists "+path, err, zksim.ErrBadArguments)
		_, _, _, err = c.GetW(ctx, path)
		wantErr(t, "getW "+path, err, zksim.ErrBadArguments)
		wantErr(t, "delete "+path, c.Delete(ctx, path, -1), zksim.ErrBadArguments)
	}
	// In a multi the server checks the path, and answers the same.
	_, err := c.Multi(ctx, &zksim.CreateOp{Path: root + "/\U0001F600", ACL: zksim.OpenACL()})
	wantErr(t, "multi create of an emoji path", err, zksim.ErrBadArguments)
	wantErr(t, "delete /zookeeper", c.Delete(ctx, "/zookeeper", -1), zksim.ErrBadArguments)
	// go-zookeeper checks a sequential path as given; a server checks
	// path+"1" and would accept this one.
	_, err = c.Create(ctx, root+"/..", nil, zksim.ModePersistentSequential, zksim.OpenACL())
	wantErr(t, "sequential create of ~/..", err, zksim.ErrBadArguments)
	if zksim.ValidatePath(root+"/..", true) != nil {
		t.Errorf("zksim.ValidatePath rejects the sequential path %q", root+"/..")
	}
}

func TestCreateModesAndArguments(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	_, err := c.Create(ctx, root+"/a", nil, zksim.CreateMode(42), zksim.OpenACL())
	wantErr(t, "unknown mode", err, zksim.ErrBadArguments)
	_, err = c.Create(ctx, root+"/a", nil, zksim.ModePersistentWithTTL, zksim.OpenACL())
	wantErr(t, "TTL mode without a ttl", err, zksim.ErrBadArguments)
	_, err = c.CreateTTL(ctx, root+"/a", nil, zksim.ModePersistent, zksim.OpenACL(), time.Second)
	wantErr(t, "CreateTTL with a plain mode", err, zksim.ErrBadArguments)
	_, err = c.CreateTTL(ctx, root+"/a", nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), 0)
	wantErr(t, "zero ttl", err, zksim.ErrBadArguments)
	_, err = c.Create(ctx, root+"/a", nil, zksim.ModePersistent, nil)
	wantErr(t, "empty ACL", err, zksim.ErrInvalidACL)
}

func TestContainerIsReaped(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	box := root + "/box"
	_, err := c.Create(ctx, box, nil, zksim.ModeContainer, zksim.OpenACL())
	must(t, "create container", err)
	_, st, err := c.Get(ctx, box)
	must(t, "get", err)
	if st.EphemeralOwner != 0 {
		t.Fatalf("container owner = %#x, want 0", st.EphemeralOwner)
	}
	_, err = c.Create(ctx, box+"/item", nil, zksim.ModePersistent, zksim.OpenACL())
	must(t, "create child", err)
	_, _, gone, err := c.ExistsW(ctx, box)
	must(t, "watch", err)
	must(t, "delete child", c.Delete(ctx, box+"/item", -1))
	// The server's container check (every 100ms here) deletes it.
	if ev := recv(t, gone); ev.Type != zksim.EventNodeDeleted || ev.Path != box {
		t.Fatalf("event %v, want NodeDeleted %s", ev, box)
	}
}

func TestTTLNodeIsReaped(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	p, err := c.CreateTTL(ctx, root+"/t-", []byte("x"), zksim.ModePersistentSequentialWithTTL, zksim.OpenACL(), 300*time.Millisecond)
	must(t, "create TTL node", err)
	if p != root+"/t-0000000000" {
		t.Fatalf("created %q", p)
	}
	_, st, gone, err := c.GetW(ctx, p)
	must(t, "watch", err)
	if st.EphemeralOwner != 0 {
		t.Fatalf("TTL node owner = %#x, want 0", st.EphemeralOwner)
	}
	if ev := recv(t, gone); ev.Type != zksim.EventNodeDeleted || ev.Path != p {
		t.Fatalf("event %v, want NodeDeleted %s", ev, p)
	}
}

func TestSyncAndNoOptionalCapabilities(t *testing.T) {
	_, c, root := setup(t)
	got, err := c.Sync(context.Background(), root)
	must(t, "sync", err)
	if got != root {
		t.Fatalf("sync returned %q", got)
	}
	var conn zksim.Conn = c
	if _, ok := conn.(zksim.PersistentWatcher); ok {
		t.Error("gozk.Conn claims PersistentWatcher, which go-zookeeper lacks")
	}
	if _, ok := conn.(zksim.EphemeralsLister); ok {
		t.Error("gozk.Conn claims EphemeralsLister, which go-zookeeper lacks")
	}
	if _, ok := conn.(zksim.ChildCounter); ok {
		t.Error("gozk.Conn claims ChildCounter, which go-zookeeper lacks")
	}
}

func TestSessionTimeoutIsNegotiated(t *testing.T) {
	srv, _, _ := setup(t)
	for _, tc := range []struct{ asked, want time.Duration }{
		{10 * time.Second, 2 * time.Second}, // clamped to 20 ticks
		{50 * time.Millisecond, 200 * time.Millisecond},
		{700 * time.Millisecond, 700 * time.Millisecond},
	} {
		c := srv.Connect(t, gozk.WithSessionTimeout(tc.asked))
		if got := c.SessionTimeout(); got != tc.want {
			t.Errorf("asked %v: negotiated %v, want %v", tc.asked, got, tc.want)
		}
		if c.SessionID() == 0 || c.State() != zksim.StateConnected {
			t.Errorf("session %#x state %v", c.SessionID(), c.State())
		}
	}
}
