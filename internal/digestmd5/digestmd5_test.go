package digestmd5

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// The RFC 2831 (section 4) example: the response and rspauth of an IMAP
// login.
func TestResponseValueRFC2831(t *testing.T) {
	nonce, cnonce := []byte("OA6MG9tEQGm2hh"), []byte("OA6MHXh6VqTrRk")
	got := responseValue("AUTHENTICATE", "imap/elwood.innosoft.com", "chris", "elwood.innosoft.com", "secret", nonce, cnonce, nil)
	if string(got) != "d388dad90d4bbd760a152321f2143af7" {
		t.Errorf("response %s", got)
	}
	got = responseValue("", "imap/elwood.innosoft.com", "chris", "elwood.innosoft.com", "secret", nonce, cnonce, nil)
	if string(got) != "ea40f60335c427b5527b84dbabcdfffd" {
		t.Errorf("rspauth %s", got)
	}
}

// An exchange recorded against ZooKeeper 3.8.0 (OpenJDK 17) with a JAAS
// Server section holding user_bob="bobpw", pure-sasl 0.5.1 as the client:
// the server's challenge, the client's response and the server's rspauth.
const (
	realNonce     = "uGl+F95EI0EVJJX0k3iV6Fm3dVODfAnpR4VPnuU2"
	realChallenge = `realm="zk-sasl-md5",nonce="` + realNonce + `",charset=utf-8,algorithm=md5-sess`
	realResponse  = `qop=auth,realm="zk-sasl-md5",username="bob",nonce="` + realNonce +
		`",cnonce="5959000134907941",nc=00000001,digest-uri="zookeeper/zk-sasl-md5",response=fc94c789e1229967cf92381b5a1dc119`
	realRspauth = "rspauth=5e6f4c2661584f52eefb09997d2f0e67"
)

func users(name string) (string, bool) {
	pw, ok := map[string]string{"bob": "bobpw", "jürgen": "grüße", "用户": "密码", "": "empty"}[name]
	return pw, ok
}

// fixedNonce is a Server whose nonce is realNonce.
func fixedNonce(t *testing.T) *Server {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(realNonce)
	if err != nil || len(raw) != 30 {
		t.Fatalf("nonce: %v, %d bytes", err, len(raw))
	}
	return NewServer(users, bytes.NewReader(raw))
}

func TestServerKnownAnswer(t *testing.T) {
	s := fixedNonce(t)
	ch, err := s.Step(nil)
	if err != nil || string(ch) != realChallenge {
		t.Fatalf("challenge %q, %v", ch, err)
	}
	if s.Complete() {
		t.Fatal("complete after the challenge")
	}
	rsp, err := s.Step([]byte(realResponse))
	if err != nil || string(rsp) != realRspauth {
		t.Fatalf("rspauth %q, %v", rsp, err)
	}
	if !s.Complete() || s.User() != "bob" {
		t.Fatalf("complete %v, user %q", s.Complete(), s.User())
	}
	// Nothing more is accepted on a finished exchange.
	if _, err := s.Step(nil); !errors.Is(err, ErrFailed) {
		t.Fatalf("a third token: %v", err)
	}
}

func TestClientKnownAnswer(t *testing.T) {
	c := NewClient("bob", "bobpw", []byte("5959000134907941"))
	if tok, err := c.Step(nil); err != nil || tok == nil || len(tok) != 0 {
		t.Fatalf("first token %q, %v", tok, err)
	}
	rsp, err := c.Step([]byte(realChallenge))
	if err != nil || !strings.Contains(string(rsp), ",response=fc94c789e1229967cf92381b5a1dc119,") {
		t.Fatalf("response %q, %v", rsp, err)
	}
	if _, err := c.Step([]byte(realRspauth[:len(realRspauth)-1] + "0")); !errors.Is(err, ErrFailed) {
		t.Fatalf("a forged rspauth: %v", err)
	}
	c = NewClient("bob", "bobpw", []byte("5959000134907941"))
	c.Step(nil)
	c.Step([]byte(realChallenge))
	if tok, err := c.Step([]byte(realRspauth)); err != nil || tok != nil || !c.Complete() {
		t.Fatalf("rspauth: %q, %v, complete %v", tok, err, c.Complete())
	}
}

