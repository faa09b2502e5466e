package zkwire_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zktest"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// The tests of this file send the same raw frames to the wire server and to
// a real ZooKeeper 3.8 and check the answers byte for byte where it
// matters. Outside CI without ZooKeeper installed the real half skips;
// with CI=true it must run.

// againstBoth runs f on a wire server and on the test binary's shared real
// server, each given the address and a root path of its own, /name-N (N
// counts the runs, so that -count=2 finds no node of the first run).
func againstBoth(t *testing.T, name string, f func(t *testing.T, addr, root string)) {
	t.Helper()
	root := fmt.Sprintf("/%s-%d", name, runs.Add(1))
	t.Run("wire", func(t *testing.T) { f(t, zkwire.NewTestServer(t).Addr(), root) })
	t.Run("real", func(t *testing.T) { f(t, zkserver.Shared(t).Addr(), root) })
}

var runs atomic.Int64

var openACL = []jute.ACL{{Perms: 31, ID: jute.ID{Scheme: "world", ID: "anyone"}}}

// rawBody reads frames until the reply to xid and returns its header and
// the bytes after it, as they came off the connection.
func (r *raw) rawBody(xid int32) (jute.ReplyHeader, []byte) {
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

// call sends one request and returns its reply's header and body.
func (r *raw) call(xid, op int32, rec jute.Record) (jute.ReplyHeader, []byte) {
	r.t.Helper()
	if rec == nil {
		r.sendFrame(&jute.RequestHeader{Xid: xid, Type: op})
	} else {
		r.sendFrame(&jute.RequestHeader{Xid: xid, Type: op}, rec)
	}
	return r.rawBody(xid)
}

// Length fields of a jute buffer as they travel.
var (
	lenNull  = []byte{0xff, 0xff, 0xff, 0xff} // null: -1
	lenEmpty = []byte{0, 0, 0, 0}             // empty: 0
)

// TestNullAndEmptyDataOnTheWire: the length field of getData's data is -1
// for a node created or set with a null buffer and 0 for one given an empty
// buffer, through create, setData, multi and multiRead; the nodes of a
// fresh server answer 0. Stat.dataLength is 0 either way.
func TestNullAndEmptyDataOnTheWire(t *testing.T) {
	againstBoth(t, "null-and-empty", func(t *testing.T, addr, root string) {
		r := dialRaw(t, addr)
		r.connect(newSession)
		xid := int32(0)
		call := func(op int32, rec jute.Record) (jute.ReplyHeader, []byte) {
			t.Helper()
			xid++
			return r.call(xid, op, rec)
		}
		ok := func(what string, h jute.ReplyHeader) {
			t.Helper()
			if h.Err != 0 {
				t.Fatalf("%s: error %d", what, h.Err)
			}
		}
		// getData's reply body is the buffer, then the Stat, whose
		// dataLength is its 10th field (at 4 bytes from its end).
		wantData := func(path string, length []byte) {
			t.Helper()
			h, body := call(jute.OpGetData, &jute.PathWatchRequest{Path: path})
			ok("getData "+path, h)
			if !bytes.Equal(body[:4], length) || len(body) != 4+jute.StatSize {
				t.Fatalf("getData %s: body %x, want length field %x and no data", path, body, length)
			}
			if dl := binary.BigEndian.Uint32(body[len(body)-16:]); dl != 0 {
				t.Fatalf("getData %s: Stat.dataLength %d, want 0", path, dl)
			}
		}
		create := func(path string, data []byte) {
			t.Helper()
			h, _ := call(jute.OpCreate, &jute.CreateRequest{Path: path, Data: data, ACL: openACL})
			ok("create "+path, h)
		}
		setData := func(path string, data []byte) {
			t.Helper()
			h, _ := call(jute.OpSetData, &jute.SetDataRequest{Path: path, Data: data, Version: -1})
			ok("setData "+path, h)
		}

		for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
			wantData(p, lenEmpty)
		}
		create(root, nil)
		wantData(root, lenNull)
		create(root+"/empty", []byte{})
		wantData(root+"/empty", lenEmpty)
		setData(root+"/empty", nil)
		wantData(root+"/empty", lenNull)
		setData(root+"/empty", []byte{})
		wantData(root+"/empty", lenEmpty)

		// The request's own length field, written by hand: 0 and -1.
		for _, tc := range []struct {
			name   string
			length []byte
		}{{"/hand-empty", lenEmpty}, {"/hand-null", lenNull}} {
			var e jute.Encoder
			e.String(root + tc.name)
			e.B = append(e.B, tc.length...)
			e.Int(1) // one ACL entry: perms, scheme, id
			e.Int(31)
			e.String("world")
			e.String("anyone")
			e.Int(0) // flags: persistent
			xid++
			var hdr jute.Encoder
			(&jute.RequestHeader{Xid: xid, Type: jute.OpCreate}).Encode(&hdr)
			frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr.B)+len(e.B)))
			r.send(append(append(frame, hdr.B...), e.B...))
			h, _ := r.rawBody(xid)
			ok("create "+tc.name+" by hand", h)
			wantData(root+tc.name, tc.length)
		}

		h, _ := call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Rec: &jute.CreateRequest{Path: root + "/m-null", ACL: openACL}},
			{Type: jute.OpCreate, Rec: &jute.CreateRequest{Path: root + "/m-empty", Data: []byte{}, ACL: openACL}},
			{Type: jute.OpSetData, Rec: &jute.SetDataRequest{Path: root + "/empty", Version: -1}},
		}})
		ok("multi", h)
		wantData(root+"/m-null", lenNull)
		wantData(root+"/m-empty", lenEmpty)
		wantData(root+"/empty", lenNull)

		// multiRead: each getData result is a multi header (type, done,
		// err: 9 bytes), then the buffer and the Stat.
		h, body := call(jute.OpMultiRead, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: root + "/m-empty"}},
			{Type: jute.OpGetData, Rec: &jute.PathWatchRequest{Path: root + "/m-null"}},
		}})
		ok("multiRead", h)
		const result = 9 + 4 + jute.StatSize
		if len(body) < 2*result || !bytes.Equal(body[9:13], lenEmpty) || !bytes.Equal(body[result+9:result+13], lenNull) {
			t.Fatalf("multiRead body %x: want length fields %x then %x", body, lenEmpty, lenNull)
		}
	})
}

