package zkwire_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zksim/zksim/zkwire"
)

// TestGoZookeeperWorkload runs an unchanged go-zookeeper client against
// the wire server: every call it has, and a watch of each kind.
func TestGoZookeeperWorkload(t *testing.T) {
	srv := zkwire.NewTestServer(t)
	c, _ := dial(t, srv.Addr(), 10*time.Second)
	acl := zk.WorldACL(zk.PermAll)

	p, err := c.Create("/app", []byte("v1"), 0, acl)
	if err != nil || p != "/app" {
		t.Fatalf("Create = %q, %v", p, err)
	}
	if _, err := c.Create("/app", nil, 0, acl); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second Create: %v, want ErrNodeExists", err)
	}
	data, st, err := c.Get("/app")
	if err != nil || string(data) != "v1" || st.Version != 0 || st.Czxid == 0 || st.DataLength != 2 {
		t.Fatalf("Get = %q, %+v, %v", data, st, err)
	}
	st2, err := c.Set("/app", []byte("v2"), 0)
	if err != nil || st2.Version != 1 || st2.Mzxid <= st.Mzxid {
		t.Fatalf("Set = %+v, %v", st2, err)
	}
	if _, err := c.Set("/app", nil, 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("Set with stale version: %v", err)
	}
	seq, err := c.Create("/app/job-", nil, zk.FlagSequence|zk.FlagEphemeral, acl)
	if err != nil || seq != "/app/job-0000000000" {
		t.Fatalf("sequential Create = %q, %v", seq, err)
	}
	_, est, _ := c.Exists(seq)
	if est.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeralOwner %#x, session %#x", est.EphemeralOwner, c.SessionID())
	}
	kids, _, err := c.Children("/app")
	if err != nil || !slices.Equal(kids, []string{"job-0000000000"}) {
		t.Fatalf("Children = %v, %v", kids, err)
	}
	if err := c.Delete("/app", -1); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("Delete non-empty: %v", err)
	}

	// Watches: data, child, exists on a missing node.
	_, _, dataW, err := c.GetW("/app")
	if err != nil {
		t.Fatal(err)
	}
	_, _, childW, err := c.ChildrenW("/app")
	if err != nil {
		t.Fatal(err)
	}
	ok, _, existW, err := c.ExistsW("/later")
	if err != nil || ok {
		t.Fatalf("ExistsW = %v, %v", ok, err)
	}
	if _, err := c.Set("/app", []byte("v3"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, dataW); ev.Type != zk.EventNodeDataChanged || ev.Path != "/app" {
		t.Fatalf("data watch: %+v", ev)
	}
	if err := c.Delete(seq, -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, childW); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/app" {
		t.Fatalf("child watch: %+v", ev)
	}
	if _, err := c.Create("/later", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, existW); ev.Type != zk.EventNodeCreated || ev.Path != "/later" {
		t.Fatalf("exists watch: %+v", ev)
	}

	// Multi: success, then a failure that rolls back.
	res, err := c.Multi(
		&zk.CreateRequest{Path: "/m", Data: []byte("x"), Acl: acl},
		&zk.SetDataRequest{Path: "/m", Data: []byte("y"), Version: 0},
		&zk.CheckVersionRequest{Path: "/m", Version: 1},
		&zk.DeleteRequest{Path: "/later", Version: -1},
	)
	if err != nil || len(res) != 4 || res[0].String != "/m" || res[1].Stat == nil || res[1].Stat.Version != 1 {
		t.Fatalf("Multi = %+v, %v", res, err)
	}
	res, err = c.Multi(
		&zk.CreateRequest{Path: "/n", Acl: acl},
		&zk.DeleteRequest{Path: "/nope", Version: -1},
		&zk.CreateRequest{Path: "/o", Acl: acl},
	)
	if !errors.Is(err, zk.ErrNoNode) || len(res) != 3 || res[0].Error != nil ||
		!errors.Is(res[1].Error, zk.ErrNoNode) || res[2].Error == nil {
		t.Fatalf("failed Multi = %+v, %v", res, err)
	}
	if ok, _, _ := c.Exists("/n"); ok {
		t.Fatal("a failed multi left /n behind")
	}

	// ACLs and auth.
	if err := c.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/private", []byte("p"), 0, zk.DigestACL(zk.PermAll, "alice", "secret")); err != nil {
		t.Fatal(err)
	}
	other, _ := dial(t, srv.Addr(), 10*time.Second)
	if _, _, err := other.Get("/private"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("Get without auth: %v", err)
	}
	got, _, err := c.GetACL("/private")
	if err != nil || len(got) != 1 || got[0].Scheme != "digest" || got[0].ID != zk.DigestACL(zk.PermAll, "alice", "secret")[0].ID {
		t.Fatalf("GetACL = %+v, %v", got, err)
	}
	if err := other.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	if d, _, err := other.Get("/private"); err != nil || !bytes.Equal(d, []byte("p")) {
		t.Fatalf("Get after auth = %q, %v", d, err)
	}
	if _, err := c.Sync("/app"); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if p, err := c.CreateContainer("/box", nil, 4, acl); err != nil || p != "/box" {
		t.Fatalf("CreateContainer = %q, %v", p, err)
	}
	if _, err := c.CreateTTL("/ttl", nil, 5, acl, time.Minute); err == nil || !strings.Contains(err.Error(), "-6") {
		t.Fatalf("CreateTTL with extended types off: %v, want Unimplemented (-6)", err)
	}
}