// exchange runs c against s and returns the server's last error.
func exchange(c *Client, s *Server) error {
	var tok []byte
	for !c.Complete() {
		out, err := c.Step(tok)
		if err != nil {
			return err
		}
		if c.Complete() {
			break
		}
		if tok, err = s.Step(out); err != nil {
			return err
		}
	}
	return nil
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct{ user, pw string }{
		{"bob", "bobpw"}, {"jürgen", "grüße"}, {"用户", "密码"}, {"", "empty"},
	} {
		s := NewServer(users, strings.NewReader(strings.Repeat("n", 30)))
		if err := exchange(NewClient(tc.user, tc.pw, []byte("c")), s); err != nil || !s.Complete() || s.User() != tc.user {
			t.Errorf("%q: %v, complete %v, user %q", tc.user, err, s.Complete(), s.User())
		}
		s = NewServer(users, strings.NewReader(strings.Repeat("n", 30)))
		if err := exchange(NewClient(tc.user, tc.pw+"x", []byte("c")), s); !errors.Is(err, ErrFailed) || s.Complete() {
			t.Errorf("%q with a wrong password: %v, complete %v", tc.user, err, s.Complete())
		}
	}
}

// TestServerRejects: each change to the recorded response, and what Java's
// provider makes of it (checked against ZooKeeper 3.8.0 where marked).
func TestServerRejects(t *testing.T) {
	resp := func(old, new string) string { return strings.Replace(realResponse, old, new, 1) }
	for _, tc := range []struct {
		name, response string
		want           error // nil: accepted
	}{
		{"as recorded", realResponse, nil},
		{"nc is not read (checked)", resp("nc=00000001", "nc=zz"), nil},
		{"nonce-count 1 in hex", resp("nc=00000001", "nonce-count=+1"), nil},
		{"nonce-count 2", resp("nc=00000001", "nonce-count=2"), ErrFailed},
		{"nonce-count not hex", resp("nc=00000001", "nonce-count=zz"), ErrMalformed},
		{"maxbuf not a number (checked)", realResponse + ",maxbuf=abc", ErrMalformed},
		{"maxbuf", realResponse + ", maxbuf = 1024 ", nil},
		{"unknown directives ignored", "foo=bar,," + realResponse + ",auth-param=x", nil},
		{"wrong password", resp("fc94", "fc95"), ErrFailed},
		{"upper-case hex", resp("fc94c789e1229967cf92381b5a1dc119", "FC94C789E1229967CF92381B5A1DC119"), ErrFailed},
		{"unknown user", resp(`username="bob"`, `username="eve"`), ErrFailed},
		{"no username", resp(`username="bob",`, ""), ErrFailed},
		{"username twice (checked)", realResponse + `,username="x"`, ErrFailed},
		{"no realm", resp(`realm="zk-sasl-md5",`, ""), ErrFailed},
		{"another realm", resp(`realm="zk-sasl-md5"`, `realm="ZK-SASL-MD5"`), ErrFailed},
		{"another nonce", resp(`nonce="uGl+`, `nonce="uGl-`), ErrFailed},
		{"no cnonce", resp(`cnonce="5959000134907941",`, ""), ErrFailed},
		{"qop auth-int (checked)", resp("qop=auth", "qop=auth-int"), ErrFailed},
		{"qop unknown", resp("qop=auth", "qop=x"), ErrFailed},
		{"no digest-uri (checked)", resp(`,digest-uri="zookeeper/zk-sasl-md5"`, ""), ErrFailed},
		{"another digest-uri", resp(`zookeeper/zk-sasl-md5`, `zookeeper/localhost`), ErrFailed},
		{"no response", resp(",response=fc94c789e1229967cf92381b5a1dc119", ""), ErrFailed},
		{"charset UTF-8 (checked)", realResponse + ",charset=UTF-8", ErrFailed},
		{"charset utf-8", realResponse + ",charset=utf-8", nil},
		{"authzid changes the digest (checked)", realResponse + `,authzid="alice"`, ErrFailed},
		{"unterminated quote", resp(`username="bob"`, `username="bob`), ErrFailed},
		{"garbage after a quote", resp(`username="bob"`, `username="bob"x`), ErrFailed},
		{"too long", realResponse + "," + strings.Repeat("x", maxResponse), ErrFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixedNonce(t)
			if _, err := s.Step([]byte("an initial response is ignored (checked)")); err != nil {
				t.Fatal(err)
			}
			rsp, err := s.Step([]byte(tc.response))
			switch {
			case tc.want == nil && (err != nil || string(rsp) != realRspauth || s.User() != "bob"):
				t.Fatalf("got %q, %v, user %q; want the recorded rspauth", rsp, err, s.User())
			case tc.want != nil && (!errors.Is(err, tc.want) || rsp != nil || s.Complete()):
				t.Fatalf("got %q, %v, complete %v; want %v", rsp, err, s.Complete(), tc.want)
			}
			if _, err := s.Step([]byte(realResponse)); !errors.Is(err, ErrFailed) {
				t.Fatalf("a second response after the exchange: %v", err)
			}
		})
	}
}

