package zkwire_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/gozk"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// The "ip" identity, cell by cell, on zkmem in-process, on the wire server
// and on a real ZooKeeper 3.8: clients from 127.0.0.1, 127.0.0.2 and ::1,
// nodes under "ip" ACLs, and four operations that each need a permission.

var (
	v4Client    = netip.MustParseAddr("127.0.0.1")
	v4Other     = netip.MustParseAddr("127.0.0.2")
	v6Client    = netip.MustParseAddr("::1")
	cellClients = []netip.Addr{v4Client, v4Other, v6Client}
	cellExprs   = []string{"127.0.0.1", "127.0.0.1/32", "127.0.0.0/31", "127.0.0.2", "127.0.0.0/8", "10.1.2.3/0"}
	cellOps     = []string{"read", "write", "setACL", "delete-in-multi"}
)

// cellAllowed is what a ZooKeeper 3.8 server allows (checked on the real
// one by TestIPIdentityCells): a client's address against an ACL's
// expression, masked to its bits. The server parses only IPv4 (its IPv6
// parser is a TODO in IPAuthenticationProvider), so a client from ::1,
// whose identity is "0:0:0:0:0:0:0:1", matches no expression, not even
// "10.1.2.3/0".
var cellAllowed = map[netip.Addr][]bool{
	v4Client: {true, true, true, false, true, true},
	v4Other:  {false, false, false, true, true, true},
	v6Client: {false, false, false, false, false, false},
}

// identityBackend opens sessions from a given client address.
type identityBackend struct {
	name string
	// connect opens a session from addr, closed when the test ends.
	connect func(t *testing.T, from netip.Addr) zksim.Conn
	// whoAmI opens a session from addr and returns its whoAmI answer;
	// with auth it first adds the digest identity "user:pw".
	whoAmI func(t *testing.T, from netip.Addr, auth string) []zkmem.Identity
}

func identityBackends(t *testing.T) []identityBackend {
	ctx := t.Context()
	gozkFrom := func(addrFor func(t *testing.T, from netip.Addr) string) func(t *testing.T, from netip.Addr) zksim.Conn {
		return func(t *testing.T, from netip.Addr) zksim.Conn {
			t.Helper()
			c, err := gozk.Connect(ctx, []string{addrFor(t, from)}, gozk.WithLocalAddr(from), gozk.WithSessionTimeout(10*time.Second))
			require.NoError(t, err, "connect from %v", from)
			t.Cleanup(func() { _ = c.Close() })
			return c
		}
	}
	rawWhoAmI := func(addrFor func(t *testing.T, from netip.Addr) string) func(t *testing.T, from netip.Addr, auth string) []zkmem.Identity {
		return func(t *testing.T, from netip.Addr, auth string) []zkmem.Identity {
			t.Helper()
			r := dialRawFrom(t, addrFor(t, from), from)
			r.connect(newSession)
			if auth != "" {
				r.addAuth(auth)
			}
			return r.whoAmI(1)
		}
	}

	mem := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(mem.Close)

	wire := zkwire.NewTestServer(t)
	ln6, err := net.Listen("tcp", "[::1]:0")
	require.NoError(t, err, "loopback ::1")
	served := make(chan error, 1)
	go func() { served <- wire.Serve(ln6) }()
	t.Cleanup(func() {
		wire.Close()
		require.ErrorIs(t, <-served, zkwire.ErrServerClosed)
	})
	wireAddr := func(_ *testing.T, from netip.Addr) string {
		if from.Is6() {
			return ln6.Addr().String()
		}
		return wire.Addr()
	}

	// A ZooKeeper server listens on one address: IPv4 clients reach the
	// shared server on 127.0.0.1, IPv6 ones a server of their own on ::1.
	var real6 *zkserver.Server
	realAddr := func(t *testing.T, from netip.Addr) string {
		if !from.Is6() {
			return zkserver.Shared(t).Addr()
		}
		if real6 == nil {
			real6 = zkserver.Start(t, zkserver.WithClientPortAddress("::1"))
		}
		return real6.Addr()
	}

	return []identityBackend{
		{
			name: "zkmem",
			connect: func(t *testing.T, from netip.Addr) zksim.Conn {
				c, err := mem.Connect(zkmem.WithClientAddr(from))
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
				return c
			},
			whoAmI: func(t *testing.T, from netip.Addr, auth string) []zkmem.Identity {
				s, err := mem.OpenSession(10*time.Second, from, discardSink{})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				if auth != "" {
					require.NoError(t, s.Do(&zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: "digest", Auth: []byte(auth)}).Err)
				}
				return s.Do(&zkmem.Request{Op: zkmem.OpWhoAmI}).Identities
			},
		},
		{name: "zkwire", connect: gozkFrom(wireAddr), whoAmI: rawWhoAmI(wireAddr)},
		{name: "real", connect: gozkFrom(realAddr), whoAmI: rawWhoAmI(realAddr)},
	}
}

