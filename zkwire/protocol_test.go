package zkwire_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// raw is a hand-driven client connection.
type raw struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *raw {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &raw{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *raw) send(b []byte) {
	r.t.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *raw) sendFrame(recs ...jute.Record) { r.t.Helper(); r.send(jute.AppendFrame(nil, recs...)) }

func (r *raw) readFrame() ([]byte, error) { return jute.ReadFrame(r.br, 1<<20, nil) }

// closed asserts that the server closes the connection without sending
// anything more.
func (r *raw) closed() {
	r.t.Helper()
	b, err := io.ReadAll(r.br)
	if err != nil {
		r.t.Fatalf("waiting for close: %v", err)
	}
	if len(b) != 0 {
		r.t.Fatalf("server sent %d more bytes before closing: %x", len(b), b)
	}
}

func (r *raw) connect(req jute.ConnectRequest) jute.ConnectResponse {
	r.t.Helper()
	r.sendFrame(&req)
	b, err := r.readFrame()
	if err != nil {
		r.t.Fatalf("connect response: %v", err)
	}
	var resp jute.ConnectResponse
	if err := jute.Unmarshal(b, &resp); err != nil {
		r.t.Fatalf("decode connect response: %v", err)
	}
	return resp
}

func (r *raw) reply(xid int32) (jute.ReplyHeader, *jute.Decoder) {
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
			return h, d
		}
	}
}

var newSession = jute.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16), HasReadOnly: true}

func TestHandshake(t *testing.T) {
	srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{TickTime: 100 * time.Millisecond}))
	r := dialRaw(t, srv.Addr())
	resp := r.connect(newSession)
	// Negotiated: 30s clamped to 20 ticks.
	if resp.TimeOut != 2000 || resp.SessionID == 0 || len(resp.Passwd) != 16 || !resp.HasReadOnly || resp.ReadOnly {
		t.Fatalf("connect response %+v", resp)
	}
	r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpCreate},
		&jute.CreateRequest{Path: "/x", ACL: []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}})
	h, _ := r.reply(1)
	if h.Err != 0 || h.Zxid <= 0 {
		t.Fatalf("create reply %+v", h)
	}
	r.sendFrame(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})
	if ph, _ := r.reply(jute.XidPing); ph.Zxid != h.Zxid {
		t.Fatalf("ping reply zxid %#x, want the last zxid %#x", ph.Zxid, h.Zxid)
	}

	// An old client (no readOnly flag) gets no flag back.
	old := dialRaw(t, srv.Addr())
	oresp := old.connect(jute.ConnectRequest{TimeOut: 1, Passwd: make([]byte, 16)})
	if oresp.HasReadOnly || oresp.TimeOut != 200 {
		t.Fatalf("old client's response %+v", oresp)
	}

	// Resume with the right password from a second connection: the first
	// connection is closed.
	again := dialRaw(t, srv.Addr())
	ar := again.connect(jute.ConnectRequest{TimeOut: 1000, SessionID: resp.SessionID, Passwd: resp.Passwd, LastZxidSeen: h.Zxid, HasReadOnly: true})
	// zkmem keeps the timeout negotiated when the session opened (a real
	// server negotiates the resumed session's anew).
	if ar.SessionID != resp.SessionID || !bytes.Equal(ar.Passwd, resp.Passwd) || ar.TimeOut != resp.TimeOut {
		t.Fatalf("resume response %+v", ar)
	}
	r.closed()

	// A wrong password: session expired (timeout 0, id 0, 16 zero bytes),
	// then the connection closes.
	bad := dialRaw(t, srv.Addr())
	pw := append([]byte(nil), resp.Passwd...)
	pw[0] ^= 1
	br := bad.connect(jute.ConnectRequest{TimeOut: 1000, SessionID: resp.SessionID, Passwd: pw, HasReadOnly: true})
	if br.TimeOut != 0 || br.SessionID != 0 || !bytes.Equal(br.Passwd, make([]byte, 16)) {
		t.Fatalf("wrong password response %+v", br)
	}
	bad.closed()
	// As on a real server, asking for the session closed its connection
	// before the password was checked; the session lives on.
	again.closed()
	again = dialRaw(t, srv.Addr())
	if ar := again.connect(jute.ConnectRequest{TimeOut: 1000, SessionID: resp.SessionID, Passwd: resp.Passwd, LastZxidSeen: h.Zxid, HasReadOnly: true}); ar.SessionID != resp.SessionID {
		t.Fatalf("resume after a wrong password %+v", ar)
	}

	// A client that has seen a zxid the server has not: closed unanswered.
	ahead := dialRaw(t, srv.Addr())
	ahead.sendFrame(&jute.ConnectRequest{TimeOut: 1000, LastZxidSeen: h.Zxid + 100, Passwd: make([]byte, 16)})
	ahead.closed()

	// closeSession: answered, then the connection closes and the session
	// is gone for good.
	again.sendFrame(&jute.RequestHeader{Xid: 2, Type: jute.OpCloseSession})
	if ch, _ := again.reply(2); ch.Err != 0 {
		t.Fatalf("closeSession reply %+v", ch)
	}
	again.closed()
	gone := dialRaw(t, srv.Addr())
	if gr := gone.connect(jute.ConnectRequest{TimeOut: 1000, SessionID: resp.SessionID, Passwd: resp.Passwd}); gr.SessionID != 0 {
		t.Fatalf("resume of a closed session: %+v", gr)
	}
}