// The digest-uri is compared without regard to case, and the client's
// spelling is what the digest covers.
func TestDigestURICase(t *testing.T) {
	s := NewServer(users, strings.NewReader(strings.Repeat("n", 30)))
	ch, _ := s.Step(nil)
	d, _ := parseDirectives(ch, clientKeys, true)
	nonce, cnonce := d["nonce"][0], []byte("abc")
	uri := "ZooKeeper/ZK-SASL-MD5"
	r := `username="bob",realm="zk-sasl-md5",nonce="` + string(nonce) + `",cnonce="abc",digest-uri="` + uri +
		`",response=` + string(responseValue("AUTHENTICATE", uri, "bob", ServerName, "bobpw", nonce, cnonce, nil))
	rsp, err := s.Step([]byte(r))
	want := "rspauth=" + string(responseValue("", uri, "bob", ServerName, "bobpw", nonce, cnonce, nil))
	if err != nil || string(rsp) != want {
		t.Fatalf("got %q, %v, want %q", rsp, err, want)
	}
}

func TestQuoting(t *testing.T) {
	var b bytes.Buffer
	quote(&b, []byte("a\"b\\c\x01\td\x7f"))
	if got := b.String(); got != "a\\\"b\\\\c\\\x01\td\\\x7f" {
		t.Fatalf("quoted %q", got)
	}
	d, err := parseDirectives([]byte(`realm="a\"b",realm=c, nonce = "x y" ,qop=auth`), clientKeys, true)
	if err != nil || len(d["realm"]) != 2 || string(d["realm"][0]) != `a"b` || string(d["realm"][1]) != "c" ||
		string(d["nonce"][0]) != "x y" || string(d["qop"][0]) != "auth" {
		t.Fatalf("parsed %q, %v", d, err)
	}
	for _, bad := range []string{`=x`, `a b=c`, `a="b`, `a="b"c`, `a=`, `a=1,a=2`, `b,c=1`} {
		if d, err := parseDirectives([]byte(bad), []string{"a"}, false); !errors.Is(err, ErrFailed) {
			t.Errorf("%q parsed to %q", bad, d)
		}
	}
}

func TestLatin1OrUTF8(t *testing.T) {
	for in, want := range map[string]string{
		"bob":    "bob",
		"jürgen": "j\xfcrgen",
		"€uro":   "€uro",
		"a\xffb": "a\uFFFDb",
	} {
		if got := string(latin1OrUTF8(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
