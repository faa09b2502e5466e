package zkmem_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

func whoAmI(t *testing.T, sess *zkmem.Session) []zkmem.Identity {
	t.Helper()
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpWhoAmI})
	require.NoError(t, resp.Err)
	return resp.Identities
}

func addAuth(t *testing.T, sess *zkmem.Session, userPassword string) {
	t.Helper()
	require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: "digest", Auth: []byte(userPassword)}).Err)
}

func getData(sess *zkmem.Session, path string) error {
	return sess.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: path}).Err
}

// TestIPIdentityIsWrittenAsTheServerWritesIt: the ip identity of a session
// from each kind of address, as whoAmI reports it and as "ip" ACLs see it.
func TestIPIdentityIsWrittenAsTheServerWritesIt(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	admin, _ := open(t, srv, 10*time.Second)
	require.NoError(t, admin.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/only-127.0.0.2", TTL: -1,
		ACL: []zksim.ACL{{Perms: zksim.PermAll, Scheme: "ip", ID: "127.0.0.2"}}}).Err)
	for _, tc := range []struct {
		addr, id string
		reads    bool // may read /only-127.0.0.2
	}{
		{"127.0.0.2", "127.0.0.2", true},
		{"::ffff:127.0.0.2", "127.0.0.2", true}, // an IPv4-mapped address is its IPv4 address
		{"127.0.0.1", "127.0.0.1", false},
		{"::1", "0:0:0:0:0:0:0:1", false},
		{"2001:db8::ab:0", "2001:db8:0:0:0:0:ab:0", false},
		{"fe80::1%eth0", "fe80:0:0:0:0:0:0:1%eth0", false},
	} {
		sess, err := srv.OpenSession(10*time.Second, netip.MustParseAddr(tc.addr), &recorder{})
		require.NoError(t, err)
		require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: tc.id}}, whoAmI(t, sess), "from %s", tc.addr)
		// addAuth "ip" adds the connection's own address: nothing new.
		require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: "ip"}).Err)
		require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: tc.id}}, whoAmI(t, sess), "from %s after addAuth ip", tc.addr)
		if tc.reads {
			require.NoError(t, getData(sess, "/only-127.0.0.2"), "from %s", tc.addr)
		} else {
			require.ErrorIs(t, getData(sess, "/only-127.0.0.2"), zksim.ErrNoAuth, "from %s", tc.addr)
		}
		require.NoError(t, sess.Close())
	}
	_, err := srv.OpenSession(time.Second, netip.Addr{}, &recorder{})
	require.ErrorContains(t, err, "client address")
	_, err = srv.Connect(zkmem.WithClientAddr(netip.Addr{}))
	require.ErrorContains(t, err, "WithClientAddr")
}

