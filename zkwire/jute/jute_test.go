package jute

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"testing"
)

func stat(seed int64) Stat {
	return Stat{Czxid: seed, Mzxid: seed + 1, Ctime: seed + 2, Mtime: seed + 3, Version: 4, Cversion: 5,
		Aversion: 6, EphemeralOwner: seed + 7, DataLength: 8, NumChildren: 9, Pzxid: seed + 10}
}

var acls = []ACL{{Perms: 31, ID: ID{"world", "anyone"}}, {Perms: 1, ID: ID{"digest", "u:h"}}}

// records holds one filled value of every record, with a fresh empty value
// to decode it into.
func records() []struct{ in, out Record } {
	type pair = struct{ in, out Record }
	return []pair{
		{&ConnectRequest{0, 5, 30000, 7, make([]byte, 16), true, true}, &ConnectRequest{}},
		{&ConnectRequest{0, 5, 30000, 7, []byte{1, 2}, false, false}, &ConnectRequest{}},
		{&ConnectResponse{0, 4000, 0x100000000000001, []byte("0123456789abcdef"), false, true}, &ConnectResponse{}},
		{&RequestHeader{12, OpCreate}, &RequestHeader{}},
		{&ReplyHeader{-1, -1, 0}, &ReplyHeader{}},
		{&MultiHeader{OpCheck, false, -1}, &MultiHeader{}},
		{&AuthPacket{0, "digest", []byte("u:p")}, &AuthPacket{}},
		{&SASLToken{[]byte("rspauth=0")}, &SASLToken{}},
		{&SASLToken{}, &SASLToken{}},
		{&WatcherEvent{EventNodeCreated, StateSyncConnected, "/a"}, &WatcherEvent{}},
		{&SetWatches{RelativeZxid: 9, DataWatches: []string{"/a"}, ExistWatches: []string{}, ChildWatches: []string{"/b", "/c"}}, &SetWatches{}},
		{&SetWatches{9, []string{"/a"}, []string{"/x"}, []string{}, []string{"/p"}, []string{"/r"}, true}, &SetWatches{V2: true}},
		{&CreateRequest{Path: "/a", Data: []byte("d"), ACL: acls, Flags: 3}, &CreateRequest{}},
		{&CreateRequest{"/t", nil, acls, 5, 1000, true}, &CreateRequest{HasTTL: true}},
		{&PathVersionRequest{"/a", -1}, &PathVersionRequest{}},
		{&SetDataRequest{"/a", []byte{}, 3}, &SetDataRequest{}},
		{&PathWatchRequest{"/a", true}, &PathWatchRequest{}},
		{&PathRequest{"/a"}, &PathRequest{}},
		{&SetACLRequest{"/a", acls, 2}, &SetACLRequest{}},
		{&PathTypeRequest{"/a", 1}, &PathTypeRequest{}},
		{&ReconfigRequest{strp("j"), strp("l"), strp("n"), 4}, &ReconfigRequest{}},
		{&ReconfigRequest{nil, strp(""), nil, -1}, &ReconfigRequest{}},
		{&MultiRequest{Ops: []MultiOp{
			{OpCreate, &CreateRequest{Path: "/m", ACL: acls}},
			{OpCreateTTL, &CreateRequest{Path: "/t", ACL: acls, Flags: 5, TTL: 7, HasTTL: true}},
			{OpDelete, &PathVersionRequest{"/x", 1}},
			{OpSetData, &SetDataRequest{"/m", []byte("v"), -1}},
			{OpCheck, &PathVersionRequest{"/m", 0}},
		}}, &MultiRequest{}},
		{&MultiRequest{Ops: []MultiOp{{OpGetData, &PathWatchRequest{Path: "/a"}}, {OpGetChildren, &PathWatchRequest{Path: "/"}}}}, &MultiRequest{}},
		{&StatResponse{stat(100)}, &StatResponse{}},
		{&Create2Response{"/a", stat(1)}, &Create2Response{}},
		{&GetDataResponse{[]byte("x"), stat(2)}, &GetDataResponse{}},
		{&StringsResponse{[]string{"a", "b"}}, &StringsResponse{}},
		{&GetChildren2Response{[]string{}, stat(3)}, &GetChildren2Response{}},
		{&GetACLResponse{acls, stat(4)}, &GetACLResponse{}},
		{&IntResponse{42}, &IntResponse{}},
		{&WhoAmIResponse{[]ClientInfo{{"ip", "127.0.0.1"}, {"digest", "u"}}}, &WhoAmIResponse{}},
		{&MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Rec: &PathRequest{"/m"}},
			{Type: OpCreate2, Rec: &Create2Response{"/n", stat(5)}},
			{Type: OpSetData, Rec: &StatResponse{stat(6)}},
			{Type: OpDelete}, {Type: OpCheck},
			{Type: OpGetData, Rec: &GetDataResponse{[]byte("d"), stat(7)}},
			{Type: OpGetChildren, Rec: &StringsResponse{[]string{"c"}}},
			{Type: OpError, Err: -101},
		}}, &MultiResponse{}},
		{&Empty{}, &Empty{}},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, rec := range records() {
		b := Marshal(nil, rec.in)
		if err := Unmarshal(b, rec.out); err != nil {
			t.Errorf("%T: %v", rec.in, err)
			continue
		}
		if !reflect.DeepEqual(rec.in, rec.out) {
			t.Errorf("%T: decoded %+v, want %+v", rec.in, rec.out, rec.in)
		}
		// Every proper prefix is a truncated record (records that end in
		// an optional field decode a shorter prefix as the old layout).
		for i := 0; i < len(b); i++ {
			fresh := reflect.New(reflect.TypeOf(rec.out).Elem()).Interface().(Record)
			copyFlags(rec.out, fresh)
			if err := Unmarshal(b[:i], fresh); err == nil && !optionalTail(rec.in, len(b)-i) {
				t.Errorf("%T: prefix of %d/%d bytes decoded without error", rec.in, i, len(b))
			}
		}
	}
}

