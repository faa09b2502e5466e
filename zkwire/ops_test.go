package zkwire_test

import (
	"slices"
	"testing"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// TestOpsMatchRealServer sends the requests go-zookeeper never sends
// (create2, createTTL, getChildren2, addWatch, checkWatches,
// removeWatches, setWatches2, getEphemerals, getAllChildrenNumber, sync,
// setACL, multiRead) by hand, to the wire server and to a real ZooKeeper
// 3.8 with TTL nodes on, and checks both answer the same.
func TestOpsMatchRealServer(t *testing.T) {
	for _, backend := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"wire", func(t *testing.T) string {
			return zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{ExtendedTypes: true})).Addr()
		}},
		{"real", func(t *testing.T) string { return zkserver.Shared(t).Addr() }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			addr := backend.addr(t)
			open := []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}
			root := "/ops-" + backend.name
			r := dialRaw(t, addr)
			sess := r.connect(newSession)
			xid := int32(0)
			call := func(op int32, req jute.Record, resp jute.Record) jute.ReplyHeader {
				t.Helper()
				xid++
				r.sendFrame(&jute.RequestHeader{Xid: xid, Type: op}, req)
				h, d := r.reply(xid)
				if h.Err == 0 && resp != nil {
					resp.Decode(d)
					if d.Err() != nil {
						t.Fatalf("%s reply: %v", jute.OpName(op), d.Err())
					}
				}
				return h
			}
			var c2 jute.Create2Response
			if h := call(jute.OpCreate2, &jute.CreateRequest{Path: root, Data: []byte("r"), ACL: open}, &c2); h.Err != 0 ||
				c2.Path != root || c2.Stat.Czxid != h.Zxid || c2.Stat.DataLength != 1 {
				t.Fatalf("create2 %+v %+v", h, c2)
			}
			if h := call(jute.OpCreateTTL, &jute.CreateRequest{Path: root + "/ttl", ACL: open, Flags: 5, TTL: 60000, HasTTL: true}, &c2); h.Err != 0 || c2.Stat.EphemeralOwner != 0 {
				t.Fatalf("createTTL %+v %+v", h, c2)
			}
			if h := call(jute.OpCreateTTL, &jute.CreateRequest{Path: root + "/bad", ACL: open, Flags: 5, TTL: 0, HasTTL: true}, nil); h.Err != jute.ErrBadArguments {
				t.Fatalf("createTTL with ttl 0: %+v", h)
			}
			if h := call(jute.OpCreate, &jute.CreateRequest{Path: root + "/e", ACL: open, Flags: 1}, nil); h.Err != 0 {
				t.Fatalf("create ephemeral %+v", h)
			}
			var kids jute.GetChildren2Response
			if h := call(jute.OpGetChildren2, &jute.PathWatchRequest{Path: root}, &kids); h.Err != 0 ||
				!slices.Equal(sorted(kids.Children), []string{"e", "ttl"}) || kids.Stat.NumChildren != 2 {
				t.Fatalf("getChildren2 %+v %+v", h, kids)
			}
			var n jute.IntResponse
			if h := call(jute.OpGetAllChildrenNumber, &jute.PathRequest{Path: root}, &n); h.Err != 0 || n.N != 2 {
				t.Fatalf("getAllChildrenNumber %+v %+v", h, n)
			}
			var eph jute.StringsResponse
			if h := call(jute.OpGetEphemerals, &jute.PathRequest{Path: root}, &eph); h.Err != 0 || !slices.Equal(eph.Strings, []string{root + "/e"}) {
				t.Fatalf("getEphemerals %+v %+v", h, eph)
			}
			var synced jute.PathRequest
			if h := call(jute.OpSync, &jute.PathRequest{Path: root}, &synced); h.Err != 0 || synced.Path != root {
				t.Fatalf("sync %+v %+v", h, synced)
			}
			var st jute.StatResponse
			if h := call(jute.OpSetACL, &jute.SetACLRequest{Path: root, ACL: open, Version: 0}, &st); h.Err != 0 || st.Stat.Aversion != 1 {
				t.Fatalf("setACL %+v %+v", h, st)
			}
			if h := call(jute.OpSetACL, &jute.SetACLRequest{Path: root, ACL: open, Version: 0}, nil); h.Err != -103 {
				t.Fatalf("setACL with a stale version %+v", h)
			}

			// Persistent watches: addWatch answers with an ErrorResponse(0);
			// checkWatches finds it; removeWatches of a kind not there
			// fails NoWatcher.
			var ok jute.IntResponse
			if h := call(jute.OpAddWatch, &jute.PathTypeRequest{Path: root, Type: 1}, &ok); h.Err != 0 || ok.N != 0 {
				t.Fatalf("addWatch %+v", h)
			}
			if h := call(jute.OpCheckWatches, &jute.PathTypeRequest{Path: root, Type: 2}, nil); h.Err != 0 {
				t.Fatalf("checkWatches data on a recursive watch %+v", h)
			}
			if h := call(jute.OpCheckWatches, &jute.PathTypeRequest{Path: root + "/e", Type: 3}, nil); h.Err != jute.ErrNoWatcher {
				t.Fatalf("checkWatches with none %+v", h)
			}
			xid++
			r.sendFrame(&jute.RequestHeader{Xid: xid, Type: jute.OpSetData}, &jute.SetDataRequest{Path: root + "/ttl", Data: []byte("x"), Version: -1})
			b, err := r.readFrame()
			if err != nil {
				t.Fatal(err)
			}
			d := jute.NewDecoder(b)
			var nh jute.ReplyHeader
			nh.Decode(d)
			var ev jute.WatcherEvent
			ev.Decode(d)
			if nh.Xid != jute.XidNotification || ev.Type != jute.EventNodeDataChanged || ev.Path != root+"/ttl" {
				t.Fatalf("recursive watch event %+v %+v", nh, ev)
			}
			last, _ := r.reply(xid)

			// multiRead: a getData and a getChildren, one failing.
			var mr jute.MultiResponse
			if h := call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
				{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: root}},
				{Type: jute.OpGetChildren, Rec: &jute.PathWatchRequest{Path: root + "/missing"}},
			}}, &mr); h.Err != 0 || len(mr.Results) != 2 || mr.Results[0].Type != jute.OpGetData ||
				string(mr.Results[0].Rec.(*jute.GetDataResponse).Data) != "r" ||
				mr.Results[1].Type != jute.OpError || mr.Results[1].Err != jute.ErrNoNode {
				t.Fatalf("multiRead %+v %+v", h, mr)
			}

			// setWatches2 from a resumed connection: a data watch on a node
			// changed since relativeZxid fires at once; the persistent
			// recursive watch is back.
			r2 := dialRaw(t, addr)
			r2.connect(jute.ConnectRequest{TimeOut: sess.TimeOut, SessionID: sess.SessionID, Passwd: sess.Passwd, LastZxidSeen: last.Zxid, HasReadOnly: true})
			r.closed()
			r2.sendFrame(&jute.RequestHeader{Xid: jute.XidSetWatches, Type: jute.OpSetWatches2}, &jute.SetWatches{
				V2: true, RelativeZxid: c2.Stat.Czxid, DataWatches: []string{root + "/ttl"},
				ExistWatches: []string{}, ChildWatches: []string{}, PersistentWatches: []string{},
				PersistentRecursive: []string{root},
			})
			b, err = r2.readFrame()
			if err != nil {
				t.Fatal(err)
			}
			d = jute.NewDecoder(b)
			nh.Decode(d)
			ev.Decode(d)
			if nh.Xid != jute.XidNotification || ev.Type != jute.EventNodeDataChanged || ev.Path != root+"/ttl" {
				t.Fatalf("setWatches2 event %+v %+v", nh, ev)
			}
			if h, _ := r2.reply(jute.XidSetWatches); h.Err != 0 {
				t.Fatalf("setWatches2 reply %+v", h)
			}
			r2.sendFrame(&jute.RequestHeader{Xid: 100, Type: jute.OpCheckWatches}, &jute.PathTypeRequest{Path: root, Type: 3})
			if h, _ := r2.reply(100); h.Err != 0 {
				t.Fatalf("the recursive watch is not back: %+v", h)
			}
			r2.sendFrame(&jute.RequestHeader{Xid: 101, Type: jute.OpRemoveWatches}, &jute.PathTypeRequest{Path: root, Type: 3})
			if h, _ := r2.reply(101); h.Err != 0 {
				t.Fatalf("removeWatches %+v", h)
			}
			r2.sendFrame(&jute.RequestHeader{Xid: 102, Type: jute.OpRemoveWatches}, &jute.PathTypeRequest{Path: root, Type: 3})
			if h, _ := r2.reply(102); h.Err != jute.ErrNoWatcher {
				t.Fatalf("removeWatches again %+v", h)
			}
			r2.sendFrame(&jute.RequestHeader{Xid: 103, Type: jute.OpCloseSession})
			r2.reply(103)
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
