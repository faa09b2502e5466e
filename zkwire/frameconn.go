package zkwire

import (
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// FrameOut receives what the server sends on a FrameConn. Its methods are
// called with zkmem's lock held, in the server's order: they must not
// block or call the server.
type FrameOut interface {
	// Frame is one frame the server sends, length prefix included. The
	// slice is the callee's.
	Frame(b []byte)
	// Close: the server closes the connection after the frames sent so
	// far. It is called once.
	Close()
}

// FrameConn is a client connection whose frames its owner carries, one at
// a time, instead of the Server's goroutines reading and writing a
// net.Conn: a deterministic simulator hands it each frame the client sent
// when it decides the server reads it, and gets the server's frames through
// a FrameOut, to deliver when it decides. The server logic is the one every
// connection runs: the handshake, requests through zkmem.Session.Do,
// notifications in the server's order, faults realised by closing the
// connection. There is no read timeout: the owner decides when a silent
// session expires (through zkmem's Control). Four-letter words are not
// answered. Its client's address, the session's "ip" identity, is
// zkmem.DefaultClientAddr (127.0.0.1).
//
// Only one goroutine at a time may call its methods.
type FrameConn struct {
	c       *conn
	started bool
	over    bool
}

// NewFrameConn returns a connection of s whose frames its caller carries:
// out gets what the server sends. On a server of NewEnsemble it is a
// connection to the server's own port (its session on the leader).
func (s *Server) NewFrameConn(out FrameOut) *FrameConn { return s.newFrameConn(out, -1) }

// NewFrameConnAt returns a connection to member i's port of a server of
// NewEnsemble, as NewFrameConn does: its handshake opens or resumes the
// session on member i by ZooKeeper's rules (see NewEnsemble), a refusal
// closing the connection without an answer (Refused says why). It fails
// for a server of New or a member that does not exist.
func (s *Server) NewFrameConnAt(i int, out FrameOut) (*FrameConn, error) {
	if err := s.checkMember(i); err != nil {
		return nil, err
	}
	return s.newFrameConn(out, i), nil
}

func (s *Server) newFrameConn(out FrameOut, member int) *FrameConn {
	c := &conn{
		srv:    s,
		seq:    connSeq.Add(1),
		remote: "frames",
		from:   zkmem.DefaultClientAddr,
		member: member,
		since:  time.Now(),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		out:    out,
		stats:  newCnxnStats(),
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		c.close()
		return &FrameConn{c: c, over: true}
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return &FrameConn{c: c}
}

// SetReplyHook makes hook see every reply, request and response, before
// it is encoded (with zkmem's lock held; it must not call the server). A
// simulator orders or shuffles a getChildren reply's names there, and reads
// the outcome for its trace. Call it before Serve.
func (fc *FrameConn) SetReplyHook(hook func(*zkmem.Request, *zkmem.Response)) { fc.c.hook = hook }

// Serve runs one frame the client sent, body without its length prefix:
// the first is the handshake's ConnectRequest, the others requests. It
// reports whether the connection goes on; once it has not, the connection
// is over (the server closed it, and told out) and Serve does nothing.
func (fc *FrameConn) Serve(body []byte) bool {
	if fc.over {
		return false
	}
	c := fc.c
	var more bool
	if !fc.started {
		fc.started = true
		more = c.connect(body)
	} else {
		more = c.handle(body)
	}
	if !more {
		fc.end()
	}
	return more
}

// ServeFrame is Serve for a frame ParseFrame described: f, what
// ParseFrame(body) returned, is not decoded again. A frame given the
// handshake's place, or one ParseFrame did not decode, is served as Serve
// serves it. f's request is the server's from then on: serve it once.
func (fc *FrameConn) ServeFrame(body []byte, f *Frame) bool {
	if fc.over {
		return false
	}
	if !fc.started || !f.decoded {
		return fc.Serve(body)
	}
	c := fc.c
	start := time.Now()
	c.recv.Add(1)
	c.srv.received.Add(1)
	more := c.run(jute.RequestHeader{Xid: f.Xid, Type: f.Op}, f.req, f.reads, start)
	if !more {
		fc.end()
	}
	return more
}

// Hangup tells the server the client closed the connection: the session,
// if this is still its connection, is detached (it lives until its
// timeout). It does nothing on a connection that is over.
func (fc *FrameConn) Hangup() {
	if fc.over {
		return
	}
	fc.end()
}

// end closes the connection and detaches its session, as the reader does
// when it stops.
func (fc *FrameConn) end() {
	fc.over = true
	c := fc.c
	c.close()
	if ws := c.sess.Load(); ws != nil {
		ws.detach(c)
	}
	c.srv.forget(c)
}

// Over reports whether the connection is over.
func (fc *FrameConn) Over() bool { return fc.over }

// Refused returns the error the handshake closed the connection with,
// without an answer (the client tries another server):
// zkmem.ErrZxidAhead from a server or member that has not applied the last
// zxid the client saw, zkmem.ErrNoMember from a member that does not take
// the client. It is nil before the handshake, after an answered one (an
// expired session's answer included), and after a handshake that did not
// decode.
func (fc *FrameConn) Refused() error { return fc.c.refused }

// Session returns the zkmem session the handshake opened or resumed, nil
// before a successful handshake.
func (fc *FrameConn) Session() *zkmem.Session { return fc.c.zs }

// Frame is a request frame as the server reads it: the header and what it
// asks, as zkmem's request descriptor.
type Frame struct {
	Xid int32
	// Op is the wire op code (jute.OpCreate2, jute.OpPing, ...).
	Op int32
	// Request is what it asks (for a multiRead, its first read, with Op
	// zkmem.OpMultiRead). Its Op is zkmem.OpAny for an op zkmem does not
	// run (an unknown code).
	Request zkmem.Request

	// What ServeFrame runs, as ParseFrame decoded it: decoded is false
	// for a frame ParseFrame could not describe fully (ServeFrame then
	// decodes the body as Serve does).
	decoded bool
	req     *zkmem.Request
	reads   []*zkmem.Request
}

// ParseFrame decodes a request frame's body (not a handshake's): ok is
// false for a body the server would answer MarshallingError or close the
// connection on (the server decides; ParseFrame only describes).
func ParseFrame(body []byte) (f Frame, ok bool) {
	d := jute.NewDecoder(body)
	var h jute.RequestHeader
	h.Decode(d)
	if d.Err() != nil {
		return f, false
	}
	f.Xid, f.Op = h.Xid, h.Type
	if !validOp(h.Type) {
		return f, true
	}
	req, reads, ok := decodeRequest(h.Type, d)
	if !ok {
		return f, false
	}
	f.decoded, f.req, f.reads = true, req, reads
	switch {
	case req != nil:
		f.Request = *req
	case len(reads) > 0:
		f.Request = *reads[0]
		f.Request.Op = zkmem.OpMultiRead
	default:
		f.Request.Op = zkmem.OpMultiRead
	}
	return f, true
}

// enqueueFrame hands a frame to the owner of a FrameConn's connection.
func (c *conn) enqueueFrame(b []byte, closeAfter bool) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	if closeAfter {
		c.closing = true
	}
	c.mu.Unlock()
	c.sent.Add(1)
	c.srv.sent.Add(1)
	c.out.Frame(b)
	if closeAfter {
		c.close()
	}
}
