package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors of the decoder.
var (
	// ErrShort: the record ended before its last field.
	ErrShort = errors.New("jute: record truncated")
	// ErrBadLength: a buffer, string or vector length that is below -1 or
	// longer than what is left of the record.
	ErrBadLength = errors.New("jute: bad length")
	// ErrTrailing: bytes left over after a record that must fill its frame.
	ErrTrailing = errors.New("jute: trailing bytes after record")
)

// Decoder reads jute primitives from a byte slice. The first error sticks:
// later reads return zero values, and Err reports it.
type Decoder struct {
	b   []byte
	off int
	err error
}

// NewDecoder returns a Decoder reading b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// Err returns the first error met, if any.
func (d *Decoder) Err() error { return d.err }

// Len returns the number of unread bytes.
func (d *Decoder) Len() int { return len(d.b) - d.off }

// Rest returns the unread bytes without consuming them.
func (d *Decoder) Rest() []byte { return d.b[d.off:] }

func (d *Decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || d.Len() < n {
		d.fail(ErrShort)
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// Int reads a jute int (4 bytes, big-endian).
func (d *Decoder) Int() int32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

// Long reads a jute long (8 bytes, big-endian).
func (d *Decoder) Long() int64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// Bool reads a jute boolean (one byte, non-zero is true).
func (d *Decoder) Bool() bool {
	p := d.take(1)
	return p != nil && p[0] != 0
}

func (d *Decoder) length() (int, bool) {
	n := d.Int()
	if d.err != nil {
		return 0, false
	}
	if n == -1 {
		return -1, true
	}
	if n < 0 || int(n) > d.Len() {
		d.fail(fmt.Errorf("%w: %d with %d bytes left", ErrBadLength, n, d.Len()))
		return 0, false
	}
	return int(n), true
}

// Buffer reads a jute buffer: nil for length -1. The slice is a copy.
func (d *Decoder) Buffer() []byte {
	n, ok := d.length()
	if !ok || n < 0 {
		return nil
	}
	return append([]byte{}, d.take(n)...)
}

// String reads a jute ustring; length -1 (null) reads as "".
func (d *Decoder) String() string {
	n, ok := d.length()
	if !ok || n < 0 {
		return ""
	}
	return string(d.take(n))
}

// NullableString reads a jute ustring, nil for length -1 (null), so that a
// null string and an empty one stay apart.
func (d *Decoder) NullableString() *string {
	n, ok := d.length()
	if !ok || n < 0 {
		return nil
	}
	s := string(d.take(n))
	return &s
}

// vectorLen reads a vector's count; each element takes at least min bytes,
// so a count the rest of the record cannot hold is an error.
func (d *Decoder) vectorLen(min int) (int, bool) {
	n := d.Int()
	if d.err != nil {
		return 0, false
	}
	if n == -1 {
		return -1, true
	}
	if n < 0 || int64(n)*int64(min) > int64(d.Len()) {
		d.fail(fmt.Errorf("%w: vector of %d with %d bytes left", ErrBadLength, n, d.Len()))
		return 0, false
	}
	return int(n), true
}

// Strings reads a vector of ustrings; a null vector reads as nil.
func (d *Decoder) Strings() []string {
	n, ok := d.vectorLen(4)
	if !ok || n < 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.String())
	}
	return out
}

// Encoder appends jute primitives to a byte slice.
type Encoder struct {
	B []byte
}

// Int appends a jute int.
func (e *Encoder) Int(v int32) { e.B = binary.BigEndian.AppendUint32(e.B, uint32(v)) }

// Long appends a jute long.
func (e *Encoder) Long(v int64) { e.B = binary.BigEndian.AppendUint64(e.B, uint64(v)) }

// Bool appends a jute boolean.
func (e *Encoder) Bool(v bool) {
	if v {
		e.B = append(e.B, 1)
	} else {
		e.B = append(e.B, 0)
	}
}

// Buffer appends a jute buffer; nil is written as length -1.
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(b)))
	e.B = append(e.B, b...)
}

// String appends a jute ustring.
func (e *Encoder) String(s string) {
	e.Int(int32(len(s)))
	e.B = append(e.B, s...)
}

// NullableString appends a jute ustring; nil is written as length -1.
func (e *Encoder) NullableString(s *string) {
	if s == nil {
		e.Int(-1)
		return
	}
	e.String(*s)
}

// Strings appends a vector of ustrings; nil is written as count -1.
func (e *Encoder) Strings(v []string) {
	if v == nil {
		e.Int(-1)
		return
	}
	e.Int(int32(len(v)))
	for _, s := range v {
		e.String(s)
	}
}

// Record is a jute record: it appends itself to an Encoder and reads
// itself from a Decoder.
type Record interface {
	Encode(e *Encoder)
	Decode(d *Decoder)
}

// Unmarshal decodes r from b, which it must fill exactly.
func Unmarshal(b []byte, r Record) error {
	d := NewDecoder(b)
	r.Decode(d)
	if d.err != nil {
		return d.err
	}
	if d.Len() != 0 {
		return ErrTrailing
	}
	return nil
}

// Marshal appends the encoding of the records to dst.
func Marshal(dst []byte, rs ...Record) []byte {
	e := Encoder{B: dst}
	for _, r := range rs {
		if r != nil {
			r.Encode(&e)
		}
	}
	return e.B
}
