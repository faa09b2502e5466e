package jute

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the decoder as a server reads them:
// a connect frame, then request frames, each body decoded by its op code.
// Nothing may panic, and whatever decodes must encode back to a record that
// decodes to the same value. The seed corpus in testdata/fuzz runs with
// plain go test.
func FuzzDecode(f *testing.F) {
	for _, rec := range records() {
		f.Add(AppendFrame(nil, rec.in))
	}
	for op := int32(-11); op <= 108; op++ {
		if r := NewRequest(op); r != nil {
			f.Add(AppendFrame(nil, &RequestHeader{Xid: 1, Type: op}, r))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		first := true
		for {
			body, err := ReadFrame(r, 1<<16, nil)
			if err != nil {
				return
			}
			if first {
				first = false
				roundTrip(t, body, &ConnectRequest{}, func() Record { return &ConnectRequest{} })
				continue
			}
			d := NewDecoder(body)
			var h RequestHeader
			h.Decode(d)
			if d.Err() != nil {
				continue
			}
			if rec := NewRequest(h.Type); rec != nil {
				fresh := func() Record { return NewRequest(h.Type) }
				roundTrip(t, d.Rest(), rec, fresh)
			}
			roundTrip(t, body, &MultiResponse{}, func() Record { return &MultiResponse{} })
			roundTrip(t, body, &GetACLResponse{}, func() Record { return &GetACLResponse{} })
		}
	})
}

func roundTrip(t *testing.T, b []byte, rec Record, fresh func() Record) {
	t.Helper()
	d := NewDecoder(b)
	rec.Decode(d)
	if d.Err() != nil {
		return
	}
	again := fresh()
	if err := Unmarshal(Marshal(nil, rec), again); err != nil {
		t.Fatalf("%T re-encoded does not decode: %v", rec, err)
	}
	if !reflect.DeepEqual(rec, again) {
		t.Fatalf("%T: %+v re-decoded as %+v", rec, rec, again)
	}
}
