package zkmem_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/digestmd5"
	"github.com/zksim/zksim/zkmem"
)

var saslOpts = zkmem.Options{SASLUsers: map[string]string{"bob": "bobpw", "super": "superpw"}}

// saslLogin runs a DIGEST-MD5 exchange on sess and returns the reply to
// its last SASL request.
func saslLogin(t *testing.T, sess *zkmem.Session, user, password string) zkmem.Response {
	t.Helper()
	c := digestmd5.NewClient(user, password, []byte("OA6MHXh6VqTrRk"))
	var tok []byte
	var resp zkmem.Response
	for {
		out, err := c.Step(tok)
		require.NoError(t, err)
		if c.Complete() {
			return resp
		}
		resp = sess.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: out})
		if resp.Err != nil {
			return resp
		}
		tok = resp.Token
	}
}

func saslWhoAmI(t *testing.T, sess *zkmem.Session) []zkmem.Identity {
	t.Helper()
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpWhoAmI})
	require.NoError(t, resp.Err)
	return resp.Identities
}

func saslACL(name string) []zksim.ACL {
	return []zksim.ACL{{Perms: zksim.PermAll, Scheme: "sasl", ID: name}}
}

func TestSASLLogin(t *testing.T) {
	srv := zkmem.NewServer(saslOpts)
	t.Cleanup(srv.Close)
	bob, _ := open(t, srv, time.Minute)
	resp := saslLogin(t, bob, "bob", "bobpw")
	require.NoError(t, resp.Err)
	require.False(t, resp.Closed)
	require.Equal(t, []zkmem.Identity{{Scheme: "sasl", ID: "bob"}, {Scheme: "ip", ID: "127.0.0.1"}}, saslWhoAmI(t, bob),
		"in the server's order (checked against 3.8.0)")

	create := bob.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/b", Data: []byte("x"), ACL: saslACL("bob"), TTL: -1})
	require.NoError(t, create.Err)
	get := bob.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/b"})
	require.NoError(t, get.Err)
	require.Equal(t, []byte("x"), get.Data)

	other, _ := open(t, srv, time.Minute)
	require.ErrorIs(t, other.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/b"}).Err, zksim.ErrNoAuth)

	// The exchange is over: another SASL request fails and closes the
	// connection, the identity stays with the session until then.
	again := bob.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: []byte{}})
	require.ErrorIs(t, again.Err, zksim.ErrAuthFailed)
	require.True(t, again.Closed)

	// The SASL user "super" passes every sasl ACL, and no other.
	root, _ := open(t, srv, time.Minute)
	require.NoError(t, saslLogin(t, root, "super", "superpw").Err)
	require.NoError(t, root.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/b"}).Err)
	digestOnly := []zksim.ACL{{Perms: zksim.PermAll, Scheme: "digest", ID: zksim.DigestID("u", "p")}}
	require.NoError(t, other.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/d", ACL: digestOnly, TTL: -1}).Err)
	require.ErrorIs(t, root.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/d"}).Err, zksim.ErrNoAuth)
}

// A wrong password, an unknown user: AuthFailed, the connection closes,
// the session lives on and resumes without the identity.
func TestSASLRefused(t *testing.T) {
	srv := zkmem.NewServer(saslOpts)
	t.Cleanup(srv.Close)
	for _, login := range [][2]string{{"bob", "wrong"}, {"eve", "bobpw"}, {"eve", ""}} {
		sess, rec := open(t, srv, time.Minute)
		resp := saslLogin(t, sess, login[0], login[1])
		require.ErrorIs(t, resp.Err, zksim.ErrAuthFailed, "%v", login)
		require.True(t, resp.Closed)
		require.Nil(t, resp.Token)
		log := rec.take()
		require.Len(t, log, 2, "the challenge, then the failure: %q", log)
		require.Contains(t, log[1], "reply sasl  err="+zksim.ErrAuthFailed.Error()+" ")
		require.ErrorIs(t, sess.Do(&zkmem.Request{Op: zkmem.OpWhoAmI}).Err, zksim.ErrConnectionLoss)
		again, err := srv.ResumeSession(sess.ID(), sess.Password(), 0, zkmem.DefaultClientAddr, rec)
		require.NoError(t, err)
		require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.1"}}, saslWhoAmI(t, again))
	}
}

// A response Java's provider throws a runtime exception on closes the
// connection with no reply.
func TestSASLMalformed(t *testing.T) {
	srv := zkmem.NewServer(saslOpts)
	t.Cleanup(srv.Close)
	sess, rec := open(t, srv, time.Minute)
	require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: []byte{}}).Err)
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: []byte(`username="bob",maxbuf=x`)})
	require.ErrorIs(t, resp.Err, zksim.ErrConnectionLoss)
	require.True(t, resp.Closed)
	log := rec.take()
	require.Len(t, log, 1, "the challenge, and no reply to the response: %q", log)
	require.Contains(t, log[0], "reply sasl  err=<nil> ")
}

