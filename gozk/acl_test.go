package gozk_test

import (
	"context"
	"slices"
	"testing"

	"github.com/zksim/zksim"
)

func TestDigestACLAndAddAuth(t *testing.T) {
	srv, owner, root := setup(t)
	ctx := context.Background()
	must(t, "owner auth", owner.AddAuth(ctx, "digest", []byte("alice:secret")))
	p := root + "/private"
	_, err := owner.Create(ctx, p, []byte("x"), zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
	must(t, "create with the creator's ACL", err)
	acl, st, err := owner.GetACL(ctx, p)
	must(t, "getACL", err)
	want := zksim.DigestACL(zksim.PermAll, "alice", "secret")
	if !slices.Equal(acl, want) || st.Aversion != 0 {
		t.Fatalf("ACL %v (aversion %d), want %v", acl, st.Aversion, want)
	}

	stranger := srv.Connect(t)
	_, _, err = stranger.Get(ctx, p)
	wantErr(t, "get without auth", err, zksim.ErrNoAuth)
	must(t, "stranger auth as bob", stranger.AddAuth(ctx, "digest", []byte("bob:pw")))
	_, err = stranger.Set(ctx, p, nil, -1)
	wantErr(t, "set as bob", err, zksim.ErrNoAuth)
	must(t, "stranger auth as alice", stranger.AddAuth(ctx, "digest", []byte("alice:secret")))
	_, err = stranger.Set(ctx, p, []byte("y"), -1)
	must(t, "set as alice", err)

	_, err = owner.SetACL(ctx, p, zksim.ReadACL(), 7)
	wantErr(t, "setACL with a wrong aversion", err, zksim.ErrBadVersion)
	st, err = owner.SetACL(ctx, p, zksim.ReadACL(), 0)
	must(t, "setACL", err)
	if st.Aversion != 1 {
		t.Fatalf("aversion after setACL = %d", st.Aversion)
	}
	_, err = owner.Set(ctx, p, nil, -1)
	wantErr(t, "set on a read-only node", err, zksim.ErrNoAuth)

	_, err = stranger.Create(ctx, root+"/noauth", nil, zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
	must(t, "creator ACL with digest auth", err)
	anonymous := srv.Connect(t)
	_, err = anonymous.Create(ctx, root+"/anon", nil, zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
	wantErr(t, "creator ACL without auth", err, zksim.ErrInvalidACL)
}

func TestAddAuthUnknownSchemeFails(t *testing.T) {
	srv, _, root := setup(t)
	c := srv.Connect(t)
	events := c.SessionEvents(t.Context())
	ctx := context.Background()
	wantErr(t, "addAuth", c.AddAuth(ctx, "no-such-scheme", []byte("x")), zksim.ErrAuthFailed)
	// The server drops the connection; the session survives it.
	waitState(t, events, zksim.StateDisconnected)
	waitState(t, events, zksim.StateConnected)
	_, _, err := c.Get(ctx, root)
	must(t, "get after the reconnect", err)
}
