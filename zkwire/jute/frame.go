package jute

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxBuffer is jute.maxbuffer's default: the largest frame a server
// accepts, 0xfffff bytes.
const DefaultMaxBuffer = 0xfffff

// ErrFrameTooLarge is returned by ReadFrame for a frame length that is
// negative or over the maximum. A server closes the connection on it.
var ErrFrameTooLarge = errors.New("jute: frame length out of range")

// ReadFrameLength reads the 4-byte length that starts every frame.
func ReadFrameLength(r io.Reader) (int32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b[:])), nil
}

// ReadFrameBody reads the n bytes of a frame whose length ReadFrameLength
// returned, after checking n against max as the server does (a length below
// 0 or over max is ErrFrameTooLarge). It reuses buf when it is large enough.
// A frame cut short is io.ErrUnexpectedEOF.
func ReadFrameBody(r io.Reader, n int32, max int, buf []byte) ([]byte, error) {
	if n < 0 || int(n) > max {
		return nil, fmt.Errorf("%w: %d (max %d)", ErrFrameTooLarge, n, max)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF && n > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// ReadFrame reads one length-prefixed frame (see ReadFrameBody).
func ReadFrame(r io.Reader, max int, buf []byte) ([]byte, error) {
	n, err := ReadFrameLength(r)
	if err != nil {
		return nil, err
	}
	return ReadFrameBody(r, n, max, buf)
}

// frameCap is the capacity a new frame starts with: most replies (a
// header, a Stat, a little data) fit, so the frame is one allocation, not
// one per doubling.
const frameCap = 128

// AppendFrame appends a frame holding the encoding of the records.
func AppendFrame(dst []byte, rs ...Record) []byte {
	if dst == nil {
		dst = make([]byte, 0, frameCap)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = Marshal(dst, rs...)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// AppendReply appends a reply frame: h, then body (nil for none). It is
// AppendFrame(dst, &h, body) without h leaving the caller's stack.
func AppendReply(dst []byte, h ReplyHeader, body Record) []byte {
	if dst == nil {
		dst = make([]byte, 0, frameCap)
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Xid))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Zxid))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Err))
	if body != nil {
		dst = Marshal(dst, body)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}
