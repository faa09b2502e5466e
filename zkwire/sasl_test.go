package zkwire_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/digestmd5"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zktest"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// saslOptions configure SASL users (one with a password that needs
// quoting in a JAAS file) and a superDigest.
func saslOptions() zkmem.Options {
	return zkmem.Options{
		SASLUsers:   map[string]string{"bob": "bobpw", "carol": `pa"ss\word`},
		SuperDigest: zksim.DigestID("super", "sekret"),
	}
}

// saslBackends are the wire server and a real ZooKeeper 3.8, each with
// opts (for the real one, the JAAS file and properties they imply).
func saslBackends(opts zkmem.Options) []struct {
	name string
	addr func(t *testing.T) string
} {
	return []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"wire", func(t *testing.T) string { return zkwire.NewTestServer(t, zkwire.WithZKOptions(opts)).Addr() }},
		{"real", func(t *testing.T) string {
			srvOpts, err := zktest.ServerOptions(opts)
			if err != nil {
				t.Fatal(err)
			}
			return zkserver.Start(t, srvOpts...).Addr()
		}},
	}
}

// rawReply reads frames up to the reply to xid and returns its header and
// the bytes of its body.
func (r *raw) rawReply(xid int32) (jute.ReplyHeader, []byte) {
	r.t.Helper()
	for {
		b, err := r.readFrame()
		if err != nil {
			r.t.Fatalf("reply to xid %d: %v", xid, err)
		}
		d := jute.NewDecoder(b)
		var h jute.ReplyHeader
		h.Decode(d)
		if h.Xid == xid {
			return h, b[16:]
		}
	}
}

var (
	errNoAuth     = int32(zksim.CodeOf(zksim.ErrNoAuth))
	errInvalidACL = int32(zksim.CodeOf(zksim.ErrInvalidACL))
)

var saslChallenge = regexp.MustCompile(`^realm="zk-sasl-md5",nonce="[A-Za-z0-9+/]{40}",charset=utf-8,algorithm=md5-sess$`)

// saslLogin runs a DIGEST-MD5 exchange (xids 1, 2) and returns the header
// and body of the reply to the response.
func (r *raw) saslLogin(user, password string) (jute.ReplyHeader, []byte) {
	r.t.Helper()
	c := digestmd5.NewClient(user, password, []byte("5959000134907941"))
	first, _ := c.Step(nil)
	r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpSasl}, &jute.SASLToken{Token: first})
	h, body := r.rawReply(1)
	var ch jute.SASLToken
	if err := jute.Unmarshal(body, &ch); err != nil || h.Err != 0 || h.Zxid != 0 || !saslChallenge.Match(ch.Token) {
		r.t.Fatalf("challenge %+v %q %v", h, ch.Token, err)
	}
	resp, err := c.Step(ch.Token)
	if err != nil {
		r.t.Fatal(err)
	}
	r.sendFrame(&jute.RequestHeader{Xid: 2, Type: jute.OpSasl}, &jute.SASLToken{Token: resp})
	h, body = r.rawReply(2)
	if h.Err == 0 {
		var rsp jute.SASLToken
		if err := jute.Unmarshal(body, &rsp); err != nil {
			r.t.Fatal(err)
		}
		if _, err := c.Step(rsp.Token); err != nil || !c.Complete() {
			r.t.Fatalf("rspauth %q: %v", rsp.Token, err)
		}
	}
	return h, body
}

func (r *raw) saslWhoAmI(xid int32) []jute.ClientInfo {
	r.t.Helper()
	r.sendFrame(&jute.RequestHeader{Xid: xid, Type: jute.OpWhoAmI})
	h, d := r.reply(xid)
	var who jute.WhoAmIResponse
	who.Decode(d)
	if h.Err != 0 || d.Err() != nil {
		r.t.Fatalf("whoAmI %+v %v", h, d.Err())
	}
	return who.ClientInfo
}

func (r *raw) saslCall(xid, op int32, req jute.Record) (jute.ReplyHeader, *jute.Decoder) {
	r.t.Helper()
	r.sendFrame(&jute.RequestHeader{Xid: xid, Type: op}, req)
	return r.reply(xid)
}

func infos(pairs ...string) []jute.ClientInfo {
	var out []jute.ClientInfo
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, jute.ClientInfo{AuthScheme: pairs[i], User: pairs[i+1]})
	}
	return out
}

