package zkwire_test

import (
	"testing"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// frames records what the server sends on a FrameConn.
type frames struct {
	got    [][]byte
	closed bool
}

func (f *frames) Frame(b []byte) { f.got = append(f.got, b) }
func (f *frames) Close()         { f.closed = true }

func TestFrameConnServesFrameByFrame(t *testing.T) {
	zs := zkmem.NewServer(zkmem.Options{})
	defer zs.Close()
	srv := zkwire.New(zs, zkwire.Options{})
	defer srv.Close()
	out := &frames{}
	fc := srv.NewFrameConn(out)
	var lens []int
	hook := 0
	fc.SetReplyHook(func(*zkmem.Request, *zkmem.Response) { hook++ })

	if !fc.Serve(jute.Marshal(nil, &jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})) {
		t.Fatal("the handshake closed the connection")
	}
	var cr jute.ConnectResponse
	if len(out.got) != 1 || jute.Unmarshal(out.got[0][4:], &cr) != nil || cr.SessionID == 0 || fc.Session() == nil {
		t.Fatalf("handshake answer: %d frames, %+v", len(out.got), cr)
	}
	create := jute.Marshal(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpCreate}, &jute.CreateRequest{Path: "/a", Data: []byte("x"), ACL: []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}})
	f, ok := zkwire.ParseFrame(create)
	if !ok || f.Xid != 1 || f.Request.Op != zkmem.OpCreate || f.Request.Path != "/a" {
		t.Fatalf("ParseFrame: %+v %v", f, ok)
	}
	if !fc.Serve(create) {
		t.Fatal("the create closed the connection")
	}
	var h jute.ReplyHeader
	if len(out.got) != 2 || jute.Unmarshal(out.got[1][4:20], &h) != nil || h.Xid != 1 || h.Err != 0 || hook != 1 {
		t.Fatalf("create reply: %d frames, %+v, hook called %d times", len(out.got), h, hook)
	}
	for _, b := range out.got {
		lens = append(lens, len(b))
	}
	// A fault armed on the session closes the connection: nothing more is
	// sent, out is told, and Serve reports it.
	zs.Control(cr.SessionID).DropNextRequest(zkmem.OpAny)
	if fc.Serve(jute.Marshal(nil, &jute.RequestHeader{Xid: 2, Type: jute.OpGetData}, &jute.PathWatchRequest{Path: "/a"})) {
		t.Fatal("a dropped request did not close the connection")
	}
	if !out.closed || len(out.got) != 2 || !fc.Over() {
		t.Fatalf("after the drop: closed=%v frames=%d over=%v", out.closed, len(out.got), fc.Over())
	}
	// The session lives on, detached, until its timeout.
	if zs.Control(cr.SessionID) == nil {
		t.Fatal("the session ended with its connection")
	}
	t.Logf("frames sent: %v bytes", lens)
}