type discardSink struct{}

func (discardSink) Reply(*zkmem.Request, *zkmem.Response) {}
func (discardSink) Event(zksim.Event, int64)              {}
func (discardSink) Closed(error)                          {}

// TestIPIdentityCells checks, on every backend, which of read, write,
// setACL and a delete inside a multi a client without other identities may
// do on nodes whose ACL grants everything to one "ip" expression (and to a
// digest identity that sets the nodes up), from 127.0.0.1, 127.0.0.2 and
// ::1. It compares the whole table with cellAllowed. The real server needs
// CI=true to be required.
func TestIPIdentityCells(t *testing.T) {
	want := make(map[string]string)
	for _, from := range cellClients {
		for i, expr := range cellExprs {
			for _, op := range cellOps {
				want[fmt.Sprintf("%v %s %s", from, expr, op)] = map[bool]string{true: "ok", false: "NoAuth"}[cellAllowed[from][i]]
			}
		}
	}
	for _, b := range identityBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			got := make(map[string]string)
			for _, from := range cellClients {
				runCells(t, b, from, got)
			}
			require.Equal(t, want, got)
		})
	}
}

// runCells sets up a node per expression from an administrator session
// at from, then runs every operation from a client session at from, with
// no identity but its address, and writes each outcome into got.
func runCells(t *testing.T, b identityBackend, from netip.Addr, got map[string]string) {
	t.Helper()
	ctx := t.Context()
	admin := b.connect(t, from)
	require.NoError(t, admin.AddAuth(ctx, "digest", []byte("admin:secret")))
	root := fmt.Sprintf("/ip-cells-%d", time.Now().UnixNano())
	_, err := admin.Create(ctx, root, nil, zksim.ModePersistent, zksim.OpenACL())
	require.NoError(t, err)
	client := b.connect(t, from)
	for i, expr := range cellExprs {
		node := fmt.Sprintf("%s/e%d", root, i)
		acl := append([]zksim.ACL{{Perms: zksim.PermAll, Scheme: "ip", ID: expr}}, zksim.DigestACL(zksim.PermAll, "admin", "secret")...)
		_, err := admin.Create(ctx, node, []byte("x"), zksim.ModePersistent, acl)
		require.NoError(t, err, "create %s under ip:%s", node, expr)
		child := node + "/c"
		_, err = admin.Create(ctx, child, nil, zksim.ModePersistent, zksim.OpenACL())
		require.NoError(t, err)
		for _, op := range cellOps {
			var err error
			switch op {
			case "read":
				_, _, err = client.Get(ctx, node)
			case "write":
				_, err = client.Set(ctx, node, []byte("y"), -1)
			case "setACL":
				_, err = client.SetACL(ctx, node, acl, -1)
			case "delete-in-multi":
				_, err = client.Multi(ctx, &zksim.DeleteOp{Path: child, Version: -1})
			}
			got[fmt.Sprintf("%v %s %s", from, expr, op)] = outcome(err)
		}
	}
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, zksim.ErrNoAuth):
		return "NoAuth"
	}
	return err.Error()
}

// TestWhoAmIIsThePeerAddress checks whoAmI from 127.0.0.1, 127.0.0.2 and
// ::1, with and without a digest identity: the ip identity is the client's
// address as the server writes it, and the identities come in the server's
// order.
func TestWhoAmIIsThePeerAddress(t *testing.T) {
	for _, b := range identityBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.2"}}, b.whoAmI(t, v4Other, ""))
			require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "0:0:0:0:0:0:0:1"}}, b.whoAmI(t, v6Client, ""))
			require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.2"}, {Scheme: "digest", ID: "u"}}, b.whoAmI(t, v4Other, "u:p"))
			require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "0:0:0:0:0:0:0:1"}, {Scheme: "digest", ID: "u"}}, b.whoAmI(t, v6Client, "u:p"))
			require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "u"}}, b.whoAmI(t, v4Client, "u:p"))
			// The server lists them in its hash set's order, not in the
			// order they were added.
			require.Equal(t, []zkmem.Identity{{Scheme: "digest", ID: "b"}, {Scheme: "ip", ID: "127.0.0.1"}}, b.whoAmI(t, v4Client, "b:pw"))
		})
	}
}