// copyFlags carries the layout selectors a caller sets before Decode.
func copyFlags(from, to Record) {
	switch f := from.(type) {
	case *CreateRequest:
		to.(*CreateRequest).HasTTL = f.HasTTL
	case *SetWatches:
		to.(*SetWatches).V2 = f.V2
	}
}

func optionalTail(r Record, cut int) bool {
	switch r := r.(type) {
	case *ConnectRequest:
		return r.HasReadOnly && cut == 1
	case *ConnectResponse:
		return r.HasReadOnly && cut == 1
	}
	return false
}

// TestWireLayout pins a few encodings byte for byte against what a Java
// client sends.
func TestWireLayout(t *testing.T) {
	got := AppendFrame(nil, &RequestHeader{Xid: 1, Type: OpGetData}, &PathWatchRequest{"/a", true})
	want := []byte{0, 0, 0, 15, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2, '/', 'a', 1}
	if !bytes.Equal(got, want) {
		t.Errorf("getData frame = %v, want %v", got, want)
	}
	got = Marshal(nil, &ConnectResponse{TimeOut: 0, SessionID: 0, Passwd: make([]byte, 16)})
	if len(got) != 4+4+8+4+16 {
		t.Errorf("expired connect response is %d bytes", len(got))
	}
	if b := Marshal(nil, &Stat{}); len(b) != StatSize {
		t.Errorf("Stat is %d bytes, want %d", len(b), StatSize)
	}
	if b := Marshal(nil, &SetDataRequest{Path: "/a"}); !bytes.Equal(b[6:10], []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("nil buffer not written as -1: %v", b)
	}
}

func TestReadFrame(t *testing.T) {
	frame := AppendFrame(nil, &RequestHeader{Xid: 3, Type: OpPing})
	body, err := ReadFrame(bytes.NewReader(frame), DefaultMaxBuffer, nil)
	if err != nil || len(body) != 8 {
		t.Fatalf("ReadFrame = %v, %v", body, err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, io.EOF},
		{"short length", []byte{0, 0}, io.ErrUnexpectedEOF},
		{"truncated body", frame[:6], io.ErrUnexpectedEOF},
		{"negative", []byte{0xff, 0xff, 0xff, 0xfe}, ErrFrameTooLarge},
		{"over maxbuffer", binary.BigEndian.AppendUint32(nil, DefaultMaxBuffer+1), ErrFrameTooLarge},
	} {
		_, err := ReadFrame(bytes.NewReader(tc.in), DefaultMaxBuffer, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	// Exactly maxbuffer is accepted.
	big := append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 100)...)
	if _, err := ReadFrame(bytes.NewReader(big), 100, nil); err != nil {
		t.Errorf("frame of max length: %v", err)
	}
}

