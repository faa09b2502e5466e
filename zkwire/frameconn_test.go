package zkwire_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
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

// TestFrameConnAtMember: a FrameConn to a member's port opens its session
// on that member; a lagging member refuses, without an answer, a client
// that saw a zxid it has not applied (Refused: zkmem.ErrZxidAhead), and
// the session stays where it was; a server of New has no members.
func TestFrameConnAtMember(t *testing.T) {
	e := zkmem.NewEnsemble(3, zkmem.EnsembleOptions{})
	defer e.Close()
	srv := zkwire.NewEnsemble(e, zkwire.Options{})
	defer srv.Close()
	fc, err := srv.NewFrameConnAt(0, &frames{})
	require.NoError(t, err)
	require.True(t, fc.Serve(jute.Marshal(nil, &jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})))
	require.NoError(t, fc.Refused())
	sess := fc.Session()
	require.Equal(t, []int64{sess.ID()}, e.Sessions(0))

	e.Lag(1)
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/a", ACL: zksim.OpenACL(), TTL: -1})
	require.NoError(t, resp.Err)
	out := &frames{}
	moved, err := srv.NewFrameConnAt(1, out)
	require.NoError(t, err)
	resume := &jute.ConnectRequest{TimeOut: 10000, SessionID: sess.ID(), Passwd: sess.Password(), LastZxidSeen: resp.Zxid}
	require.False(t, moved.Serve(jute.Marshal(nil, resume)))
	require.ErrorIs(t, moved.Refused(), zkmem.ErrZxidAhead)
	require.Equal(t, &frames{closed: true}, out)
	require.Equal(t, []int64{sess.ID()}, e.Sessions(0))

	_, err = srv.NewFrameConnAt(3, &frames{})
	require.EqualError(t, err, "zkwire: no member 3 in an ensemble of 3 (members are 0 to 2)")
	zs := zkmem.NewServer(zkmem.Options{})
	defer zs.Close()
	standalone := zkwire.New(zs, zkwire.Options{})
	defer standalone.Close()
	_, err = standalone.NewFrameConnAt(0, &frames{})
	require.ErrorIs(t, err, zkwire.ErrNotEnsemble)
}