func equalInfos(a, b []jute.ClientInfo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSASLMatchesRealServer: DIGEST-MD5 over the SASL request, the
// identity it gives, the sasl ACL scheme and superDigest, on the wire
// server and on a real ZooKeeper given a JAAS file, byte for byte.
func TestSASLMatchesRealServer(t *testing.T) {
	for _, backend := range saslBackends(saslOptions()) {
		t.Run(backend.name, func(t *testing.T) {
			addr := backend.addr(t)
			t.Run("logins", func(t *testing.T) { saslLogins(t, addr) })
			t.Run("bad-tokens", func(t *testing.T) { saslBadTokens(t, addr) })
		})
	}
}

// saslLogins: right and wrong passwords, the identities, ACLs and
// superDigest.
func saslLogins(t *testing.T, addr string) {
	bobOnly := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "sasl", ID: "bob"}}}
	digestOnly := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "digest", ID: zksim.DigestID("u", "p")}}}

	// An anonymous session creates a node only bob may use, and one
	// only the digest user u may use.
	anon := dialRaw(t, addr)
	anon.connect(newSession)
	if h, _ := anon.saslCall(1, jute.OpCreate, &jute.CreateRequest{Path: "/bob", Data: []byte("b"), ACL: bobOnly}); h.Err != 0 {
		t.Fatalf("create with a sasl ACL: %+v", h)
	}
	if h, _ := anon.saslCall(2, jute.OpCreate, &jute.CreateRequest{Path: "/u", Data: []byte("u"), ACL: digestOnly}); h.Err != 0 {
		t.Fatalf("create with a digest ACL: %+v", h)
	}
	if h, _ := anon.saslCall(3, jute.OpGetData, &jute.PathWatchRequest{Path: "/bob"}); h.Err != errNoAuth {
		t.Fatalf("anonymous read of bob's node: %+v", h)
	}

	// bob's right password: sasl:bob, which reads bob's node (and
	// only that); whoAmI in the server's order.
	bob := dialRaw(t, addr)
	bob.connect(newSession)
	if h, body := bob.saslLogin("bob", "bobpw"); h.Err != 0 || h.Zxid != 0 {
		t.Fatalf("bob's login: %+v %q", h, body)
	}
	if got := bob.saslWhoAmI(3); !equalInfos(got, infos("sasl", "bob", "ip", "127.0.0.1")) {
		t.Errorf("whoAmI after bob's login: %+v", got)
	}
	h, d := bob.saslCall(4, jute.OpGetData, &jute.PathWatchRequest{Path: "/bob"})
	var data jute.GetDataResponse
	data.Decode(d)
	if h.Err != 0 || string(data.Data) != "b" {
		t.Fatalf("bob reads his node: %+v %q", h, data.Data)
	}
	if h, _ := bob.saslCall(5, jute.OpGetData, &jute.PathWatchRequest{Path: "/u"}); h.Err != errNoAuth {
		t.Fatalf("bob reads u's node: %+v", h)
	}
	// The "auth" scheme names bob's SASL identity.
	h, _ = bob.saslCall(6, jute.OpCreate, &jute.CreateRequest{Path: "/auth", ACL: []jute.ACL{{Perms: 1, ID: jute.ID{Scheme: "auth"}}}})
	if h.Err != 0 {
		t.Fatalf("create with the auth scheme: %+v", h)
	}
	h, d = bob.saslCall(7, jute.OpGetACL, &jute.PathRequest{Path: "/auth"})
	var acl jute.GetACLResponse
	acl.Decode(d)
	if h.Err != 0 || len(acl.ACL) != 1 || acl.ACL[0] != (jute.ACL{Perms: 1, ID: jute.ID{Scheme: "sasl", ID: "bob"}}) {
		t.Fatalf("the auth ACL: %+v %+v", h, acl.ACL)
	}
	// The exchange is over: another SASL request fails, and the
	// connection closes.
	bob.sendFrame(&jute.RequestHeader{Xid: 8, Type: jute.OpSasl}, &jute.SASLToken{Token: []byte{}})
	if h, body := bob.rawReply(8); h.Err != jute.ErrAuthFailed || h.Zxid != 0 || !bytes.Equal(body, []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Fatalf("a SASL request after the login: %+v %x", h, body)
	}
	bob.closed()

	// The identity belongs to the connection: the session resumed on
	// another has only its ip identity, until it authenticates again.
	first := dialRaw(t, addr)
	sess := first.connect(newSession)
	if h, body := first.saslLogin("bob", "bobpw"); h.Err != 0 {
		t.Fatalf("bob's login: %+v %q", h, body)
	}
	moved := dialRaw(t, addr)
	if resumed := moved.connect(jute.ConnectRequest{TimeOut: 30000, SessionID: sess.SessionID, Passwd: sess.Passwd}); resumed.SessionID != sess.SessionID {
		t.Fatalf("resume bob's session: %+v", resumed)
	}
	if got := moved.saslWhoAmI(3); !equalInfos(got, infos("ip", "127.0.0.1")) {
		t.Errorf("whoAmI of bob's session on a new connection: %+v", got)
	}
	if h, _ := moved.saslCall(4, jute.OpGetData, &jute.PathWatchRequest{Path: "/bob"}); h.Err != errNoAuth {
		t.Fatalf("bob's session on a new connection reads bob's node: %+v", h)
	}
	if h, body := moved.saslLogin("bob", "bobpw"); h.Err != 0 {
		t.Fatalf("bob's login on the new connection: %+v %q", h, body)
	}
	if h, _ := moved.saslCall(5, jute.OpGetData, &jute.PathWatchRequest{Path: "/bob"}); h.Err != 0 {
		t.Fatalf("bob's read after logging in again: %+v", h)
	}

	// A password that needs quoting in the JAAS file.
	carol := dialRaw(t, addr)
	carol.connect(newSession)
	if h, body := carol.saslLogin("carol", `pa"ss\word`); h.Err != 0 {
		t.Fatalf("carol's login: %+v %q", h, body)
	}

	// A wrong password, an unknown user: AuthFailed with a null
	// token, zxid 0, then the connection closes; the session
	// lives on.
	for _, login := range [][2]string{{"bob", "wrong"}, {"eve", "evepw"}} {
		bad := dialRaw(t, addr)
		sess := bad.connect(newSession)
		h, body := bad.saslLogin(login[0], login[1])
		if h.Err != jute.ErrAuthFailed || h.Zxid != 0 || !bytes.Equal(body, []byte{0xff, 0xff, 0xff, 0xff}) {
			t.Fatalf("%s's login with %q: %+v %x", login[0], login[1], h, body)
		}
		bad.closed()
		again := dialRaw(t, addr)
		if resumed := again.connect(jute.ConnectRequest{TimeOut: 30000, SessionID: sess.SessionID, Passwd: sess.Passwd}); resumed.SessionID != sess.SessionID {
			t.Fatalf("the session after a failed login: %+v", resumed)
		}
		if got := again.saslWhoAmI(1); !equalInfos(got, infos("ip", "127.0.0.1")) {
			t.Errorf("whoAmI after a failed login: %+v", got)
		}
	}

	// superDigest: addAuth digest super:sekret passes every ACL.
	root := dialRaw(t, addr)
	root.connect(newSession)
	if h, _ := root.saslCall(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:sekret")}); h.Err != 0 {
		t.Fatalf("addAuth super: %+v", h)
	}
	if got := root.saslWhoAmI(1); !equalInfos(got, infos("super", "", "digest", "super", "ip", "127.0.0.1")) {
		t.Errorf("whoAmI as super: %+v", got)
	}
	for i, p := range []string{"/bob", "/u"} {
		if h, _ := root.saslCall(int32(2+i), jute.OpSetData, &jute.SetDataRequest{Path: p, Data: []byte("s"), Version: -1}); h.Err != 0 {
			t.Fatalf("super writes %s: %+v", p, h)
		}
	}
	// Another password is an ordinary digest identity.
	other := dialRaw(t, addr)
	other.connect(newSession)
	if h, _ := other.saslCall(jute.XidAuth, jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:other")}); h.Err != 0 {
		t.Fatalf("addAuth super with another password: %+v", h)
	}
	if h, _ := other.saslCall(1, jute.OpGetData, &jute.PathWatchRequest{Path: "/u"}); h.Err != errNoAuth {
		t.Fatalf("super with another password reads u's node: %+v", h)
	}
}