// TestBadInput: what a real server closes the connection on, the wire
// server closes it on too, and keeps serving others.
func TestBadInput(t *testing.T) {
	srv := zkwire.NewTestServer(t, zkwire.WithOptions(zkwire.Options{SessionlessTimeout: 100 * time.Millisecond, MaxBuffer: 4096}))
	be32 := func(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
	for _, tc := range []struct {
		name      string
		handshake bool
		in        []byte
	}{
		{"frame before handshake", false, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpGetData}, &jute.PathWatchRequest{Path: "/"})},
		{"negative length", false, be32(-7)},
		{"length over maxbuffer", false, be32(4097)},
		{"garbage length", false, []byte("\xde\xad\xbe\xef")},
		{"truncated connect", false, be32(40)[:4:4]},
		{"silent client", false, nil},
		{"truncated header", true, append(be32(3), 0, 0, 1)},
		{"length over maxbuffer after handshake", true, be32(1 << 30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, srv.Addr())
			if tc.handshake {
				r.connect(newSession)
			}
			r.send(tc.in)
			if tc.name == "truncated connect" {
				r.send([]byte{0, 0, 0}) // fewer than the 40 bytes promised
				r.nc.(*net.TCPConn).CloseWrite()
			}
			r.closed()
		})
	}
	// The server still serves.
	r := dialRaw(t, srv.Addr())
	r.connect(newSession)
}

// TestUnknownOp: answered Unimplemented with zxid -1, then closed.
func TestUnknownOp(t *testing.T) {
	srv := zkwire.NewTestServer(t)
	for _, op := range []int32{42, jute.OpCreateSession, jute.OpNotification} {
		r := dialRaw(t, srv.Addr())
		r.connect(newSession)
		r.sendFrame(&jute.RequestHeader{Xid: 5, Type: op})
		h, _ := r.reply(5)
		if h.Err != jute.ErrUnimplemented || h.Zxid != -1 {
			t.Errorf("op %d: reply %+v", op, h)
		}
		r.closed()
	}
}

// TestMalformedBody: a body that does not decode is a MarshallingError
// reply; the connection stays.
func TestMalformedBody(t *testing.T) {
	srv := zkwire.NewTestServer(t)
	r := dialRaw(t, srv.Addr())
	r.connect(newSession)
	r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpGetData}, &jute.IntResponse{N: 1000})
	if h, _ := r.reply(1); h.Err != jute.ErrMarshallingError {
		t.Fatalf("reply %+v", h)
	}
	// A multi mixing a read into writes.
	r.sendFrame(&jute.RequestHeader{Xid: 2, Type: jute.OpMulti}, &jute.MultiRequest{Ops: []jute.MultiOp{{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: "/"}}}})
	if h, _ := r.reply(2); h.Err != jute.ErrMarshallingError {
		t.Fatalf("mixed multi reply %+v", h)
	}
	r.sendFrame(&jute.RequestHeader{Xid: 3, Type: jute.OpMultiRead}, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: "/zookeeper"}},
		{Type: jute.OpGetChildren, Rec: &jute.PathWatchRequest{Path: "/missing"}},
	}})
	h, d := r.reply(3)
	var mr jute.MultiResponse
	mr.Decode(d)
	if h.Err != 0 || d.Err() != nil || len(mr.Results) != 2 || mr.Results[0].Type != jute.OpGetData ||
		mr.Results[1].Type != jute.OpError || mr.Results[1].Err != jute.ErrNoNode {
		t.Fatalf("multiRead reply %+v %+v %v", h, mr, d.Err())
	}
}