// TestBadWatchRequestsMarshallingError: addWatch with a mode other than
// persistent (0) and persistentRecursive (1), and removeWatches or
// checkWatches with a kind other than Children, Data and Any (1 to 3, the
// kinds a 3.8 server knows), throw in FinalRequestProcessor, which answers
// MarshallingError (-5) with the last zxid; the connection goes on.
func TestBadWatchRequestsMarshallingError(t *testing.T) {
	againstBoth(t, "bad-watch-requests", func(t *testing.T, addr, root string) {
		r := dialRaw(t, addr)
		r.connect(newSession)
		created, _ := r.call(1, jute.OpCreate, &jute.CreateRequest{Path: root, ACL: openACL})
		if created.Err != 0 {
			t.Fatalf("create: %+v", created)
		}
		// Watches to find, so that a known kind would succeed.
		r.call(2, jute.OpGetData, &jute.PathWatchRequest{Path: root, Watch: true})
		r.call(3, jute.OpGetChildren, &jute.PathWatchRequest{Path: root, Watch: true})
		xid := int32(10)
		expect := func(what string, op int32, rec jute.Record, want int32) {
			t.Helper()
			xid++
			h, body := r.call(xid, op, rec)
			if h.Err != want || h.Zxid != created.Zxid || (want != 0 && len(body) != 0) {
				t.Errorf("%s: reply %+v body %x, want error %d, zxid %#x (no body with an error)", what, h, body, want, created.Zxid)
			}
		}
		for _, mode := range []int32{-1, 2, 3, 7} {
			expect("addWatch mode "+itoa(mode), jute.OpAddWatch, &jute.PathTypeRequest{Path: root, Type: mode}, jute.ErrMarshallingError)
		}
		for _, kind := range []int32{-1, 0, 4, 5, 9} {
			expect("checkWatches kind "+itoa(kind), jute.OpCheckWatches, &jute.PathTypeRequest{Path: root, Type: kind}, jute.ErrMarshallingError)
			expect("removeWatches kind "+itoa(kind), jute.OpRemoveWatches, &jute.PathTypeRequest{Path: root, Type: kind}, jute.ErrMarshallingError)
		}
		// The known kinds still work on the same connection.
		expect("checkWatches Data", jute.OpCheckWatches, &jute.PathTypeRequest{Path: root, Type: 2}, 0)
		expect("removeWatches Any", jute.OpRemoveWatches, &jute.PathTypeRequest{Path: root, Type: 3}, 0)
		expect("removeWatches Any again", jute.OpRemoveWatches, &jute.PathTypeRequest{Path: root, Type: 3}, jute.ErrNoWatcher)
		expect("addWatch persistent", jute.OpAddWatch, &jute.PathTypeRequest{Path: root, Type: 0}, 0)
	})
}

// TestReconfigAnswers: a standalone server answers reconfig with
// ReconfigDisabled (-123) by default and with Unimplemented (-6) when
// reconfigEnabled is set (zkmem.Options.ReconfigEnabled; zktest passes it
// to the real server's zoo.cfg). Either answer is an error transaction:
// it consumes a zxid. The connection goes on.
func TestReconfigAnswers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		enabled bool
		want    int32
	}{
		{"default", false, jute.ErrReconfigDisabled},
		{"reconfigEnabled", true, jute.ErrUnimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := zkmem.Options{ReconfigEnabled: tc.enabled}
			check := func(t *testing.T, addr string) {
				r := dialRaw(t, addr)
				r.connect(newSession)
				root := fmt.Sprintf("/reconfig-%s-%d", tc.name, runs.Add(1))
				created, _ := r.call(1, jute.OpCreate, &jute.CreateRequest{Path: root, ACL: openACL})
				members := "server.1=127.0.0.1:2888:3888;2181"
				h, body := r.call(2, jute.OpReconfig, &jute.ReconfigRequest{NewMembers: &members, CurConfigID: -1})
				if h.Err != tc.want || h.Zxid != created.Zxid+1 || len(body) != 0 {
					t.Fatalf("reconfig: reply %+v body %x, want error %d with zxid %#x (one consumed)", h, body, tc.want, created.Zxid+1)
				}
				next, _ := r.call(3, jute.OpCreate, &jute.CreateRequest{Path: root + "/after", ACL: openACL})
				if next.Err != 0 || next.Zxid != h.Zxid+1 {
					t.Fatalf("create after reconfig: %+v, want zxid %#x", next, h.Zxid+1)
				}
			}
			t.Run("wire", func(t *testing.T) {
				check(t, zkwire.NewTestServer(t, zkwire.WithZKOptions(opts)).Addr())
			})
			t.Run("real", func(t *testing.T) {
				if !tc.enabled {
					check(t, zkserver.Shared(t).Addr()) // the shared server has ZooKeeper's defaults
					return
				}
				srvOpts, err := zktest.ServerOptions(opts)
				if err != nil {
					t.Fatal(err)
				}
				check(t, zkserver.Start(t, srvOpts...).Addr())
			})
		})
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