// TestResumedSessionHasOnlyItsNewAddress: identities belong to the
// connection. A session resumed elsewhere has only ip (the new
// connection's address) until it sends addAuth again.
func TestResumedSessionHasOnlyItsNewAddress(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, err := srv.OpenSession(10*time.Second, netip.MustParseAddr("127.0.0.2"), &recorder{})
	require.NoError(t, err)
	addAuth(t, a, "u:p")
	require.NoError(t, a.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/d", TTL: -1, ACL: zksim.DigestACL(zksim.PermAll, "u", "p")}).Err)
	require.NoError(t, getData(a, "/d"))
	a.Detach()
	b, err := srv.ResumeSession(a.ID(), a.Password(), srv.LastZxid(), netip.MustParseAddr("127.0.0.3"), &recorder{})
	require.NoError(t, err)
	require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.3"}}, whoAmI(t, b))
	require.ErrorIs(t, getData(b, "/d"), zksim.ErrNoAuth)
	addAuth(t, b, "u:p")
	require.NoError(t, getData(b, "/d"))
}

// TestWrongPasswordClosesTheOwnersConnection: as on a 3.8 server, a
// connection asking for a live session closes the session's connection
// before its password is checked; the session lives on.
func TestWrongPasswordClosesTheOwnersConnection(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, rec := open(t, srv, 10*time.Second)
	bad := a.Password()
	bad[15] ^= 1
	_, err := srv.ResumeSession(a.ID(), bad, srv.LastZxid(), zkmem.DefaultClientAddr, &recorder{})
	require.ErrorIs(t, err, zksim.ErrSessionExpired)
	require.Equal(t, []string{"closed " + zksim.ErrConnectionLoss.Error()}, rec.take())
	require.ErrorIs(t, getData(a, "/"), zksim.ErrConnectionLoss, "the owner is detached")
	// Ahead of the server: refused before the session is looked at.
	again, err := srv.ResumeSession(a.ID(), a.Password(), srv.LastZxid(), zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	_, err = srv.ResumeSession(a.ID(), a.Password(), srv.LastZxid()+1, zkmem.DefaultClientAddr, &recorder{})
	require.ErrorIs(t, err, zkmem.ErrZxidAhead)
	require.NoError(t, getData(again, "/"), "a client ahead of the server leaves the owner alone")
	require.Equal(t, []string{fmt.Sprintf("reply getData / err=<nil> zxid=%d", srv.LastZxid())}, rec.take(), "and its connection")
}

// TestSessionPasswordsAreKeyedByTheServer: the password of a session is not
// a function of its id alone (ids are public: GET /sessions, cons, dump);
// two servers give the same first id different passwords unless given the
// same secret.
func TestSessionPasswordsAreKeyedByTheServer(t *testing.T) {
	var srvA *zkmem.Server
	first := func(secret []byte) *zkmem.Session {
		srv := zkmem.NewServer(zkmem.Options{})
		t.Cleanup(srv.Close)
		if secret != nil {
			srv.SetSessionSecret(secret)
		}
		if srvA == nil {
			srvA = srv
		}
		s, _ := open(t, srv, time.Second)
		return s
	}
	a, b := first(nil), first(nil)
	require.Equal(t, a.ID(), b.ID())
	require.Len(t, a.Password(), 16)
	require.NotEqual(t, a.Password(), b.Password())
	c, d := first([]byte("seed 1")), first([]byte("seed 1"))
	require.Equal(t, c.Password(), d.Password())
	require.NotEqual(t, c.Password(), first([]byte("seed 2")).Password())
	// b's password does not open a's session.
	_, err := srvA.ResumeSession(a.ID(), b.Password(), 0, zkmem.DefaultClientAddr, &recorder{})
	require.ErrorIs(t, err, zksim.ErrSessionExpired)
}

// TestConnSendsItsCredentialsAgainOnReconnect: the in-process Conn, as
// go-zookeeper, remembers each AddAuth that succeeded and sends it again
// when it reconnects; one whose reply was lost is not remembered, and its
// identity is gone with the connection that added it.
func TestConnSendsItsCredentialsAgainOnReconnect(t *testing.T) {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	c, err := srv.Connect(zkmem.WithClientAddr(netip.MustParseAddr("127.0.0.2")))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.AddAuth(ctx, "digest", []byte("u1:p")))
	_, err = c.Create(ctx, "/u1", nil, zksim.ModePersistent, zksim.DigestACL(zksim.PermAll, "u1", "p"))
	require.NoError(t, err)
	_, err = c.Create(ctx, "/u2", nil, zksim.ModePersistent, zksim.DigestACL(zksim.PermAll, "u2", "p"))
	require.NoError(t, err)
	_, err = c.Create(ctx, "/ip", nil, zksim.ModePersistent, []zksim.ACL{{Perms: zksim.PermAll, Scheme: "ip", ID: "127.0.0.2"}})
	require.NoError(t, err)

	ctl := srv.Control(c.SessionID())
	ctl.Disconnect()
	require.NoError(t, ctl.Reconnect())
	for _, p := range []string{"/u1", "/ip"} {
		_, _, err = c.Get(ctx, p)
		require.NoError(t, err, "%s after a reconnection", p)
	}

	// The server applies the second AddAuth but its reply is lost: the
	// Conn reconnects without it.
	ctl.LoseNextReply(zkmem.OpAddAuth)
	require.ErrorIs(t, c.AddAuth(ctx, "digest", []byte("u2:p")), zksim.ErrConnectionLoss)
	_, _, err = c.Get(ctx, "/u2")
	require.ErrorIs(t, err, zksim.ErrNoAuth, "an identity whose addAuth reply was lost")
	_, _, err = c.Get(ctx, "/u1")
	require.NoError(t, err)
	require.NoError(t, c.AddAuth(ctx, "digest", []byte("u2:p")))
	_, _, err = c.Get(ctx, "/u2")
	require.NoError(t, err)
}
