package gozk_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zksim/zksim"
)

func TestMultiSucceeds(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	_, err := c.Create(ctx, root+"/old", []byte("a"), zksim.ModePersistent, zksim.OpenACL())
	must(t, "create", err)
	res, err := c.Multi(ctx,
		&zksim.CreateOp{Path: root + "/s-", Mode: zksim.ModePersistentSequential, ACL: zksim.OpenACL()},
		&zksim.CreateOp{Path: root + "/s-", Mode: zksim.ModeEphemeralSequential, ACL: zksim.OpenACL()},
		&zksim.SetOp{Path: root + "/old", Data: []byte("bb"), Version: 0},
		&zksim.CheckOp{Path: root + "/old", Version: 1},
		&zksim.DeleteOp{Path: root + "/old", Version: 1},
	)
	must(t, "multi", err)
	if len(res) != 5 {
		t.Fatalf("%d results", len(res))
	}
	if res[0].Path != root+"/s-0000000001" || res[1].Path != root+"/s-0000000002" {
		t.Fatalf("created %q and %q", res[0].Path, res[1].Path)
	}
	if res[2].Stat == nil || res[2].Stat.Version != 1 || res[2].Stat.DataLength != 2 {
		t.Fatalf("set result %v", res[2].Stat)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Errorf("result %d: %v", i, r.Err)
		}
	}
	// All ops of a multi share one zxid.
	_, st, err := c.Get(ctx, res[0].Path)
	must(t, "get", err)
	if st.Czxid != res[2].Stat.Mzxid {
		t.Fatalf("czxid %#x of the create, mzxid %#x of the set", st.Czxid, res[2].Stat.Mzxid)
	}
}

func TestMultiFailureResults(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	_, err := c.Create(ctx, root+"/a", nil, zksim.ModePersistent, zksim.OpenACL())
	must(t, "create", err)
	res, err := c.Multi(ctx,
		&zksim.CreateOp{Path: root + "/b", ACL: zksim.OpenACL()},
		&zksim.SetOp{Path: root + "/a", Version: 5},
		&zksim.DeleteOp{Path: root + "/a", Version: -1},
	)
	wantErr(t, "multi", err, zksim.ErrBadVersion)
	want := []error{nil, zksim.ErrBadVersion, zksim.ErrRuntimeInconsistency}
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		if !errors.Is(r.Err, want[i]) || (want[i] == nil && r.Err != nil) {
			t.Errorf("result %d: error %v, want %v", i, r.Err, want[i])
		}
		if r.Path != "" || r.Stat != nil {
			t.Errorf("result %d of a failed multi: %+v", i, r)
		}
	}
	ok, _, err := c.Exists(ctx, root+"/b")
	must(t, "exists", err)
	if ok {
		t.Fatal("a failed multi created a node")
	}
	// A failed multi consumes no sequence numbers.
	p, err := c.Create(ctx, root+"/s-", nil, zksim.ModePersistentSequential, zksim.OpenACL())
	must(t, "create sequential", err)
	if p != root+"/s-0000000001" {
		t.Fatalf("created %q after a failed multi", p)
	}
}

func TestMultiRefusesWhatGoZookeeperCannotCarry(t *testing.T) {
	_, c, root := setup(t)
	ctx := context.Background()
	for _, op := range []zksim.Op{
		&zksim.CreateOp{Path: root + "/c", Mode: zksim.ModeContainer, ACL: zksim.OpenACL()},
		&zksim.CreateOp{Path: root + "/t", Mode: zksim.ModePersistentWithTTL, ACL: zksim.OpenACL(), TTL: 1000},
	} {
		res, err := c.Multi(ctx, op)
		wantErr(t, "multi with "+op.(*zksim.CreateOp).Mode.String(), err, zksim.ErrUnimplemented)
		if res != nil {
			t.Fatalf("results %v", res)
		}
		ok, _, err := c.Exists(ctx, op.OpPath())
		must(t, "exists", err)
		if ok {
			t.Fatalf("%s was created", op.OpPath())
		}
	}
	_, err := c.Multi(ctx, nil)
	wantErr(t, "multi with a nil op", err, zksim.ErrBadArguments)
	res, err := c.Multi(ctx)
	if err != nil || len(res) != 0 {
		t.Fatalf("empty multi = %v, %v", res, err)
	}
}