func TestBadLengths(t *testing.T) {
	var e Encoder
	e.Int(-2) // a string length below -1
	if err := Unmarshal(e.B, &PathRequest{}); !errors.Is(err, ErrBadLength) {
		t.Errorf("length -2: %v", err)
	}
	e = Encoder{}
	e.Int(1 << 30) // a vector count the record cannot hold
	if err := Unmarshal(e.B, &StringsResponse{}); !errors.Is(err, ErrBadLength) {
		t.Errorf("huge vector: %v", err)
	}
	e = Encoder{}
	(&MultiHeader{Type: OpPing}).Encode(&e)
	if err := Unmarshal(e.B, &MultiRequest{}); !errors.Is(err, ErrBadOp) {
		t.Errorf("ping in multi: %v", err)
	}
	if err := Unmarshal(append(Marshal(nil, &PathRequest{"/"}), 0), &PathRequest{}); !errors.Is(err, ErrTrailing) {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestOpNames(t *testing.T) {
	for op, name := range opNames {
		if got, ok := OpByName(name); !ok || got != op {
			t.Errorf("OpByName(%q) = %d, %v", name, got, ok)
		}
	}
	if OpName(999) != "op999" {
		t.Errorf("OpName(999) = %q", OpName(999))
	}
}

// TestBufferNullApartFromEmpty: a nil buffer is written as length -1 and
// an empty one as length 0, and each reads back as it was written (nil,
// and a non-nil empty slice), as the real server keeps them apart.
func TestBufferNullApartFromEmpty(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		wire []byte
	}{
		{"nil", nil, []byte{0xff, 0xff, 0xff, 0xff}},
		{"empty", []byte{}, []byte{0, 0, 0, 0}},
		{"one byte", []byte{7}, []byte{0, 0, 0, 1, 7}},
	} {
		var e Encoder
		e.Buffer(tc.in)
		if !bytes.Equal(e.B, tc.wire) {
			t.Errorf("%s: encoded %x, want %x", tc.name, e.B, tc.wire)
		}
		d := NewDecoder(tc.wire)
		got := d.Buffer()
		if d.Err() != nil || (got == nil) != (tc.in == nil) || !bytes.Equal(got, tc.in) {
			t.Errorf("%s: decoded %#v (err %v), want %#v", tc.name, got, d.Err(), tc.in)
		}
		// The same through a getData response, the record a client reads.
		b := Marshal(nil, &GetDataResponse{Data: tc.in})
		if !bytes.Equal(b[:len(tc.wire)], tc.wire) {
			t.Errorf("%s: getData response starts %x, want %x", tc.name, b[:len(tc.wire)], tc.wire)
		}
		var r GetDataResponse
		if err := Unmarshal(b, &r); err != nil || (r.Data == nil) != (tc.in == nil) {
			t.Errorf("%s: getData response read back %#v (err %v)", tc.name, r.Data, err)
		}
	}
}

// TestAppendReply: AppendReply writes what AppendFrame writes for the
// header and the body, after what dst holds.
func TestAppendReply(t *testing.T) {
	h := ReplyHeader{Xid: -2, Zxid: 1<<40 + 3, Err: -101}
	for _, body := range []Record{nil, &StatResponse{Stat: Stat{Version: 4}}, &GetDataResponse{Data: bytes.Repeat([]byte("x"), 300)}} {
		for _, dst := range [][]byte{nil, []byte("head")} {
			want := AppendFrame(bytes.Clone(dst), &h, body)
			if got := AppendReply(bytes.Clone(dst), h, body); !bytes.Equal(got, want) {
				t.Errorf("AppendReply(%q, %+v, %T) = %v, want %v", dst, h, body, got, want)
			}
		}
	}
}