// TestMultiCreate2: a container created in a multi answers with its Stat.
func TestMultiCreate2(t *testing.T) {
	srv := zkwire.NewTestServer(t)
	r := dialRaw(t, srv.Addr())
	r.connect(newSession)
	acl := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}
	r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpMulti}, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Rec: &jute.CreateRequest{Path: "/p", ACL: acl}},
		{Type: jute.OpCreateContainer, Rec: &jute.CreateRequest{Path: "/p/box", ACL: acl, Flags: 4}},
	}})
	h, d := r.reply(1)
	var mr jute.MultiResponse
	mr.Decode(d)
	if h.Err != 0 || d.Err() != nil || len(mr.Results) != 2 {
		t.Fatalf("multi reply %+v %+v %v", h, mr, d.Err())
	}
	if res := mr.Results[0]; res.Type != jute.OpCreate || res.Rec.(*jute.PathRequest).Path != "/p" {
		t.Errorf("create result %+v", res)
	}
	res := mr.Results[1]
	c2, ok := res.Rec.(*jute.Create2Response)
	if res.Type != jute.OpCreate2 || !ok || c2.Path != "/p/box" || c2.Stat.Czxid != h.Zxid || c2.Stat.Czxid == 0 {
		t.Errorf("container result %+v %+v, reply zxid %#x", res, c2, h.Zxid)
	}
}

// TestSilentSessionExpires: a client that completes the handshake and then
// says nothing for its session timeout is expired and closed.
func TestSilentSessionExpires(t *testing.T) {
	srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{TickTime: 50 * time.Millisecond}))
	r := dialRaw(t, srv.Addr())
	resp := r.connect(jute.ConnectRequest{TimeOut: 200, Passwd: make([]byte, 16)})
	r.closed()
	for _, id := range srv.SessionIDs() {
		if id == resp.SessionID {
			t.Fatalf("session %#x still alive", id)
		}
	}
}

func TestFourLetterWords(t *testing.T) {
	srv := zkwire.NewTestServer(t, zkwire.WithOptions(zkwire.Options{FourLetterWords: []string{"ruok", "srvr", "stat", "mntr", "cons", "dump", "envi", "conf"}}))
	c, _ := dial(t, srv.Addr(), 10*time.Second)
	if _, err := c.Create("/n", nil, 1, nil); err == nil {
		t.Fatal("create with a nil ACL succeeded")
	}
	word := func(w string) string {
		r := dialRaw(t, srv.Addr())
		r.send([]byte(w))
		b, err := io.ReadAll(r.br)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		return string(b)
	}
	for w, want := range map[string][]string{
		"ruok": {"imok"},
		"srvr": {"Zookeeper version: 3.8.0", "Latency min/avg/max: ", "Mode: standalone", "Node count: 4", "Connections: "},
		"stat": {"Clients:\n /127.0.0.1:", "Mode: standalone"},
		"mntr": {"zk_version\t3.8.0", "zk_server_state\tstandalone", "zk_znode_count\t4", "zk_num_alive_connections\t"},
		"cons": {",sid=0x"},
		"dump": {"SessionTracker dump:", "Connections dump:"},
		"envi": {"Environment:\nzookeeper.version=3.8.0"},
		"conf": {"clientPort=" + srv.Addr()[strings.LastIndexByte(srv.Addr(), ':')+1:], "tickTime=2000", "maxSessionTimeout=40000"},
		"wchs": {"wchs is not executed because it is not in the whitelist.\n"},
		"isro": {"isro is not executed because it is not in the whitelist.\n"},
	} {
		got := word(w)
		for _, s := range want {
			if !strings.Contains(got, s) {
				t.Errorf("%s answered %q, want it to contain %q", w, got, s)
			}
		}
	}
	// Not a known word: a frame length, far over maxbuffer.
	if got := word("abcd"); got != "" {
		t.Errorf("abcd answered %q", got)
	}
}

func TestServeAfterClose(t *testing.T) {
	s := zkwire.New(zkmem.NewServer(zkmem.Options{}), zkwire.Options{})
	s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(ln); !errors.Is(err, zkwire.ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
	s.ZK().Close()
}