// dialRawFrom is dialRaw from a given local address.
func dialRawFrom(t *testing.T, addr string, from netip.Addr) *raw {
	t.Helper()
	d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0)), Timeout: 10 * time.Second}
	nc, err := d.DialContext(context.Background(), "tcp", addr)
	require.NoError(t, err, "dial %s from %v", addr, from)
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &raw{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// addAuth sends a digest addAuth and requires it to succeed.
func (r *raw) addAuth(userPassword string) {
	r.t.Helper()
	r.sendFrame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "digest", Auth: []byte(userPassword)})
	h, _ := r.reply(jute.XidAuth)
	require.Equal(r.t, int32(0), h.Err, "addAuth")
}

// whoAmI asks who the session is, as identities in the server's order.
func (r *raw) whoAmI(xid int32) []zkmem.Identity {
	r.t.Helper()
	r.sendFrame(&jute.RequestHeader{Xid: xid, Type: jute.OpWhoAmI})
	h, d := r.reply(xid)
	require.Equal(r.t, int32(0), h.Err, "whoAmI")
	var who jute.WhoAmIResponse
	who.Decode(d)
	out := make([]zkmem.Identity, len(who.ClientInfo))
	for i, ci := range who.ClientInfo {
		out[i] = zkmem.Identity{Scheme: ci.AuthScheme, ID: ci.User}
	}
	return out
}

// TestResumedSessionHasOnlyItsAddress checks, on the wire server and a real
// ZooKeeper 3.8, with raw frames from 127.0.0.2: a session resumed on a new
// connection has lost the digest identity its old connection added (NoAuth
// on a digest-only node, whoAmI says only ip) until it sends addAuth
// again; and a connection that asks for the session with a wrong password
// is refused and closes the owner's connection too, the session living on.
func TestResumedSessionHasOnlyItsAddress(t *testing.T) {
	for _, backend := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"zkwire", func(t *testing.T) string { return zkwire.NewTestServer(t).Addr() }},
		{"real", func(t *testing.T) string { return zkserver.Shared(t).Addr() }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			addr := backend.addr(t)
			path := fmt.Sprintf("/resume-%d", time.Now().UnixNano())
			acl := []jute.ACL{{Perms: zksim.PermAll, ID: jute.ID{Scheme: "digest", ID: zksim.DigestID("u", "p")}}}
			getData := func(r *raw, xid int32) int32 {
				t.Helper()
				r.sendFrame(&jute.RequestHeader{Xid: xid, Type: jute.OpGetData}, &jute.PathWatchRequest{Path: path})
				h, _ := r.reply(xid)
				return h.Err
			}

			first := dialRawFrom(t, addr, v4Other)
			resp := first.connect(newSession)
			first.addAuth("u:p")
			first.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpCreate}, &jute.CreateRequest{Path: path, Data: []byte("d"), ACL: acl})
			created, _ := first.reply(1)
			require.Equal(t, int32(0), created.Err, "create")
			require.Equal(t, int32(0), getData(first, 2), "getData with the digest identity")

			// Resumed elsewhere without addAuth: only the address.
			second := dialRawFrom(t, addr, v4Other)
			again := second.connect(jute.ConnectRequest{TimeOut: resp.TimeOut, SessionID: resp.SessionID, Passwd: resp.Passwd, LastZxidSeen: created.Zxid})
			require.Equal(t, resp.SessionID, again.SessionID, "resumed")
			first.closed()
			require.Equal(t, int32(zksim.ErrNoAuth.Code), getData(second, 3), "getData on the resumed session before addAuth")
			require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.2"}}, second.whoAmI(4))
			second.addAuth("u:p")
			require.Equal(t, int32(0), getData(second, 5), "getData after addAuth again")

			// A wrong password while the owner is connected: refused, and
			// the owner's connection closes; the session lives on.
			bad := dialRawFrom(t, addr, v4Client)
			pw := append([]byte(nil), resp.Passwd...)
			pw[0] ^= 0xff
			refused := bad.connect(jute.ConnectRequest{TimeOut: resp.TimeOut, SessionID: resp.SessionID, Passwd: pw})
			require.Equal(t, int64(0), refused.SessionID, "wrong password refused")
			bad.closed()
			second.closed()
			third := dialRawFrom(t, addr, v4Other)
			back := third.connect(jute.ConnectRequest{TimeOut: resp.TimeOut, SessionID: resp.SessionID, Passwd: resp.Passwd, LastZxidSeen: created.Zxid})
			require.Equal(t, resp.SessionID, back.SessionID, "the session outlives the wrong password")
			require.Equal(t, int32(zksim.ErrNoAuth.Code), getData(third, 6), "getData on the session resumed again")
			third.sendFrame(&jute.RequestHeader{Xid: 7, Type: jute.OpCloseSession})
			h, _ := third.reply(7)
			require.Equal(t, int32(0), h.Err, "closeSession")
		})
	}
}