// Each connection has its own exchange: a session resumed on a new
// connection starts over.
func TestSASLPerConnection(t *testing.T) {
	srv := zkmem.NewServer(saslOpts)
	t.Cleanup(srv.Close)
	sess, rec := open(t, srv, time.Minute)
	first := sess.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: []byte{}})
	require.NoError(t, first.Err)
	require.Contains(t, string(first.Token), `realm="zk-sasl-md5",nonce="`)
	again, err := srv.ResumeSession(sess.ID(), sess.Password(), 0, zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	second := again.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: []byte("qop=auth")})
	require.NoError(t, second.Err, "a first token is answered with a challenge, whatever it holds")
	require.Contains(t, string(second.Token), `realm="zk-sasl-md5",nonce="`)
	require.NotEqual(t, first.Token, second.Token, "a new nonce")

	// The identity is the connection's too.
	third, err := srv.ResumeSession(sess.ID(), sess.Password(), 0, zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	require.NoError(t, saslLogin(t, third, "bob", "bobpw").Err)
	require.Equal(t, []zkmem.Identity{{Scheme: "sasl", ID: "bob"}, {Scheme: "ip", ID: "127.0.0.1"}}, saslWhoAmI(t, third))
	fourth, err := srv.ResumeSession(sess.ID(), sess.Password(), 0, zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.1"}}, saslWhoAmI(t, fourth))
}

// Without SASL users, as a server without a JAAS file: a SASL request is
// answered with no token and the connection stays; "sasl" ACLs are
// invalid.
func TestSASLUnconfigured(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	sess, _ := open(t, srv, time.Minute)
	for range 3 {
		resp := sess.Do(&zkmem.Request{Op: zkmem.OpSASL, Auth: []byte{}})
		require.NoError(t, resp.Err)
		require.Nil(t, resp.Token)
		require.False(t, resp.Closed)
	}
	require.ErrorIs(t, sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/s", ACL: saslACL("bob"), TTL: -1}).Err, zksim.ErrInvalidACL)
	require.Equal(t, []zkmem.Identity{{Scheme: "ip", ID: "127.0.0.1"}}, saslWhoAmI(t, sess))
}

// The ids the sasl scheme accepts (KerberosName's syntax), and the "auth"
// scheme's expansion to a SASL identity.
func TestSASLACLs(t *testing.T) {
	srv := zkmem.NewServer(saslOpts)
	t.Cleanup(srv.Close)
	sess, _ := open(t, srv, time.Minute)
	for id, valid := range map[string]bool{
		"bob": true, "": true, "a/b": true, "a/b/c": true, "svc/host@REALM": true, "a@R": true, "@": true,
		"a@b@c": false, "a/b/c@R": false, "a@R/x": false,
	} {
		err := sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/v", ACL: saslACL(id), TTL: -1}).Err
		if valid {
			require.NoError(t, err, "sasl:%s", id)
			require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpDelete, Path: "/v", Version: -1}).Err)
		} else {
			require.ErrorIs(t, err, zksim.ErrInvalidACL, "sasl:%s", id)
		}
	}
	authACL := []zksim.ACL{{Perms: zksim.PermRead, Scheme: "auth"}}
	require.ErrorIs(t, sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/a", ACL: authACL, TTL: -1}).Err, zksim.ErrInvalidACL)
	require.NoError(t, saslLogin(t, sess, "bob", "bobpw").Err)
	require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/a", ACL: authACL, TTL: -1}).Err)
	acl := sess.Do(&zkmem.Request{Op: zkmem.OpGetACL, Path: "/a"})
	require.NoError(t, acl.Err)
	require.Equal(t, []zksim.ACL{{Perms: zksim.PermRead, Scheme: "sasl", ID: "bob"}}, acl.ACL)
}

// superDigest: addAuth digest super:PASSWORD passes every ACL; another
// password does not.
func TestSuperDigest(t *testing.T) {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{SuperDigest: zksim.DigestID("super", "sekret")})
	t.Cleanup(srv.Close)
	owner, err := srv.Connect()
	require.NoError(t, err)
	require.NoError(t, owner.AddAuth(ctx, "digest", []byte("u:p")))
	_, err = owner.Create(ctx, "/locked", []byte("x"), zksim.ModePersistent, []zksim.ACL{{Perms: zksim.PermAll, Scheme: "digest", ID: zksim.DigestID("u", "p")}})
	require.NoError(t, err)

	for pw, pass := range map[string]bool{"sekret": true, "wrong": false} {
		c, err := srv.Connect()
		require.NoError(t, err)
		require.NoError(t, c.AddAuth(ctx, "digest", []byte("super:"+pw)))
		_, _, err = c.Get(ctx, "/locked")
		_, serr := c.Set(ctx, "/locked", []byte("y"), -1)
		_, aerr := c.SetACL(ctx, "/locked", zksim.OpenACL(), 5)
		if pass {
			require.NoError(t, err)
			require.NoError(t, serr)
			require.ErrorIs(t, aerr, zksim.ErrBadVersion, "ADMIN passes, then the version check")
		} else {
			require.ErrorIs(t, err, zksim.ErrNoAuth)
			require.ErrorIs(t, serr, zksim.ErrNoAuth)
			require.ErrorIs(t, aerr, zksim.ErrNoAuth)
		}
		c.Close()
	}

	// whoAmI lists super (no user), the digest, then ip, as 3.8.0 does.
	sess, _ := open(t, srv, time.Minute)
	require.NoError(t, sess.Do(&zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: "digest", Auth: []byte("super:sekret")}).Err)
	require.Equal(t, []zkmem.Identity{{Scheme: "super", ID: ""}, {Scheme: "digest", ID: "super"}, {Scheme: "ip", ID: "127.0.0.1"}}, saslWhoAmI(t, sess))
}

func TestOptionsCopySASLUsers(t *testing.T) {
	users := map[string]string{"bob": "bobpw"}
	srv := zkmem.NewServer(zkmem.Options{SASLUsers: users})
	t.Cleanup(srv.Close)
	users["eve"] = "evepw"
	got := srv.Options().SASLUsers
	require.Equal(t, map[string]string{"bob": "bobpw"}, got)
	got["mallory"] = "x"
	require.Equal(t, map[string]string{"bob": "bobpw"}, srv.Options().SASLUsers)
	require.Nil(t, zkmem.NewServer(zkmem.Options{}).Options().SASLUsers)
}
