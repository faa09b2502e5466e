package zkwire

import (
	"bytes"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// recorded records what the server sends on a FrameConn.
type recorded struct {
	got    [][]byte
	closed bool
}

func (r *recorded) Frame(b []byte) { r.got = append(r.got, b) }
func (r *recorded) Close()         { r.closed = true }

// serveFrameRequests are request bodies of every kind of reply: each op
// the common replies encode from the stack (appendReply), the others,
// errors, a multiRead, an unknown op, a body that does not decode.
func serveFrameRequests() [][]byte {
	acl := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}
	req := func(xid, op int32, body jute.Record) []byte {
		return jute.Marshal(nil, &jute.RequestHeader{Xid: xid, Type: op}, body)
	}
	return [][]byte{
		req(1, jute.OpCreate, &jute.CreateRequest{Path: "/a", Data: []byte("x"), ACL: acl}),
		req(2, jute.OpCreate2, &jute.CreateRequest{Path: "/a/b", Data: []byte("yz"), ACL: acl, Flags: 2}),
		req(3, jute.OpGetData, &jute.PathWatchRequest{Path: "/a", Watch: true}),
		req(4, jute.OpSetData, &jute.SetDataRequest{Path: "/a", Data: []byte("new"), Version: -1}),
		req(5, jute.OpExists, &jute.PathWatchRequest{Path: "/a/b"}),
		req(6, jute.OpExists, &jute.PathWatchRequest{Path: "/none"}),
		req(7, jute.OpGetChildren, &jute.PathWatchRequest{Path: "/a"}),
		req(8, jute.OpGetChildren2, &jute.PathWatchRequest{Path: "/a"}),
		req(9, jute.OpGetACL, &jute.PathRequest{Path: "/a"}),
		req(10, jute.OpSetACL, &jute.SetACLRequest{Path: "/a", ACL: acl, Version: -1}),
		req(11, jute.OpGetData, &jute.PathWatchRequest{Path: "/none"}),
		req(12, jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: "/a"}},
			{Type: jute.OpGetChildren, Rec: &jute.PathWatchRequest{Path: "/a"}},
		}}),
		req(13, jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Rec: &jute.CreateRequest{Path: "/c", ACL: acl}},
			{Type: jute.OpSetData, Rec: &jute.SetDataRequest{Path: "/c", Data: []byte("d"), Version: -1}},
		}}),
		req(14, jute.OpSync, &jute.PathRequest{Path: "/a"}),
		req(15, jute.OpDelete, &jute.PathVersionRequest{Path: "/a/b", Version: -1}),
		req(16, jute.OpPing, nil),
		req(17, jute.OpGetData, nil), // cut short: MarshallingError
		req(18, 9999, nil),           // unknown: the connection closes
	}
}

// TestServeFrameServesAsServe: the frames ServeFrame serves from
// ParseFrame's decoding get the very replies Serve gives when it decodes
// them itself, and are counted as received. (In a bubble, so that the two
// servers' znodes get the same times.)
func TestServeFrameServesAsServe(t *testing.T) {
	synctest.Test(t, testServeFrameServesAsServe)
}

func testServeFrameServesAsServe(t *testing.T) {
	serve := func(parsed bool) (*recorded, *conn) {
		zs := zkmem.NewServer(zkmem.Options{})
		t.Cleanup(zs.Close)
		srv := New(zs, Options{})
		t.Cleanup(func() { srv.Close() })
		out := &recorded{}
		fc := srv.NewFrameConn(out)
		if !fc.Serve(jute.Marshal(nil, &jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})) {
			t.Fatal("the handshake closed the connection")
		}
		for _, body := range serveFrameRequests() {
			if !parsed {
				fc.Serve(body)
				continue
			}
			f, _ := ParseFrame(body)
			fc.ServeFrame(body, &f)
		}
		return out, fc.c
	}
	want, wc := serve(false)
	got, gc := serve(true)
	if len(want.got) != 20 || !want.closed { // the handshake, 18 replies, the data watch's event
		t.Fatalf("Serve: %d frames, closed %v; want 20, closed", len(want.got), want.closed)
	}
	if len(got.got) != len(want.got) || got.closed != want.closed {
		t.Fatalf("ServeFrame: %d frames, closed %v; Serve: %d, %v", len(got.got), got.closed, len(want.got), want.closed)
	}
	// The handshake's answer carries the session's id and password.
	for i := 1; i < len(want.got); i++ {
		if !bytes.Equal(got.got[i], want.got[i]) {
			t.Errorf("frame %d:\n ServeFrame %v\n Serve      %v", i, got.got[i], want.got[i])
		}
	}
	if g, w := gc.recv.Load(), wc.recv.Load(); g != w || w != 19 {
		t.Errorf("received %d with ServeFrame, %d with Serve; want 19", g, w)
	}
}

// TestAppendReplyAsRecords: appendReply encodes every successful reply as
// the Record replyBody makes of it.
func TestAppendReplyAsRecords(t *testing.T) {
	stat := &zksim.Stat{Czxid: 1, Mzxid: 2, Ctime: 3, Mtime: 4, Version: 5, Cversion: 6, Aversion: 7,
		EphemeralOwner: 8, DataLength: 9, NumChildren: 10, Pzxid: 11}
	resp := &zkmem.Response{Path: "/p", Data: bytes.Repeat([]byte("d"), 200), Stat: stat,
		Children: []string{"x", "y"}, ACL: zksim.OpenACL(), Count: 12}
	req := &zkmem.Request{Path: "/q"}
	hdr := jute.ReplyHeader{Xid: 7, Zxid: 1 << 40}
	for _, op := range []int32{jute.OpCreate, jute.OpCreate2, jute.OpCreateTTL, jute.OpCreateContainer,
		jute.OpExists, jute.OpSetData, jute.OpSetACL, jute.OpGetData, jute.OpGetChildren,
		jute.OpGetChildren2, jute.OpGetACL, jute.OpGetAllChildrenNumber, jute.OpGetEphemerals,
		jute.OpSync, jute.OpAddWatch, jute.OpDelete, jute.OpCheckWatches} {
		t.Run(fmt.Sprint(jute.OpName(op)), func(t *testing.T) {
			want := jute.AppendFrame(nil, &hdr, replyBody(op, req, resp))
			if got := appendReply(hdr, op, req, resp); !bytes.Equal(got, want) {
				t.Errorf("appendReply:\n %v\nwant\n %v", got, want)
			}
		})
	}
}
