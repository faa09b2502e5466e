package zkwire_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// TestWireRulesMatchRealServer runs the same hand-made exchanges against the
// wire server and a real ZooKeeper 3.8 and checks that each answers alike:
// the rules the wire server copies from the real server's source are
// checked against the real thing. Outside CI without ZooKeeper installed
// the real half skips; with CI=true it must run.
func TestWireRulesMatchRealServer(t *testing.T) {
	for _, backend := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"wire", func(t *testing.T) string { return zkwire.NewTestServer(t).Addr() }},
		{"real", func(t *testing.T) string { return zkserver.Shared(t).Addr() }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			addr := backend.addr(t)
			acl := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}

			r := dialRaw(t, addr)
			resp := r.connect(newSession)
			if resp.SessionID == 0 || len(resp.Passwd) != 16 || !resp.HasReadOnly || resp.ReadOnly {
				t.Fatalf("connect response %+v", resp)
			}

			// A watch, then the write that fires it: the notification
			// carries xid -1 and zxid -1, and comes before the reply.
			path := "/wire-rules-" + backend.name
			r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpExists}, &jute.PathWatchRequest{Path: path, Watch: true})
			if h, _ := r.reply(1); h.Err != jute.ErrNoNode {
				t.Fatalf("exists on a missing node: %+v", h)
			}
			r.sendFrame(&jute.RequestHeader{Xid: 2, Type: jute.OpCreate}, &jute.CreateRequest{Path: path, ACL: acl, Flags: 1})
			b, err := r.readFrame()
			if err != nil {
				t.Fatal(err)
			}
			d := jute.NewDecoder(b)
			var nh jute.ReplyHeader
			nh.Decode(d)
			var ev jute.WatcherEvent
			ev.Decode(d)
			if nh.Xid != jute.XidNotification || nh.Zxid != -1 || nh.Err != 0 || ev.Type != jute.EventNodeCreated || ev.State != jute.StateSyncConnected || ev.Path != path {
				t.Fatalf("notification %+v %+v", nh, ev)
			}
			created, _ := r.reply(2)
			if created.Err != 0 || created.Zxid <= 0 {
				t.Fatalf("create reply %+v", created)
			}

			// A ping's reply: xid -2, the last zxid.
			r.sendFrame(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})
			if h, _ := r.reply(jute.XidPing); h.Zxid != created.Zxid || h.Err != 0 {
				t.Fatalf("ping reply %+v, last zxid %#x", h, created.Zxid)
			}
			// addAuth's reply carries zxid 0.
			r.sendFrame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "digest", Auth: []byte("u:p")})
			if h, _ := r.reply(jute.XidAuth); h.Zxid != 0 || h.Err != 0 {
				t.Fatalf("auth reply %+v", h)
			}
			// whoAmI.
			r.sendFrame(&jute.RequestHeader{Xid: 3, Type: jute.OpWhoAmI})
			h, d := r.reply(3)
			var who jute.WhoAmIResponse
			who.Decode(d)
			if h.Err != 0 || len(who.ClientInfo) != 2 || !hasInfo(who, "ip", "127.0.0.1") || !hasInfo(who, "digest", "u") {
				t.Fatalf("whoAmI %+v %+v", h, who)
			}
			// A failed multi: header OK, every result an error.
			r.sendFrame(&jute.RequestHeader{Xid: 4, Type: jute.OpMulti}, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Type: jute.OpCheck, Rec: &jute.PathVersionRequest{Path: path, Version: 0}},
				{Type: jute.OpDelete, Rec: &jute.PathVersionRequest{Path: path + "/none", Version: -1}},
				{Type: jute.OpSetData, Rec: &jute.SetDataRequest{Path: path, Version: -1}},
			}})
			h, d = r.reply(4)
			var mr jute.MultiResponse
			mr.Decode(d)
			want := []int32{0, jute.ErrNoNode, jute.ErrRuntimeInconsistency}
			if h.Err != 0 || len(mr.Results) != 3 {
				t.Fatalf("failed multi %+v %+v", h, mr)
			}
			for i, res := range mr.Results {
				if res.Type != jute.OpError || res.Err != want[i] {
					t.Errorf("failed multi result %d: %+v, want error %d", i, res, want[i])
				}
			}

			// A second connection resumes the session; the first is closed.
			r2 := dialRaw(t, addr)
			r2resp := r2.connect(jute.ConnectRequest{TimeOut: resp.TimeOut, SessionID: resp.SessionID, Passwd: resp.Passwd, LastZxidSeen: created.Zxid, HasReadOnly: true})
			if r2resp.SessionID != resp.SessionID || !bytes.Equal(r2resp.Passwd, resp.Passwd) {
				t.Fatalf("resume %+v", r2resp)
			}
			r.closed()

			// An unknown op: Unimplemented with zxid -1, then the connection
			// closes. The session lives on.
			r2.sendFrame(&jute.RequestHeader{Xid: 5, Type: 42})
			if h, _ := r2.reply(5); h.Err != jute.ErrUnimplemented || h.Zxid != -1 {
				t.Fatalf("unknown op reply %+v", h)
			}
			r2.closed()

			// A wrong password: timeout 0, session 0, 16 zero bytes, closed.
			bad := dialRaw(t, addr)
			pw := append([]byte(nil), resp.Passwd...)
			pw[3] ^= 0xff
			br := bad.connect(jute.ConnectRequest{TimeOut: resp.TimeOut, SessionID: resp.SessionID, Passwd: pw, HasReadOnly: true})
			if br.TimeOut != 0 || br.SessionID != 0 || !bytes.Equal(br.Passwd, make([]byte, 16)) || !br.HasReadOnly {
				t.Fatalf("wrong password %+v", br)
			}
			bad.closed()

			// A client ahead of the server: closed without an answer.
			ahead := dialRaw(t, addr)
			ahead.sendFrame(&jute.ConnectRequest{TimeOut: 4000, LastZxidSeen: created.Zxid + 1000, Passwd: make([]byte, 16)})
			ahead.closed()

			// The session still there: resume it and close it.
			r3 := dialRaw(t, addr)
			r3.connect(jute.ConnectRequest{TimeOut: resp.TimeOut, SessionID: resp.SessionID, Passwd: resp.Passwd, HasReadOnly: true})
			r3.sendFrame(&jute.RequestHeader{Xid: 6, Type: jute.OpCloseSession})
			if h, _ := r3.reply(6); h.Err != 0 {
				t.Fatalf("closeSession %+v", h)
			}
			r3.closed()

			// A four-letter word: srvr is answered by both; "Mode:".
			w := dialRaw(t, addr)
			w.send([]byte("srvr"))
			out, _ := io.ReadAll(w.br)
			if !strings.Contains(string(out), "Mode: standalone") || !strings.HasPrefix(string(out), "Zookeeper version: 3.8.") {
				t.Fatalf("srvr: %q", out)
			}
		})
	}
}

func hasInfo(w jute.WhoAmIResponse, scheme, user string) bool {
	for _, ci := range w.ClientInfo {
		if ci.AuthScheme == scheme && ci.User == user {
			return true
		}
	}
	return false
}
