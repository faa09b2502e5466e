package zkwire_test

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// FuzzConn feeds arbitrary bytes to a connection of a live server, after a
// valid handshake or instead of one. The server must not panic, and must
// leave no goroutine behind once closed (TestMain's goleak check). The
// seeds run with plain go test.
func FuzzConn(f *testing.F) {
	acl := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}
	f.Add(true, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpCreate}, &jute.CreateRequest{Path: "/a", ACL: acl}))
	f.Add(true, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 1, Type: jute.OpMulti}, &jute.MultiRequest{Ops: []jute.MultiOp{
		{Type: jute.OpCreate, Rec: &jute.CreateRequest{Path: "/m", ACL: acl}},
		{Type: jute.OpCheck, Rec: &jute.PathVersionRequest{Path: "/m", Version: 3}},
	}}))
	f.Add(true, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 2, Type: jute.OpSetWatches2}, &jute.SetWatches{V2: true, DataWatches: []string{"/a"}}))
	f.Add(true, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 3, Type: jute.OpMultiRead}, &jute.MultiRequest{Ops: []jute.MultiOp{{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: "/"}}}}))
	f.Add(true, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 4, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: "nope", Auth: []byte("x")}))
	f.Add(true, jute.AppendFrame(nil, &jute.RequestHeader{Xid: 5, Type: jute.OpCloseSession}))
	f.Add(true, []byte{0, 0, 0, 2, 0, 0})
	f.Add(false, []byte("stat"))
	f.Add(false, []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(false, jute.AppendFrame(nil, &jute.ConnectRequest{SessionID: 1 << 56, Passwd: make([]byte, 16), LastZxidSeen: 1 << 40}))
	f.Fuzz(func(t *testing.T, handshake bool, in []byte) {
		zk := zkmem.NewServer(zkmem.Options{})
		defer zk.Close()
		srv := zkwire.New(zk, zkwire.Options{SessionlessTimeout: 50 * time.Millisecond})
		defer srv.Close()
		client, server := net.Pipe()
		defer client.Close()
		srv.ServeConn(server)
		client.SetDeadline(time.Now().Add(2 * time.Second))
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, client) // take whatever the server says
			close(drained)
		}()
		defer func() { client.Close(); <-drained }()
		if handshake {
			if _, err := client.Write(jute.AppendFrame(nil, &jute.ConnectRequest{TimeOut: 4000, Passwd: make([]byte, 16)})); err != nil {
				return
			}
		}
		client.Write(in)
		client.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing}))
	})
}