// saslBadTokens: a null token, a token that does not decode, a response
// Java's provider throws a runtime exception on: the connection closes
// with no reply. A first token with content is answered with the
// challenge all the same.
func saslBadTokens(t *testing.T, addr string) {
	null := dialRaw(t, addr)
	null.connect(newSession)
	null.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpSasl}, &jute.SASLToken{})
	null.closed()

	short := dialRaw(t, addr)
	short.connect(newSession)
	short.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpSasl}, &jute.IntResponse{N: 10})
	short.closed()

	r := dialRaw(t, addr)
	r.connect(newSession)
	r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpSasl}, &jute.SASLToken{Token: []byte("qop=auth")})
	h, body := r.rawReply(1)
	var ch jute.SASLToken
	if err := jute.Unmarshal(body, &ch); err != nil || h.Err != 0 || !saslChallenge.Match(ch.Token) {
		t.Fatalf("challenge to a first token with content: %+v %q %v", h, ch.Token, err)
	}
	r.sendFrame(&jute.RequestHeader{Xid: 2, Type: jute.OpSasl}, &jute.SASLToken{Token: []byte(`username="bob",maxbuf=x`)})
	r.closed()
}

// TestSASLUnconfigured: a server without a JAAS file answers a SASL
// request OK with a null token and keeps the connection; sasl ACLs are
// invalid there.
func TestSASLUnconfigured(t *testing.T) {
	for _, backend := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"wire", func(t *testing.T) string { return zkwire.NewTestServer(t).Addr() }},
		{"real", func(t *testing.T) string { return zkserver.Shared(t).Addr() }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			r := dialRaw(t, backend.addr(t))
			r.connect(newSession)
			for xid := int32(1); xid <= 2; xid++ {
				r.sendFrame(&jute.RequestHeader{Xid: xid, Type: jute.OpSasl}, &jute.SASLToken{Token: []byte{}})
				if h, body := r.rawReply(xid); h.Err != 0 || h.Zxid != 0 || !bytes.Equal(body, []byte{0xff, 0xff, 0xff, 0xff}) {
					t.Fatalf("SASL request %d: %+v %x", xid, h, body)
				}
			}
			h, _ := r.saslCall(3, jute.OpCreate, &jute.CreateRequest{Path: "/sasl-unconfigured", ACL: []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "sasl", ID: "bob"}}}})
			if h.Err != errInvalidACL {
				t.Fatalf("create with a sasl ACL: %+v", h)
			}
		})
	}
}
